// Reads one element before its array (as Rodinia's srad_v2 reads the row above row 0):
// undefined in CUDA, and a GPU usually returns whatever lies there. tlpsim faults by
// default; `tlpsim exec --oob-reads zero` lets such loads read 0.
#include <cstdio>
#include "check.h"

__global__ void previous(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i - 1];  // i = 0 reads in[-1]
}

int main()
{
    const int n = 64;
    float h[n], *in, *out;
    for (int i = 0; i < n; i++)
        h[i] = float(i + 1);
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    previous<<<1, n>>>(in, out, n);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("kernel failed: %s\n", cudaGetErrorName(err));
        return 1;
    }
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    int bad = h[0] != 0.0f;
    for (int i = 1; i < n; i++)
        bad += h[i] != float(i);
    printf("out[0] = %g, out[1..%d] = in[0..%d]: %s\n", h[0], n - 1, n - 2, bad ? "FAIL" : "PASS");
    return bad != 0;
}
