// Pitched 2D memory: cudaMallocPitch, cudaMemcpy2D both ways, cudaMemset2D,
// device-to-device and cudaMemcpyDefault copies, cudaMemsetAsync.
#include <cstdio>
#include "check.h"

__global__ void addRowIndex(float *img, size_t pitch, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float *row = (float *)((char *)img + y * pitch);
        row[x] += (float)y;
    }
}

int main()
{
    const int w = 37, h = 21;
    float host[h][w], back[h][w];
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) host[y][x] = (float)x;
    float *img;
    size_t pitch;
    CHECK(cudaMallocPitch(&img, &pitch, w * sizeof(float), h));
    CHECK(cudaMemset2D(img, pitch, 0, pitch, h));
    CHECK(cudaMemcpy2D(img, pitch, host, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
    dim3 block(16, 8), grid((w + 15) / 16, (h + 7) / 8);
    addRowIndex<<<grid, block>>>(img, pitch, w, h);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2D(back, w * sizeof(float), img, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost));
    int errors = pitch < w * sizeof(float);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) errors += back[y][x] != (float)(x + y);
    // a device-to-device copy of one row, then a copy with direction inferred
    float *row;
    CHECK(cudaMalloc(&row, w * sizeof(float)));
    CHECK(cudaMemcpy(row, (char *)img + 5 * pitch, w * sizeof(float), cudaMemcpyDeviceToDevice));
    float r[w];
    CHECK(cudaMemcpy(r, row, sizeof(r), cudaMemcpyDefault));
    for (int x = 0; x < w; ++x) errors += r[x] != (float)(x + 5);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemsetAsync(row, 0xFF, sizeof(r), s));
    CHECK(cudaStreamSynchronize(s));
    unsigned int bits[w];
    CHECK(cudaMemcpy(bits, row, sizeof(bits), cudaMemcpyDeviceToHost));
    for (int x = 0; x < w; ++x) errors += bits[x] != 0xFFFFFFFFu;
    printf("pitch %zu bytes for %zu-byte rows, %d errors\n", pitch, w * sizeof(float), errors);
    CHECK(cudaFree(img)); CHECK(cudaFree(row)); CHECK(cudaStreamDestroy(s));
    printf(errors ? "FAIL\n" : "PASS\n");
    return errors ? 1 : 0;
}
