// Several kernels in a pipeline: fill, saxpy, a two-pass block reduction, then a
// second reduction over the partial sums; the result is checked on the CPU.
#include <cmath>
#include <cstdio>
#include "check.h"

__global__ void fill(float *x, int n, float start, float step)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = start + step * i;
}

__global__ void saxpy(float a, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void blockSum(const float *in, float *out, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

int main()
{
    const int n = 10000, threads = 256, blocks = (n + threads - 1) / threads;
    float *x, *y, *partial, *total;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMalloc(&partial, blocks * sizeof(float)));
    CHECK(cudaMalloc(&total, sizeof(float)));
    fill<<<blocks, threads>>>(x, n, 0.0f, 0.001f);
    fill<<<blocks, threads>>>(y, n, 1.0f, 0.0f);
    saxpy<<<8, 128>>>(2.0f, x, y, n);
    blockSum<<<blocks, threads>>>(y, partial, n);
    blockSum<<<1, threads>>>(partial, total, blocks);
    CHECK(cudaGetLastError());
    float got;
    CHECK(cudaMemcpy(&got, total, sizeof(float), cudaMemcpyDeviceToHost));
    double want = 0;
    for (int i = 0; i < n; ++i) want += 2.0 * (0.001f * i) + 1.0;
    printf("sum = %.3f (expected %.3f)\n", got, want);
    CHECK(cudaFree(x)); CHECK(cudaFree(y)); CHECK(cudaFree(partial)); CHECK(cudaFree(total));
    bool ok = fabs(got - want) / want < 1e-4;
    printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
