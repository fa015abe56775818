// Interface between the two translation units of the separate-compilation test.
#pragma once
#include <cuda_runtime.h>

// stencil.cu
void launchStencil(const float *in, float *out, int n, cudaStream_t stream);
// scale.cu (its own __constant__ and kernels, registered from its own fat binary)
void setScale(float s);
void launchScale(float *x, int n);
// with -rdc=true: a __device__ function defined in scale.cu, called from stencil.cu
__device__ float weight(int i);
