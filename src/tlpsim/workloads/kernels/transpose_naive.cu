// Naive matrix transpose: out (cols x rows) = in (rows x cols)^T, one element per
// thread on a 2D grid. Reads are coalesced along a row of `in`; the writes of a warp
// land `rows` floats apart, so every store touches a different memory segment.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;  // column of `in`
    int y = blockIdx.y * blockDim.y + threadIdx.y;  // row of `in`
    if (x < cols && y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}
