// A bug in the host code after a correct CUDA run: a write through a NULL pointer
// kills the process with SIGSEGV.
#include <cstdio>
#include "check.h"

__global__ void one(int *p) { *p = 1; }

int main()
{
    int *d;
    CHECK(cudaMalloc(&d, sizeof(int)));
    one<<<1, 1>>>(d);
    CHECK(cudaDeviceSynchronize());
    printf("kernel done\n");
    fflush(stdout);
    volatile int *null = nullptr;
    *null = 42;
    return 0;
}
