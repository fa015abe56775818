// The stencil half of the separate-compilation test, with main().
#include <cstdio>
#include "kernels.h"
#include "../check.h"

__global__ void stencil(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= 0 || i >= n - 1) return;
#ifdef USE_RDC
    out[i] = weight(i - 1) * in[i - 1] + weight(i) * in[i] + weight(i + 1) * in[i + 1];
#else
    out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
#endif
}

void launchStencil(const float *in, float *out, int n, cudaStream_t stream)
{
    stencil<<<(n + 127) / 128, 128, 0, stream>>>(in, out, n);
}

int main()
{
    const int n = 1000;
    float h[n], r[n];
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 10);
    float *din, *dout;
    CHECK(cudaMalloc(&din, sizeof(h)));
    CHECK(cudaMalloc(&dout, sizeof(h)));
    CHECK(cudaMemcpy(din, h, sizeof(h), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dout, 0, sizeof(h)));
    launchStencil(din, dout, n, 0);
    setScale(4.0f);
    launchScale(dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(r, dout, sizeof(r), cudaMemcpyDeviceToHost));
    int errors = 0;
    for (int i = 1; i < n - 1; ++i) {
#ifdef USE_RDC
        float want = 4.0f * (0.25f * (1 + ((i - 1) & 1)) * h[i - 1] + 0.25f * (1 + (i & 1)) * h[i]
                             + 0.25f * (1 + ((i + 1) & 1)) * h[i + 1]);
#else
        float want = 4.0f * (0.25f * h[i - 1] + 0.5f * h[i] + 0.25f * h[i + 1]);
#endif
        if (r[i] != want) ++errors;
    }
    printf("separate compilation: %d errors\n", errors);
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}
