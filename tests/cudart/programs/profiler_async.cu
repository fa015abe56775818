// Host-side calls NVIDIA's samples make around their kernels: the profiler API
// (cuda_profiler_api.h, from the nvidia-cuda-profiler-api wheel), a non-blocking
// stream, pinned memory, asynchronous copies, and polling an event until the GPU
// is done (cudaEventQuery returns cudaErrorNotReady while work is pending).
#include <cstdio>
#include <cuda_profiler_api.h>
#include "check.h"

__global__ void addOne(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1;
}

int main()
{
    const int n = 4096;
    int *h, *d;
    CHECK(cudaMallocHost(&h, n * sizeof(int)));
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    for (int i = 0; i < n; ++i) h[i] = i;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaProfilerStart());
    CHECK(cudaEventRecord(start, s));
    CHECK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, s));
    addOne<<<n / 256, 256, 0, s>>>(d, n);
    CHECK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaEventRecord(stop, s));
    unsigned long polls = 0;
    cudaError_t q;
    while ((q = cudaEventQuery(stop)) == cudaErrorNotReady) ++polls;
    CHECK(q);
    CHECK(cudaProfilerStop());
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += h[i] != i + 1;
    printf("elapsed %s, %d wrong\n", ms >= 0 ? "measured" : "negative", bad);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    printf(bad == 0 && ms >= 0 ? "PASS\n" : "FAIL\n");
    return bad ? 1 : 0;
}
