// Template kernels and functors instantiated for several types, launched through
// a templated host helper; integer, float and double results checked exactly.
#include <cstdio>
#include "check.h"

struct Square { template <typename T> __host__ __device__ T operator()(T v) const { return v * v; } };
struct Negate { template <typename T> __host__ __device__ T operator()(T v) const { return -v; } };

template <typename T, typename Op>
__global__ void transform(const T *in, T *out, int n, Op op)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = op(in[i]);
}

template <typename T, int Block>
__global__ void sumBlocks(const T *in, T *out, int n)
{
    __shared__ T s[Block];
    int i = blockIdx.x * Block + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    if (threadIdx.x == 0) {
        T acc = 0;
        for (int k = 0; k < Block; ++k) acc += s[k];
        out[blockIdx.x] = acc;
    }
}

template <typename T, typename Op>
int check(const char *what, Op op)
{
    const int n = 300, block = 64, blocks = (n + block - 1) / block;
    T h[n], r[n], partial[blocks];
    for (int i = 0; i < n; ++i) h[i] = T(i % 11) - T(5);
    T *din, *dout, *dpart;
    CHECK(cudaMalloc(&din, sizeof(h)));
    CHECK(cudaMalloc(&dout, sizeof(h)));
    CHECK(cudaMalloc(&dpart, sizeof(partial)));
    CHECK(cudaMemcpy(din, h, sizeof(h), cudaMemcpyHostToDevice));
    transform<T, Op><<<blocks, block>>>(din, dout, n, op);
    sumBlocks<T, 64><<<blocks, block>>>(dout, dpart, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(r, dout, sizeof(r), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(partial, dpart, sizeof(partial), cudaMemcpyDeviceToHost));
    int errors = 0;
    T total = 0, want = 0;
    for (int i = 0; i < n; ++i) { errors += r[i] != Op()(h[i]); want += Op()(h[i]); }
    for (int b = 0; b < blocks; ++b) total += partial[b];
    errors += total != want;
    printf("%-14s errors %d\n", what, errors);
    CHECK(cudaFree(din)); CHECK(cudaFree(dout)); CHECK(cudaFree(dpart));
    return errors;
}


int main()
{
    int errors = check<int, Square>("int square", Square()) + check<float, Square>("float square", Square())
               + check<double, Negate>("double negate", Negate()) + check<long long, Negate>("int64 negate", Negate());
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}
