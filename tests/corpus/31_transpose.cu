// 31_transpose.cu
// Exercises: matrix transpose through a shared tile padded by one column
// (TILE x TILE+1, avoids bank conflicts), 32x8 thread blocks each moving
// several rows (loop with blockDim.y step), naive transpose for comparison,
// double-precision variant via a template.

#define TILE 32
#define ROWS 8

template <typename T>
__global__ void transpose_padded(const T *in, T *out, int w, int h)
{
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;          // swapped block coordinates
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
template __global__ void transpose_padded<float>(const float *, float *, int, int);
template __global__ void transpose_padded<double>(const double *, double *, int, int);

__global__ void transpose_naive(const float *in, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[x * h + y] = in[y * w + x];
}
