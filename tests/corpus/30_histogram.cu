// 30_histogram.cu  (whole program: host code + kernel)
// Exercises: 256-bin byte histogram with per-block privatised shared-memory
// bins (atom.shared.add), uchar4 vectorised loads, grid-stride loop,
// merge to global with atomicAdd (atom.global.add), cudaMemset.
#include <cstdio>
#include <cuda_runtime.h>

#define BINS 256

__global__ void histogram256(const uchar4 *data, int n4, unsigned *hist)
{
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        uchar4 v = data[i];
        atomicAdd(&local[v.x], 1u);
        atomicAdd(&local[v.y], 1u);
        atomicAdd(&local[v.z], 1u);
        atomicAdd(&local[v.w], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned c = local[b];
        if (c) atomicAdd(&hist[b], c);
    }
}

int main()
{
    const int n = 1 << 14;                        // bytes
    unsigned char *h = new unsigned char[n];
    for (int i = 0; i < n; ++i) h[i] = (unsigned char)((i * 37) ^ (i >> 3));
    unsigned char *d_data;
    unsigned *d_hist;
    cudaMalloc(&d_data, n);
    cudaMalloc(&d_hist, BINS * sizeof(unsigned));
    cudaMemcpy(d_data, h, n, cudaMemcpyHostToDevice);
    cudaMemset(d_hist, 0, BINS * sizeof(unsigned));
    histogram256<<<32, 128>>>(reinterpret_cast<const uchar4 *>(d_data), n / 4, d_hist);
    unsigned hh[BINS];
    cudaMemcpy(hh, d_hist, sizeof(hh), cudaMemcpyDeviceToHost);
    unsigned total = 0;
    for (int b = 0; b < BINS; ++b) total += hh[b];
    printf("total = %u (expected %d)\n", total, n);
    cudaFree(d_data); cudaFree(d_hist);
    delete[] h;
    return 0;
}
