// Sparse matrix-vector product y = A x with A in CSR form (stands in for
// Parboil SPMV).  Two kernels over the same matrix:
//   spmv_csr_scalar  one thread per row: lanes of a warp walk rows of very
//                    different lengths (loop divergence), the accesses to
//                    cols/vals are strided across the warp and x is gathered;
//   spmv_csr_vector  one warp per row: lanes stride through the row (coalesced
//                    cols/vals), partial sums are combined with warp shuffles.

extern "C" __global__ void spmv_csr_scalar(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                           const float* __restrict__ vals, const float* __restrict__ x,
                                           float* __restrict__ y, int nrows) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= nrows) return;
    int begin = row_ptr[row], end = row_ptr[row + 1];
    float sum = 0.0f;
    for (int j = begin; j < end; ++j) sum += vals[j] * x[cols[j]];
    y[row] = sum;
}

extern "C" __global__ void spmv_csr_vector(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                           const float* __restrict__ vals, const float* __restrict__ x,
                                           float* __restrict__ y, int nrows) {
    const int lane = threadIdx.x & 31;
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;   // one warp per row
    if (row >= nrows) return;                                       // whole warps leave together
    int begin = row_ptr[row], end = row_ptr[row + 1];
    float sum = 0.0f;
    for (int j = begin + lane; j < end; j += 32) sum += vals[j] * x[cols[j]];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if (lane == 0) y[row] = sum;
}
