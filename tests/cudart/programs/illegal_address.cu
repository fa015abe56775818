// A kernel that writes far past the end of its buffer. As on a GPU, the launch
// itself succeeds, the next synchronising call returns cudaErrorIllegalAddress,
// the error is sticky (later calls return it too) until cudaDeviceReset, and the
// program handles it: it prints PASS when every step saw what CUDA guarantees.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void overrun(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i * 4096] = i;  // thread 5 onwards writes outside the allocation
}

int main()
{
    int *d = nullptr;
    if (cudaMalloc(&d, 16 * 1024 * sizeof(int)) != cudaSuccess) return 2;
    overrun<<<1, 32>>>(d, 16 * 1024);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    printf("launch: %s\n", cudaGetErrorName(launch));
    printf("synchronize: %s (%s)\n", cudaGetErrorName(sync), cudaGetErrorString(sync));
    int h = 0;
    cudaError_t copy = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    cudaError_t last = cudaGetLastError();
    printf("copy after the fault: %s; last error: %s\n", cudaGetErrorName(copy), cudaGetErrorName(last));
    cudaError_t reset = cudaDeviceReset();
    cudaError_t after = cudaGetLastError();
    printf("reset: %s, then: %s\n", cudaGetErrorName(reset), cudaGetErrorName(after));
    bool ok = sync == cudaErrorIllegalAddress && copy == cudaErrorIllegalAddress && last == cudaErrorIllegalAddress
              && reset == cudaSuccess && after == cudaSuccess;
    printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
