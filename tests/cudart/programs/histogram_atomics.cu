// A 64-bin histogram with per-block shared-memory histograms merged into global
// memory with atomics; grid-stride loop; result checked on the CPU.
#include <cstdio>
#include <vector>
#include "check.h"

#define BINS 64

__global__ void histogram(const unsigned char *data, int n, unsigned int *bins)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

int main()
{
    const int n = 50000;
    std::vector<unsigned char> data(n);
    unsigned int seed = 12345;
    for (int i = 0; i < n; ++i) { seed = seed * 1103515245u + 12345u; data[i] = (unsigned char)(seed >> 16); }
    unsigned char *d;
    unsigned int *bins;
    CHECK(cudaMalloc(&d, n));
    CHECK(cudaMalloc(&bins, BINS * sizeof(unsigned int)));
    CHECK(cudaMemcpy(d, data.data(), n, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(bins, 0, BINS * sizeof(unsigned int)));
    histogram<<<16, 128>>>(d, n, bins);
    CHECK(cudaGetLastError());
    unsigned int got[BINS], want[BINS] = {0};
    CHECK(cudaMemcpy(got, bins, sizeof(got), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) want[data[i] % BINS]++;
    int errors = 0;
    for (int b = 0; b < BINS; ++b) errors += got[b] != want[b];
    printf("%d bins wrong\n", errors);
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}
