// 40_asm_brx_red.cu
// Exercises (via inline PTX, because CUDA 13.5 nvcc never emits these from
// plain CUDA C: it lowers switches to compare trees and emits atom.* even
// when an atomic's result is unused, leaving red.* formation to ptxas):
//   - an indirect jump table: .branchtargets + brx.idx, labels in an asm block
//   - red.global.add.u32 / red.global.add.f32 / red.add.u32 (generic),
//     red.shared.add.u32, red.shared.max.s32 (no destination register)
//   - memory-model qualified ops: atom.relaxed.gpu, ld.acquire.gpu,
//     st.release.gpu, fence.acq_rel.gpu, fence.sc.cta

__device__ __noinline__ int jump_table(unsigned sel, int x)
{
    int r;   // one copy only (__noinline__): asm labels are unique per function
    asm("{\n\t"
        ".reg .u32 idx;\n\t"
        "min.u32 idx, %1, 3;\n\t"
        "jt_targets: .branchtargets jt_c0, jt_c1, jt_c2, jt_c3;\n\t"
        "brx.idx idx, jt_targets;\n"
        "jt_c0: add.s32 %0, %2, 1;\n\t"
        "bra.uni jt_done;\n"
        "jt_c1: mul.lo.s32 %0, %2, 3;\n\t"
        "bra.uni jt_done;\n"
        "jt_c2: xor.b32 %0, %2, 85;\n\t"
        "bra.uni jt_done;\n"
        "jt_c3: neg.s32 %0, %2;\n"
        "jt_done: mov.u32 idx, 0;\n\t"        // join point: a label needs an instruction
        "}"
        : "=r"(r) : "r"(sel), "r"(x));
    return r;
}

__global__ void switch_brx(const unsigned *sel, const int *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = jump_table(sel[i], a[i]);
}

__global__ void red_and_memory_model(const int *in, unsigned *gcount, float *gsum,
                                     unsigned *gflag, int *out, int n)
{
    __shared__ unsigned s_count;
    __shared__ int s_max;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) { s_count = 0; s_max = -2147483647 - 1; }
    __syncthreads();
    int v = i < n ? in[i] : 0;
    unsigned s_count_addr = (unsigned)__cvta_generic_to_shared(&s_count);
    unsigned s_max_addr = (unsigned)__cvta_generic_to_shared(&s_max);
    asm volatile("red.shared.add.u32 [%0], 1;" :: "r"(s_count_addr) : "memory");
    asm volatile("red.shared.max.s32 [%0], %1;" :: "r"(s_max_addr), "r"(v) : "memory");
    asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %0; red.global.add.f32 [g], %1; }"
                 :: "l"(gsum), "f"((float)v) : "memory");
    asm volatile("red.add.u32 [%0], %1;" :: "l"(gcount + 1), "r"(2u) : "memory");   // generic
    asm volatile("fence.sc.cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned old, flag;   // global-space ops get cvta.to.global'd addresses
        asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %0; red.global.add.u32 [g], %1; }"
                     :: "l"(gcount), "r"(s_count) : "memory");
        asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %1; atom.relaxed.gpu.global.add.u32 %0, [g], 1; }"
                     : "=r"(old) : "l"(gcount + 2) : "memory");
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %0; st.release.gpu.global.u32 [g], %1; }"
                     :: "l"(gflag), "r"(old + 1) : "memory");
        asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %1; ld.acquire.gpu.global.u32 %0, [g]; }"
                     : "=r"(flag) : "l"(gflag) : "memory");
        out[blockIdx.x] = s_max + (int)flag;
    }
}
