// A kernel declared with __launch_bounds__(128): a launch of 256-thread blocks fails
// (cudaErrorInvalidValue, as CUDA 13 on an H200 answers; nothing runs), one of 128 runs, and
// cudaFuncGetAttributes reports the bound as maxThreadsPerBlock.
#include <cstdio>
#include "check.h"

__global__ void __launch_bounds__(128) fill(int *x, int v)
{
    x[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main()
{
    int *d, h[256];
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemset(d, 0, sizeof h));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, fill));
    printf("maxThreadsPerBlock %d\n", attr.maxThreadsPerBlock);
    fill<<<1, 256>>>(d, 7);
    cudaError_t too_big = cudaGetLastError();
    printf("256 threads: %s\n", cudaGetErrorName(too_big));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int untouched = h[0] == 0 && h[255] == 0;
    fill<<<2, 128>>>(d, 5);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int filled = h[0] == 5 && h[255] == 5;
    int ok = attr.maxThreadsPerBlock == 128 && too_big == cudaErrorInvalidValue && untouched && filled;
    printf("%s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
