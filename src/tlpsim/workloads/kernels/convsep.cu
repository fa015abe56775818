// Separable 2D convolution (stands in for the CUDA SDK convolutionSeparable): a 1D filter
// of 2R+1 taps in constant memory applied along rows, then along columns, each pass
// staging its input strip plus an R-wide halo (zero outside the image) in shared memory.
//   conv_rows: CTA of 32x8 threads, a 8 x (4*32) strip + halo:      4.5 KiB
//   conv_cols: CTA of 32x8 threads, a (12*8) x 32 strip + halo:    14 KiB (shared-memory-limited)

#define R 8
#define TAPS (2 * R + 1)
#define BX 32
#define BY 8
#define ROW_STEPS 4                    // outputs per thread along x in the rows pass
#define COL_STEPS 12                   // outputs per thread along y in the columns pass
#define ROW_W (ROW_STEPS * BX)
#define COL_H (COL_STEPS * BY)

extern "C" {

__constant__ float c_taps[TAPS];

__global__ void conv_rows(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float strip[BY][ROW_W + 2 * R];
    const int y = blockIdx.y * BY + threadIdx.y;
    const int x0 = blockIdx.x * ROW_W;
    const bool row_in = y < rows;
    for (int k = threadIdx.x; k < ROW_W + 2 * R; k += BX) {
        int gx = x0 + k - R;
        strip[threadIdx.y][k] = (row_in && gx >= 0 && gx < cols) ? in[y * cols + gx] : 0.0f;
    }
    __syncthreads();
    if (!row_in) return;
#pragma unroll
    for (int s = 0; s < ROW_STEPS; ++s) {
        int lx = threadIdx.x + s * BX;
        if (x0 + lx >= cols) break;
        float acc = 0.0f;
#pragma unroll
        for (int t = 0; t < TAPS; ++t)
            acc += c_taps[t] * strip[threadIdx.y][lx + t];
        out[y * cols + x0 + lx] = acc;
    }
}

__global__ void conv_cols(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float strip[COL_H + 2 * R][BX];
    const int x = blockIdx.x * BX + threadIdx.x;
    const int y0 = blockIdx.y * COL_H;
    const bool col_in = x < cols;
    for (int k = threadIdx.y; k < COL_H + 2 * R; k += BY) {
        int gy = y0 + k - R;
        strip[k][threadIdx.x] = (col_in && gy >= 0 && gy < rows) ? in[gy * cols + x] : 0.0f;
    }
    __syncthreads();
    if (!col_in) return;
#pragma unroll
    for (int s = 0; s < COL_STEPS; ++s) {
        int ly = threadIdx.y + s * BY;
        if (y0 + ly >= rows) break;
        float acc = 0.0f;
#pragma unroll
        for (int t = 0; t < TAPS; ++t)
            acc += c_taps[t] * strip[ly + t][threadIdx.x];
        out[(y0 + ly) * cols + x] = acc;
    }
}

}
