// Error checking as CUDA programs usually write it.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            fprintf(stderr, "CUDA error %s (%s) at %s:%d: %s\n", cudaGetErrorName(err_), \
                    cudaGetErrorString(err_), __FILE__, __LINE__, #call);            \
            exit(EXIT_FAILURE);                                                      \
        }                                                                            \
    } while (0)
