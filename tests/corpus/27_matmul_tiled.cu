// 27_matmul_tiled.cu  (whole program: host code + kernel)
// Exercises: tiled matrix multiply C = A*B with 2D shared-memory tiles,
// 2D grid/block indexing, barriers inside a loop, boundary predication,
// fully unrolled inner product; host side cudaMalloc/cudaMemcpy/launch.
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 16

__global__ void matmul_tiled(const float *A, const float *B, float *C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

int main()
{
    const int M = 64, N = 48, K = 40;
    static float hA[M * K], hB[K * N], hC[M * N];
    for (int i = 0; i < M * K; ++i) hA[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; ++i) hB[i] = (float)(i % 5) * 0.5f;
    float *dA, *dB, *dC;
    cudaMalloc(&dA, sizeof(hA));
    cudaMalloc(&dB, sizeof(hB));
    cudaMalloc(&dC, sizeof(hC));
    cudaMemcpy(dA, hA, sizeof(hA), cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, sizeof(hB), cudaMemcpyHostToDevice);
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(dA, dB, dC, M, N, K);
    cudaMemcpy(hC, dC, sizeof(hC), cudaMemcpyDeviceToHost);
    double ref = 0.0;
    for (int k = 0; k < K; ++k) ref += (double)hA[k] * hB[k * N];
    printf("C[0][0] = %f (expected %f)\n", hC[0], ref);
    cudaFree(dA); cudaFree(dB); cudaFree(dC);
    return 0;
}
