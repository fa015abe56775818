// 2MM-style chained matrix products (Polybench 2MM):
//   tmp = alpha * A * B          (A: NI x NK, B: NK x NJ, tmp: NI x NJ)
//   D   = beta * D + tmp * C     (C: NJ x NL, D: NI x NL)
// Two dependent launches, each one thread per output element on a 2D grid, with the
// k loop reading straight from global memory.
extern "C" __global__ void mm2_stage1(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ tmp, int ni, int nj, int nk, float alpha) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && j < nj) {
        float s = 0.0f;
        for (int k = 0; k < nk; ++k) s += A[i * nk + k] * B[k * nj + j];
        tmp[i * nj + j] = alpha * s;
    }
}

extern "C" __global__ void mm2_stage2(const float* __restrict__ tmp, const float* __restrict__ C,
                                      float* __restrict__ D, int ni, int nj, int nl, float beta) {
    int l = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && l < nl) {
        float s = D[i * nl + l] * beta;
        for (int j = 0; j < nj; ++j) s += tmp[i * nj + j] * C[j * nl + l];
        D[i * nl + l] = s;
    }
}
