// CUDA-4-era runtime code: cudaThreadSynchronize (removed in CUDA 13) after the launch.
#include <stdio.h>
#include <cuda.h>
#include "legacy.h"

__global__ void square(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * x[i];
}

extern "C" int gpu_square(float *x, int n)
{
    float *d;
    cudaError_t err = cudaMalloc((void **)&d, n * sizeof(float));
    if (err != cudaSuccess)
        return err;
    cudaMemcpy(d, x, n * sizeof(float), cudaMemcpyHostToDevice);
    square<<<(n + 127) / 128, 128>>>(d, n);
    err = cudaThreadSynchronize();
    if (err == cudaSuccess)
        err = cudaMemcpy(x, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d);
    return err;
}
