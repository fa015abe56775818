// Thermal simulation of a chip floorplan (stands in for Rodinia HotSpot): an explicit
// 2D five-point update of the temperature grid driven by a power map, with the grid edge
// reflecting (an off-grid neighbour reads as the cell itself).
//
// Pyramid time blocking: each CTA loads a TILE_X x TILE_Y tile of temperature and power
// (its output region plus a STEPS-wide halo) into shared memory and advances it STEPS time
// steps there, the valid region shrinking by one cell per side per step, with a barrier
// after every step. Only the central (TILE_X-2*STEPS) x (TILE_Y-2*STEPS) cells go back to
// global memory. Temperature is double-buffered in shared memory: 3 tiles = 15 KiB, so
// three CTAs fill a Fermi SM's 48 KiB. The launch bound caps the kernel at 32 registers
// (no spills), so registers would allow four CTAs and shared memory is the sole limiter.
// Other CTA shapes compile with -DTILE_X=<x> -DTILE_Y=<rows> -DBLOCK_Y=<y>.

#ifndef TILE_X
#define TILE_X 32
#endif
#ifndef TILE_Y
#define TILE_Y 40
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 8                 // threads per CTA: TILE_X x BLOCK_Y, TILE_Y / BLOCK_Y rows each
#endif
#define ROWS (TILE_Y / BLOCK_Y)

extern "C" __global__ void __launch_bounds__(TILE_X * BLOCK_Y, 8)
hotspot_pyramid(const float* __restrict__ power, const float* __restrict__ temp_in, float* __restrict__ temp_out,
                int rows, int cols, int steps, float cx, float cy, float cz, float cp, float ambient)
{
    __shared__ float s_power[TILE_Y][TILE_X];
    __shared__ float s_temp[2][TILE_Y][TILE_X];

    const int out_x = TILE_X - 2 * steps, out_y = TILE_Y - 2 * steps;
    const int x0 = blockIdx.x * out_x - steps;     // grid coordinates of tile cell (0, 0)
    const int y0 = blockIdx.y * out_y - steps;
    const int tx = threadIdx.x;
    const int gx = x0 + tx;
    const bool col_in = gx >= 0 && gx < cols;

    for (int r = 0; r < ROWS; ++r) {
        int ty = threadIdx.y + r * BLOCK_Y;
        int gy = y0 + ty;
        bool in = col_in && gy >= 0 && gy < rows;
        s_temp[0][ty][tx] = in ? temp_in[gy * cols + gx] : 0.0f;
        s_power[ty][tx] = in ? power[gy * cols + gx] : 0.0f;
    }
    __syncthreads();

    int cur = 0;
    for (int i = 0; i < steps; ++i) {
        for (int r = 0; r < ROWS; ++r) {
            int ty = threadIdx.y + r * BLOCK_Y;
            int gy = y0 + ty;
            float c = s_temp[cur][ty][tx];
            float t = c;
            // Cells at step i are valid in [i+1, TILE-2-i]; the others just carry over.
            if (tx > i && tx < TILE_X - 1 - i && ty > i && ty < TILE_Y - 1 - i) {
                float n = gy > 0 ? s_temp[cur][ty - 1][tx] : c;
                float s = gy < rows - 1 ? s_temp[cur][ty + 1][tx] : c;
                float w = gx > 0 ? s_temp[cur][ty][tx - 1] : c;
                float e = gx < cols - 1 ? s_temp[cur][ty][tx + 1] : c;
                t = c + cp * s_power[ty][tx] + cy * (n + s - 2.0f * c) + cx * (e + w - 2.0f * c)
                    + cz * (ambient - c);
            }
            s_temp[cur ^ 1][ty][tx] = t;
        }
        __syncthreads();
        cur ^= 1;
    }

    if (tx < steps || tx >= TILE_X - steps || !col_in) return;
    for (int r = 0; r < ROWS; ++r) {
        int ty = threadIdx.y + r * BLOCK_Y;
        int gy = y0 + ty;
        if (ty >= steps && ty < TILE_Y - steps && gy >= 0 && gy < rows)
            temp_out[gy * cols + gx] = s_temp[cur][ty][tx];
    }
}
