// Shared by the device microbenchmarks in this folder: a CUDA error check that names the
// call's place and makes main return 1, and the SM's 32-bit cycle counter.
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_),      \
                    __FILE__, __LINE__);                                             \
            return 1;                                                                \
        }                                                                            \
    } while (0)

__device__ __forceinline__ unsigned int read_clock()
{
    unsigned int c;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(c));
    return c;
}
