/* C host code of the CUDA-4 era: device properties CUDA 13 removed, cudaThread* calls. */
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "legacy.h"

#define N 1000

int main(void)
{
    struct cudaDeviceProp prop;
    int clock_attr = -1, bad = 0, i;
    float x[N];
    size_t stack = 0;

    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        printf("FAIL: cudaGetDeviceProperties\n");
        return 1;
    }
    cudaDeviceGetAttribute(&clock_attr, cudaDevAttrClockRate, 0);
    printf("clockRate %d kHz (attribute %d)\n", prop.clockRate, clock_attr);
    printf("memoryClockRate %d kHz\n", prop.memoryClockRate);
    printf("deviceOverlap %d kernelExecTimeoutEnabled %d computeMode %d\n", prop.deviceOverlap,
           prop.kernelExecTimeoutEnabled, prop.computeMode);
    printf("maxTexture1DLinear %d\n", prop.maxTexture1DLinear);
    if (cudaThreadGetLimit(&stack, cudaLimitStackSize) != cudaSuccess || stack == 0) {
        printf("FAIL: cudaThreadGetLimit\n");
        return 1;
    }
    for (i = 0; i < N; i++)
        x[i] = (float)(i % 17) - 8.0f;
    if (gpu_square(x, N) != 0) {
        printf("FAIL: gpu_square\n");
        return 1;
    }
    for (i = 0; i < N; i++) {
        float v = (float)(i % 17) - 8.0f;
        if (x[i] != v * v)
            bad++;
    }
    cudaThreadSynchronize();
    cudaThreadExit();
    printf("%s\n", bad || prop.clockRate != clock_attr || prop.clockRate <= 0 ? "FAIL" : "PASS");
    return bad != 0;
}
