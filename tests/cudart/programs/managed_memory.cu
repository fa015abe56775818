// Unified memory: cudaMallocManaged buffers and a __managed__ variable read and
// written by both the host and kernels without explicit copies; mapped pinned
// memory (cudaHostAlloc + cudaHostGetDevicePointer) written by a kernel.
#include <cstdio>
#include "check.h"

__managed__ int total;

__global__ void accumulate(const int *v, int n, int *mapped)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&total, v[i]);
        mapped[i] = 2 * v[i];
    }
}

int main()
{
    const int n = 777;
    int *v, *host, *mapped;
    CHECK(cudaMallocManaged(&v, n * sizeof(int)));
    CHECK(cudaHostAlloc(&host, n * sizeof(int), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
    long long want = 0;
    for (int i = 0; i < n; ++i) { v[i] = i % 9; want += v[i]; }
    total = 100;
    accumulate<<<(n + 63) / 64, 64>>>(v, n, mapped);
    CHECK(cudaDeviceSynchronize());
    int errors = total != 100 + want;
    for (int i = 0; i < n; ++i) errors += host[i] != 2 * v[i];
    printf("managed total %d (expected %lld), errors %d\n", total, 100 + want, errors);
    CHECK(cudaFree(v));
    CHECK(cudaFreeHost(host));
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}
