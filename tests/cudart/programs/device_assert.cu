// A failing device-side assert: CUDA prints the assertion and the program's next
// call returns cudaErrorAssert, which this program reports as its own failure.
#include <cassert>
#include <cstdio>
#include "check.h"

__global__ void positive(const int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(v[i] >= 0);
}

int main()
{
    int h[8] = {1, 2, 3, 4, -5, 6, 7, 8};
    int *d;
    CHECK(cudaMalloc(&d, sizeof(h)));
    CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
    positive<<<1, 8>>>(d, 8);
    CHECK(cudaDeviceSynchronize());  // exits with the CUDA error
    printf("unreachable\n");
    return 0;
}
