// Naive single-precision GEMM, C = alpha * A * B + beta * C, one thread per output
// element on a 2D grid. A is M x K, B is K x N, C is M x N, all row-major.
// Every operand comes from global memory (no shared-memory reuse): the A row is a
// broadcast within a warp, the B column walk is coalesced across threadIdx.x.
// The k loop is unrolled by 8 into four independent accumulators, which keeps many
// loads in flight per thread and raises the register count.
extern "C" __global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K,
                                       float alpha, float beta) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;

    const float* a = A + (size_t)row * K;
    const float* b = B + col;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        float a0 = a[k + 0], a1 = a[k + 1], a2 = a[k + 2], a3 = a[k + 3];
        float a4 = a[k + 4], a5 = a[k + 5], a6 = a[k + 6], a7 = a[k + 7];
        float b0 = b[(size_t)(k + 0) * N], b1 = b[(size_t)(k + 1) * N];
        float b2 = b[(size_t)(k + 2) * N], b3 = b[(size_t)(k + 3) * N];
        float b4 = b[(size_t)(k + 4) * N], b5 = b[(size_t)(k + 5) * N];
        float b6 = b[(size_t)(k + 6) * N], b7 = b[(size_t)(k + 7) * N];
        s0 = fmaf(a0, b0, s0);
        s1 = fmaf(a1, b1, s1);
        s2 = fmaf(a2, b2, s2);
        s3 = fmaf(a3, b3, s3);
        s0 = fmaf(a4, b4, s0);
        s1 = fmaf(a5, b5, s1);
        s2 = fmaf(a6, b6, s2);
        s3 = fmaf(a7, b7, s3);
    }
    for (; k < K; ++k) s0 = fmaf(a[k], b[(size_t)k * N], s0);

    size_t idx = (size_t)row * N + col;
    C[idx] = alpha * ((s0 + s1) + (s2 + s3)) + beta * C[idx];
}
