// 32_stencil2d.cu  (whole program: host code + kernel)
// Exercises: 2D 5-point Jacobi stencil with a shared-memory tile plus halo
// (halo loads by edge threads), clamped boundary handling, ping-pong
// launches in a host loop, 2D dim3 grid and block.
#include <cstdio>
#include <cuda_runtime.h>

#define BX 16
#define BY 16

__global__ void stencil5(const float *in, float *out, int w, int h, float alpha)
{
    __shared__ float s[BY + 2][BX + 2];
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    int cx = min(x, w - 1), cy = min(y, h - 1);
    int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    s[ly][lx] = in[cy * w + cx];
    if (threadIdx.x == 0)      s[ly][0]      = in[cy * w + max(cx - 1, 0)];
    if (threadIdx.x == BX - 1) s[ly][BX + 1] = in[cy * w + min(cx + 1, w - 1)];
    if (threadIdx.y == 0)      s[0][lx]      = in[max(cy - 1, 0) * w + cx];
    if (threadIdx.y == BY - 1) s[BY + 1][lx] = in[min(cy + 1, h - 1) * w + cx];
    __syncthreads();
    if (x >= w || y >= h) return;
    float c = s[ly][lx];
    float lap = s[ly][lx - 1] + s[ly][lx + 1] + s[ly - 1][lx] + s[ly + 1][lx] - 4.0f * c;
    out[y * w + x] = c + alpha * lap;
}

int main()
{
    const int w = 100, h = 70, iters = 10;
    const size_t bytes = (size_t)w * h * sizeof(float);
    float *hgrid = new float[w * h];
    for (int i = 0; i < w * h; ++i) hgrid[i] = (i % w == w / 2) ? 100.0f : 0.0f;
    float *d_a, *d_b;
    cudaMalloc(&d_a, bytes);
    cudaMalloc(&d_b, bytes);
    cudaMemcpy(d_a, hgrid, bytes, cudaMemcpyHostToDevice);
    dim3 block(BX, BY), grid((w + BX - 1) / BX, (h + BY - 1) / BY);
    for (int it = 0; it < iters; ++it) {
        stencil5<<<grid, block>>>(d_a, d_b, w, h, 0.2f);
        float *t = d_a; d_a = d_b; d_b = t;
    }
    cudaMemcpy(hgrid, d_a, bytes, cudaMemcpyDeviceToHost);
    double total = 0.0;
    for (int i = 0; i < w * h; ++i) total += hgrid[i];
    printf("total heat = %f (expected %f)\n", total, 100.0 * h);
    cudaFree(d_a); cudaFree(d_b);
    delete[] hgrid;
    return 0;
}
