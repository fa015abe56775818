// 20_atomics_shared.cu
// Exercises: atomics on shared memory (atom.shared.*: add int/float,
// min/max, and/or/xor, inc/dec, exch, cas), a CAS loop implementing a float
// atomic max (32-bit CAS with __float_as_int) and a double atomic multiply
// via 64-bit CAS (__double_as_longlong), shared atomics with unused results.

__device__ float atomic_max_float(float *addr, float val)
{
    int *ia = reinterpret_cast<int *>(addr);
    int old = *ia, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= val) break;
        old = atomicCAS(ia, assumed, __float_as_int(val));
    } while (assumed != old);
    return __int_as_float(old);
}

__device__ double atomic_mul_double(double *addr, double val)
{
    unsigned long long *ua = reinterpret_cast<unsigned long long *>(addr);
    unsigned long long old = *ua, assumed;
    do {
        assumed = old;
        old = atomicCAS(ua, assumed, __double_as_longlong(__longlong_as_double(assumed) * val));
    } while (assumed != old);
    return __longlong_as_double(old);
}

__global__ void atomics_shared(const float *in, float *gmax, double *gprod, int *out, int n)
{
    __shared__ int s_int[8];
    __shared__ unsigned s_u[4];
    __shared__ float s_f[2];
    __shared__ double s_d;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (t < 8) s_int[t] = 0;
    if (t < 4) s_u[t] = 0u;
    if (t < 2) s_f[t] = -1e30f;
    if (t == 0) s_d = 1.0;
    __syncthreads();
    float v = i < n ? in[i] : 0.0f;
    int old = atomicAdd(&s_int[0], 1);             // atom.shared.add
    atomicAdd(&s_f[1], v);                         // result unused
    atomicMin(&s_int[1], (int)v);
    atomicMax(&s_int[2], (int)v);
    atomicAnd(&s_int[3], ~t);
    atomicOr(&s_int[4], t);
    int x = atomicXor(&s_int[5], t);
    unsigned inc = atomicInc(&s_u[0], 31u) + atomicDec(&s_u[1], 31u);
    int ex = atomicExch(&s_int[6], t);
    int cas = atomicCAS(&s_int[7], 0, t + 1);
    atomic_max_float(&s_f[0], v);                  // CAS loop on shared
    if (t < 4) atomic_mul_double(&s_d, 1.0 + 0.001 * t);
    __syncthreads();
    if (i < n) out[i] = old + x + (int)inc + ex + cas;
    if (t == 0) {
        atomic_max_float(gmax, s_f[0]);            // CAS loop on global
        atomic_mul_double(gprod, s_d);
    }
}
