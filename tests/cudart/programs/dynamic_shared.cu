// Dynamic shared memory: a block reduction whose scratch array size is chosen at
// launch (extern __shared__), including more than the default 48 KiB after
// cudaFuncSetAttribute, and a launch that asks for too much and must fail.
#include <cstdio>
#include "check.h"

__global__ void reduce(const int *in, int *out, int n)
{
    extern __shared__ int scratch[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    scratch[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, scratch[0]);
}

int main()
{
    const int n = 4096;
    int h[n];
    long long want = 0;
    for (int i = 0; i < n; ++i) { h[i] = (i * 7) % 13 - 6; want += h[i]; }
    int *din, *dout;
    CHECK(cudaMalloc(&din, sizeof(h)));
    CHECK(cudaMalloc(&dout, sizeof(int)));
    CHECK(cudaMemcpy(din, h, sizeof(h), cudaMemcpyHostToDevice));
    int errors = 0;
    for (int threads = 64; threads <= 512; threads *= 2) {
        CHECK(cudaMemset(dout, 0, sizeof(int)));
        reduce<<<n / threads, threads, threads * sizeof(int)>>>(din, dout, n);
        CHECK(cudaGetLastError());
        int got;
        CHECK(cudaMemcpy(&got, dout, sizeof(int), cudaMemcpyDeviceToHost));
        printf("%3d threads, %4zu bytes of dynamic shared memory: sum %d\n", threads, threads * sizeof(int), got);
        errors += got != want;
    }
    // more than 48 KiB needs the opt-in, and the device's limit is the ceiling
    reduce<<<1, 64, 64 * 1024>>>(din, dout, n);
    cudaError_t refused = cudaGetLastError();
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("over 48 KiB without opt-in: %s; device opt-in limit %zu bytes\n", cudaGetErrorName(refused),
           prop.sharedMemPerBlockOptin);
    errors += refused != cudaErrorInvalidValue;
    // the shared-memory carveout preference is kept and read back (-1, none, until set)
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, reduce));
    int before = fa.preferredShmemCarveout;
    CHECK(cudaFuncSetAttribute(reduce, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
    CHECK(cudaFuncGetAttributes(&fa, reduce));
    printf("carveout preference: %d, then %d\n", before, fa.preferredShmemCarveout);
    errors += before != -1 || fa.preferredShmemCarveout != 50;
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}
