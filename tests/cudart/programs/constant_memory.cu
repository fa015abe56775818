// __constant__ and __device__ variables: cudaMemcpyToSymbol / FromSymbol (with an
// offset), cudaGetSymbolAddress / Size, a polynomial in constant memory, and a
// device counter updated with atomics.
#include <cstdio>
#include "check.h"

#define DEGREE 4
__constant__ float coeffs[DEGREE + 1];
__constant__ int scale;
__device__ unsigned int counter;
__device__ float table[64];

__global__ void poly(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = 0.0f;
    for (int k = DEGREE; k >= 0; --k) v = v * x[i] + coeffs[k];
    y[i] = v * scale + table[i % 64];
    atomicAdd(&counter, 1u);
}

int main()
{
    const int n = 1000;
    float h_coeffs[DEGREE + 1] = {1.0f, -2.0f, 0.5f, 0.25f, -0.125f};
    float h_table[64];
    for (int i = 0; i < 64; ++i) h_table[i] = 0.01f * i;
    int h_scale = 3;
    CHECK(cudaMemcpyToSymbol(coeffs, h_coeffs, 2 * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(coeffs, h_coeffs + 2, 3 * sizeof(float), 2 * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(scale, &h_scale, sizeof(int)));
    float *d_table;
    size_t table_size;
    CHECK(cudaGetSymbolAddress((void **)&d_table, table));
    CHECK(cudaGetSymbolSize(&table_size, table));
    if (table_size != sizeof(h_table)) { printf("FAIL: symbol size %zu\n", table_size); return 1; }
    CHECK(cudaMemcpy(d_table, h_table, sizeof(h_table), cudaMemcpyHostToDevice));
    float hx[n], hy[n];
    for (int i = 0; i < n; ++i) hx[i] = (i % 17) * 0.1f - 0.8f;
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof(hx)));
    CHECK(cudaMalloc(&dy, sizeof(hy)));
    CHECK(cudaMemcpy(dx, hx, sizeof(hx), cudaMemcpyHostToDevice));
    poly<<<(n + 127) / 128, 128>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hy, dy, sizeof(hy), cudaMemcpyDeviceToHost));
    unsigned int count = 0;
    CHECK(cudaMemcpyFromSymbol(&count, counter, sizeof(count)));
    float back[DEGREE + 1];
    CHECK(cudaMemcpyFromSymbol(back, coeffs, sizeof(back)));
    int errors = count != n;
    for (int k = 0; k <= DEGREE; ++k) errors += back[k] != h_coeffs[k];
    for (int i = 0; i < n; ++i) {
        float v = 0.0f;
        for (int k = DEGREE; k >= 0; --k) v = v * hx[i] + h_coeffs[k];
        float want = v * h_scale + h_table[i % 64];
        if (fabsf(hy[i] - want) > 1e-4f * fmaxf(1.0f, fabsf(want))) ++errors;
    }
    printf("counter = %u, errors = %d\n", count, errors);
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}
