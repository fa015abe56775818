// 33_spmv_csr.cu
// Exercises: sparse matrix-vector multiply in CSR format: scalar kernel
// (one thread per row, data-dependent trip counts, indirect loads through
// column indices, __ldg on x), vector kernel (one warp per row, lane-strided
// loop + shuffle reduction), double-precision values.

__global__ void spmv_csr_scalar(int rows, const int *__restrict__ row_ptr,
                                const int *__restrict__ cols, const double *__restrict__ vals,
                                const double *__restrict__ x, double *y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    double sum = 0.0;
    for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j)
        sum += vals[j] * __ldg(&x[cols[j]]);
    y[r] = sum;
}

__global__ void spmv_csr_vector(int rows, const int *row_ptr, const int *cols,
                                const float *vals, const float *x, float *y)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (warp >= rows) return;                      // whole warp exits together
    int start = row_ptr[warp], end = row_ptr[warp + 1];
    float sum = 0.0f;
    for (int j = start + lane; j < end; j += 32)
        sum += vals[j] * x[cols[j]];
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, off);
    if (lane == 0) y[warp] = sum;
}
