// 8x8 two-dimensional DCT-II of image blocks and its inverse (stands in for
// the CUDA SDK dct8x8).  A CTA of 32x4 threads transforms a 64x32-pixel tile
// (32 blocks) held in shared memory: every thread loads 16 pixels, transforms
// two 8-point rows, then (after a barrier) two 8-point columns, the 16 values
// of its two vectors living in registers at once (two independent butterflies
// for ILP: register-heavy).  The 1-D transform uses the even/odd split (32
// multiply-adds with immediate coefficients).  Tile rows are padded to 65
// floats so both the row and the column accesses are bank-conflict-free.

#define TILE_W 64
#define TILE_H 32
#define TILE_PAD (TILE_W + 1)

// C(u, k) = alpha(u) cos((2k + 1) u pi / 16) with alpha(0) = sqrt(1/8), alpha(u>0) = 1/2
#define CA 0.353553391f   // C4
#define CB 0.461939766f   // C2
#define CC 0.191341716f   // C6
#define CD 0.490392640f   // C1
#define CE 0.415734806f   // C3
#define CF 0.277785117f   // C5
#define CG 0.097545161f   // C7

__device__ __forceinline__ void dct8(float* v) {
    float s0 = v[0] + v[7], s1 = v[1] + v[6], s2 = v[2] + v[5], s3 = v[3] + v[4];
    float d0 = v[0] - v[7], d1 = v[1] - v[6], d2 = v[2] - v[5], d3 = v[3] - v[4];
    float p = s0 - s3, q = s1 - s2;
    v[0] = CA * (s0 + s1 + s2 + s3);
    v[2] = CB * p + CC * q;
    v[4] = CA * (s0 - s1 - s2 + s3);
    v[6] = CC * p - CB * q;
    v[1] = CD * d0 + CE * d1 + CF * d2 + CG * d3;
    v[3] = CE * d0 - CG * d1 - CD * d2 - CF * d3;
    v[5] = CF * d0 - CD * d1 + CG * d2 + CE * d3;
    v[7] = CG * d0 - CF * d1 + CE * d2 - CD * d3;
}

__device__ __forceinline__ void idct8(float* v) {
    float e0 = CA * v[0] + CB * v[2] + CA * v[4] + CC * v[6];
    float e1 = CA * v[0] + CC * v[2] - CA * v[4] - CB * v[6];
    float e2 = CA * v[0] - CC * v[2] - CA * v[4] + CB * v[6];
    float e3 = CA * v[0] - CB * v[2] + CA * v[4] - CC * v[6];
    float o0 = CD * v[1] + CE * v[3] + CF * v[5] + CG * v[7];
    float o1 = CE * v[1] - CG * v[3] - CD * v[5] - CF * v[7];
    float o2 = CF * v[1] - CD * v[3] + CG * v[5] + CE * v[7];
    float o3 = CG * v[1] - CF * v[3] + CE * v[5] - CD * v[7];
    v[0] = e0 + o0; v[7] = e0 - o0;
    v[1] = e1 + o1; v[6] = e1 - o1;
    v[2] = e2 + o2; v[5] = e2 - o2;
    v[3] = e3 + o3; v[4] = e3 - o3;
}

template <bool INVERSE>
__device__ __forceinline__ void transform_tile(const float* __restrict__ src, float* __restrict__ dst, int width) {
    __shared__ float tile[TILE_H][TILE_PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;              // 32 x 4
    const size_t origin = (size_t)blockIdx.y * TILE_H * width + blockIdx.x * TILE_W;
    float a[8], b[8];

    // coalesced load: thread (tx, ty) brings rows ty, ty+4, ..., ty+28 of columns tx and tx+32
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        const float* p = src + origin + (size_t)(ty + 4 * r) * width + tx;
        tile[ty + 4 * r][tx] = p[0];
        tile[ty + 4 * r][tx + 32] = p[32];
    }
    __syncthreads();

    // rows: thread t transforms row t/4 of block columns t%4 and t%4 + 4
    const int t = ty * 32 + tx;
    const int row = t >> 2, col = (t & 3) * 8;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        a[k] = tile[row][col + k];
        b[k] = tile[row][col + 32 + k];
    }
    if (INVERSE) { idct8(a); idct8(b); } else { dct8(a); dct8(b); }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        tile[row][col + k] = a[k];
        tile[row][col + 32 + k] = b[k];
    }
    __syncthreads();

    // columns: thread (tx, ty) transforms columns tx and tx+32 of block row ty, stores coalesced
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        a[k] = tile[ty * 8 + k][tx];
        b[k] = tile[ty * 8 + k][tx + 32];
    }
    if (INVERSE) { idct8(a); idct8(b); } else { dct8(a); dct8(b); }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        float* p = dst + origin + (size_t)(ty * 8 + k) * width + tx;
        p[0] = a[k];
        p[32] = b[k];
    }
}

extern "C" __global__ void dct8x8_forward(const float* __restrict__ src, float* __restrict__ dst, int width) {
    transform_tile<false>(src, dst, width);
}

extern "C" __global__ void dct8x8_inverse(const float* __restrict__ src, float* __restrict__ dst, int width) {
    transform_tile<true>(src, dst, width);
}
