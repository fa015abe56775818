// Shared-memory tiled SGEMM with register tiling, C = alpha * A * B + beta * C.
// A is M x K, B is K x N, C is M x N, row-major; M and N are multiples of 64 and K
// a multiple of 16 (the driver pads nothing: it picks such sizes).
//
// A 16x16 CTA computes a 64x64 tile of C. Each k-step stages a 64x16 slice of A
// (stored transposed, k-major) and a 16x64 slice of B in shared memory; every thread
// then accumulates a 4x4 block of outputs in registers (rows ty+16i, columns tx+16j,
// so a warp's shared-memory reads are broadcasts or conflict-free). Sixteen live
// accumulators plus the staged operands make the kernel register-heavy.
#define TILE_M 64
#define TILE_N 64
#define TILE_K 16
#define DIM 16  // threads per CTA side
#define A_PAD 4

extern "C" __global__ void __launch_bounds__(256)
sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
            int M, int N, int K, float alpha, float beta) {
    __shared__ float As[TILE_K][TILE_M + A_PAD];
    __shared__ float Bs[TILE_K][TILE_N];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * DIM + tx;
    const int row0 = blockIdx.y * TILE_M;
    const int col0 = blockIdx.x * TILE_N;

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        // Stage A[row0:row0+64, k0:k0+16] transposed: 1024 values, 4 per thread.
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            int e = tid + l * DIM * DIM;
            int r = e / TILE_K, c = e % TILE_K;
            As[c][r] = A[(size_t)(row0 + r) * K + k0 + c];
        }
        // Stage B[k0:k0+16, col0:col0+64]: 1024 values, 4 per thread, coalesced.
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            int e = tid + l * DIM * DIM;
            int r = e / TILE_N, c = e % TILE_N;
            Bs[r][c] = B[(size_t)(k0 + r) * N + col0 + c];
        }
        __syncthreads();

#pragma unroll
        for (int kk = 0; kk < TILE_K; ++kk) {
            float av[4], bv[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + DIM * i];
#pragma unroll
            for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + DIM * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        size_t base = (size_t)(row0 + ty + DIM * i) * N + col0 + tx;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            size_t idx = base + DIM * j;
            C[idx] = alpha * acc[i][j] + beta * C[idx];
        }
    }
}
