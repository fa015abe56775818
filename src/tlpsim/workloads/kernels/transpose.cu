// Tiled matrix transpose through shared memory: out (cols x rows) = in (rows x cols)^T.
// A 32x8 CTA moves a 32x32 tile, each thread handling 4 rows of it. The tile is read
// with coalesced row accesses, staged in shared memory padded to 33 columns so the
// column-wise reads are bank-conflict free, and written back with coalesced rows of
// `out`. Other CTA shapes compile with -DTILE=<x> -DROWS=<y> (a TILE x ROWS CTA moves a
// TILE x TILE tile; ROWS divides TILE).
#ifndef TILE
#define TILE 32
#endif
#ifndef ROWS
#define ROWS 8
#endif

extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];

    int x = blockIdx.x * TILE + threadIdx.x;  // column of `in`
    int y = blockIdx.y * TILE + threadIdx.y;  // row of `in`
#pragma unroll
    for (int r = 0; r < TILE; r += ROWS)
        if (x < cols && y + r < rows) tile[threadIdx.y + r][threadIdx.x] = in[(size_t)(y + r) * cols + x];
    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;  // column of `out` = row of `in`
    y = blockIdx.x * TILE + threadIdx.y;  // row of `out` = column of `in`
#pragma unroll
    for (int r = 0; r < TILE; r += ROWS)
        if (x < rows && y + r < cols) out[(size_t)(y + r) * rows + x] = tile[threadIdx.x][threadIdx.y + r];
}
