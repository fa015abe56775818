// The scaling half of the separate-compilation test: its own kernel and constant.
#include "kernels.h"
#include "../check.h"

__constant__ float factor;

__device__ float weight(int i) { return 0.25f * (1 + (i & 1)); }

__global__ void scale(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}

void setScale(float s) { CHECK(cudaMemcpyToSymbol(factor, &s, sizeof(s))); }

void launchScale(float *x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
