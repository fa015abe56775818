// 19_atomics_global.cu
// Exercises: atomics on global memory: atomicAdd (int, unsigned, float,
// double, unsigned long long), atomicSub, atomicMin/Max (signed, unsigned,
// 64-bit), atomicInc, atomicDec, atomicAnd/Or/Xor, atomicExch (int, float,
// 64-bit), atomicCAS (32 and 64-bit); return values used and unused
// (CUDA 13.5 nvcc emits atom.* with a dead destination for unused results;
// red.* is only formed later by ptxas, see 40_asm_brx_red.cu for red in PTX);
// block/system scoped variants (atom.global.cta / atom.global.sys).

__global__ void atomics_used(int *ci, unsigned *cu, float *cf, double *cd,
                             unsigned long long *cull, long long *cll, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int r = 0;
    r += atomicAdd(&ci[0], 1);
    r += (int)atomicAdd(&cu[0], 2u);
    r += (int)atomicAdd(&cf[0], 0.5f);
    r += (int)atomicAdd(&cd[0], 0.25);
    r += (int)atomicAdd(&cull[0], 3ull);
    r += atomicSub(&ci[1], 1);
    r += atomicMin(&ci[2], i) + atomicMax(&ci[3], -i);
    r += (int)atomicMin(&cu[1], (unsigned)i) + (int)atomicMax(&cu[2], (unsigned)i);
    r += (int)atomicMin(&cll[0], (long long)-i) + (int)atomicMax(&cull[1], (unsigned long long)i);
    r += (int)atomicInc(&cu[3], 15u) + (int)atomicDec(&cu[4], 15u);
    r += atomicAnd(&ci[4], ~i) + atomicOr(&ci[5], 1 << (i & 31)) + atomicXor(&ci[6], i);
    r += atomicExch(&ci[7], i) + (int)atomicExch(&cf[1], (float)i);
    r += (int)atomicExch(&cull[2], (unsigned long long)i);
    r += atomicCAS(&ci[8], i - 1, i);
    r += (int)atomicCAS(&cull[3], (unsigned long long)i, (unsigned long long)i + 1);
    out[i] = r;
}

__global__ void atomics_unused(int *ci, unsigned *cu, float *cf, double *cd,
                               unsigned long long *cull, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&ci[0], 1);                 // result unused (dead atom dest)
    atomicAdd(&cf[0], 1.0f);
    atomicAdd(&cd[0], 1.0);
    atomicAdd(&cull[0], 1ull);
    atomicMin(&ci[1], i);
    atomicMax(&cu[1], (unsigned)i);
    atomicOr(&ci[2], 1 << (i & 31));
    atomicAnd(&cu[2], ~(1u << (i & 31)));
    atomicXor(&ci[3], i);
    atomicInc(&cu[3], 100u);
    atomicSub(&ci[4], 2);
    atomicAdd_block(&ci[5], 1);           // .cta scope
    atomicAdd_system(&ci[6], 1);          // .sys scope
}
