// printf inside kernels: formats of every kind, output from several blocks, and
// CUDA's flush points (the output appears at the next synchronisation, after the
// host line printed before it).
#include <cstdio>
#include "check.h"

__global__ void hello(int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        printf("block %d thread %d: %5.2f|%-4d|%x|%c|%s|%lld\n", blockIdx.x, threadIdx.x, i * 0.5, i, 255 + i,
               'a' + i, i % 2 ? "odd" : "even", (long long)i << 33);
}

int main()
{
    hello<<<2, 2>>>(4);
    CHECK(cudaGetLastError());
    printf("host: before synchronize\n");
    CHECK(cudaDeviceSynchronize());
    printf("host: after synchronize\n");
    printf("PASS\n");
    return 0;
}
