// 7-point 3D Laplace-style stencil (stands in for the Parboil stencil benchmark):
//   out = c0 * centre + c1 * (sum of the six face neighbours) on interior points.
// The launch grid is 2D over (x, y); every thread owns COLS columns in y (ty, ty + BY, ...)
// and marches upward in z, keeping each column's below/centre/above values in registers
// so every input value is loaded once per column. Several columns per thread trade
// registers for parallelism: the kernel is register-heavy.

#define BX 32
#define BY 4
#define COLS 4              // y-columns per thread: a CTA covers BX x (BY*COLS) points in (x, y)

extern "C" __global__ void stencil7(const float* __restrict__ in, float* __restrict__ out,
                                    int nx, int ny, int nz, float c0, float c1)
{
    const int x = blockIdx.x * BX + threadIdx.x;
    const int ybase = blockIdx.y * (BY * COLS) + threadIdx.y;
    if (x < 1 || x >= nx - 1) return;
    const int plane = nx * ny;

    float below[COLS], centre[COLS], above[COLS];
    bool live[COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        int y = ybase + c * BY;
        live[c] = y >= 1 && y < ny - 1;
        int i = y * nx + x;
        below[c] = live[c] ? in[i] : 0.0f;
        centre[c] = live[c] ? in[plane + i] : 0.0f;
    }
    for (int z = 1; z < nz - 1; ++z) {
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
            if (!live[c]) continue;
            int i = (z * ny + ybase + c * BY) * nx + x;
            above[c] = in[i + plane];
            float side = in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx];
            out[i] = c0 * centre[c] + c1 * (below[c] + above[c] + side);
            below[c] = centre[c];
            centre[c] = above[c];
        }
    }
}
