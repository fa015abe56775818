// 37_black_scholes.cu  (whole program: host code + kernel)
// Exercises: Black-Scholes-like European option pricing: expf, logf,
// sqrtf, a polynomial cumulative normal distribution (Horner with many
// fmaf), fabsf, divergent select for negative d, grid-stride loop.
#include <cstdio>
#include <cuda_runtime.h>

__device__ __forceinline__ float cnd(float d)
{
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f;
    const float A4 = -1.821255978f, A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267794f;
    float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0.0f ? 1.0f - c : c;
}

__global__ void black_scholes(float *call, float *put, const float *S, const float *X,
                              const float *T, float r, float v, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float s = S[i], x = X[i], t = T[i];
        float sqrtT = sqrtf(t);
        float d1 = (logf(s / x) + (r + 0.5f * v * v) * t) / (v * sqrtT);
        float d2 = d1 - v * sqrtT;
        float expRT = expf(-r * t);
        float c = s * cnd(d1) - x * expRT * cnd(d2);
        call[i] = c;
        put[i] = c - s + x * expRT;                    // put-call parity
    }
}

int main()
{
    const int n = 4096;
    const size_t bytes = n * sizeof(float);
    float *hS = new float[n], *hX = new float[n], *hT = new float[n], *hC = new float[n];
    for (int i = 0; i < n; ++i) {
        hS[i] = 10.0f + (i % 100);
        hX[i] = 50.0f;
        hT[i] = 0.25f + (i % 8) * 0.25f;
    }
    float *dS, *dX, *dT, *dC, *dP;
    cudaMalloc(&dS, bytes); cudaMalloc(&dX, bytes); cudaMalloc(&dT, bytes);
    cudaMalloc(&dC, bytes); cudaMalloc(&dP, bytes);
    cudaMemcpy(dS, hS, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dX, hX, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dT, hT, bytes, cudaMemcpyHostToDevice);
    black_scholes<<<16, 128>>>(dC, dP, dS, dX, dT, 0.02f, 0.3f, n);
    cudaMemcpy(hC, dC, bytes, cudaMemcpyDeviceToHost);
    printf("call[60] = %f\n", hC[60]);
    cudaFree(dS); cudaFree(dX); cudaFree(dT); cudaFree(dC); cudaFree(dP);
    delete[] hS; delete[] hX; delete[] hT; delete[] hC;
    return 0;
}
