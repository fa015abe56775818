// 28_reduction.cu  (whole program: host code + kernel)
// Exercises: parallel sum reduction: grid-stride accumulation, shared-memory
// tree reduction with halving stride, final warp-level stage with
// __shfl_down_sync, one atomicAdd per block (atom.global.add.f32),
// dynamic shared memory size given at launch (<<<grid, block, bytes>>>).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void reduce_sum(const float *in, float *out, int n)
{
    extern __shared__ float sdata[];
    int tid = threadIdx.x;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
        sum += in[i];
    sdata[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        float v = sdata[tid];
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (tid == 0) atomicAdd(out, v);
    }
}

int main()
{
    const int n = 1 << 16;
    float *h = new float[n];
    for (int i = 0; i < n; ++i) h[i] = (float)(i & 15);
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, sizeof(float));
    cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0, sizeof(float));
    int block = 256, grid = 64;
    reduce_sum<<<grid, block, block * sizeof(float)>>>(d_in, d_out, n);
    float result = 0.0f;
    cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost);
    printf("sum = %f (expected %f)\n", result, 7.5f * n);
    cudaFree(d_in); cudaFree(d_out);
    delete[] h;
    return 0;
}
