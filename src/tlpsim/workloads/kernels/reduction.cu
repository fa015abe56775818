// Parallel sum reduction in two launches (SDK "reduction" style):
//   reduce_partial: each thread sums a grid-strided slice of the input, then the CTA
//                   combines its 256 values with a shared-memory tree (one barrier per
//                   level) down to 64 values, and the last warp finishes with shuffles;
//                   thread 0 writes one partial sum per CTA.
//   reduce_final:   a single CTA reduces the partial sums the same way.
#define BLOCK 256

__device__ __forceinline__ float block_sum(float v, float* sdata) {
    const unsigned tid = threadIdx.x;
    sdata[tid] = v;
    __syncthreads();
#pragma unroll
    for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        v = sdata[tid] + sdata[tid + 32];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;  // meaningful in thread 0
}

__device__ __forceinline__ float strided_sum(const float* __restrict__ in, int n) {
    float v = 0.0f;
    const int stride = gridDim.x * BLOCK;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) v += in[i];
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_partial(const float* __restrict__ in, float* __restrict__ partial, int n) {
    __shared__ float sdata[BLOCK];
    float v = block_sum(strided_sum(in, n), sdata);
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_final(const float* __restrict__ partial, float* __restrict__ out, int n) {
    __shared__ float sdata[BLOCK];
    float v = block_sum(strided_sum(partial, n), sdata);  // launched with one CTA
    if (threadIdx.x == 0) out[0] = v;
}
