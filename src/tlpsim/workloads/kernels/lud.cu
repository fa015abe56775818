// Blocked right-looking LU decomposition without pivoting, in place, L with unit
// diagonal (stands in for Rodinia LUD).  The n x n matrix is cut into BS x BS
// blocks; block step k is three launches:
//   lud_diagonal   1 CTA of BS x BS threads: factorise the diagonal block A_kk
//                  in shared memory (2 barriers per column).
//   lud_perimeter  one CTA of 2*BS threads per trailing block index b: the first
//                  half-warp solves L_kk * U_kj = A_kj (one column per thread, row
//                  block of U), the second half solves L_ik * U_kk = A_ik (one row
//                  per thread, column block of L) -- the two halves of the warp run
//                  different loops.
//   lud_internal   2D grid over the trailing submatrix, BS x BS threads:
//                  A_ij -= L_ik * U_kj from two shared-memory tiles.
// The last step only has the diagonal block.

#define BS 16

extern "C" __global__ void lud_diagonal(float* __restrict__ a, int n, int k) {
    __shared__ float t[BS][BS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int off = k * BS;
    t[ty][tx] = a[(off + ty) * n + off + tx];
    __syncthreads();
    for (int i = 0; i < BS - 1; ++i) {
        if (tx == i && ty > i) t[ty][i] /= t[i][i];
        __syncthreads();
        if (tx > i && ty > i) t[ty][tx] -= t[ty][i] * t[i][tx];
        __syncthreads();
    }
    a[(off + ty) * n + off + tx] = t[ty][tx];
}

extern "C" __global__ void lud_perimeter(float* __restrict__ a, int n, int k) {
    __shared__ float d[BS][BS];    // factorised diagonal block (L and U)
    __shared__ float u[BS][BS];    // row block A_kj, becomes U_kj
    __shared__ float l[BS][BS];    // column block A_ik, becomes L_ik
    const int t = threadIdx.x;
    const int off = k * BS;
    const int other = (k + 1 + blockIdx.x) * BS;
    for (int m = t; m < BS * BS; m += 2 * BS) {
        int r = m / BS, c = m % BS;
        d[r][c] = a[(off + r) * n + off + c];
        u[r][c] = a[(off + r) * n + other + c];
        l[r][c] = a[(other + r) * n + off + c];
    }
    __syncthreads();

    if (t < BS) {
        // forward substitution with unit-diagonal L_kk, column t of U_kj
        for (int i = 1; i < BS; ++i) {
            float s = u[i][t];
            for (int m = 0; m < i; ++m) s -= d[i][m] * u[m][t];
            u[i][t] = s;
        }
    } else {
        // row r of L_ik from x * U_kk = row r of A_ik
        const int r = t - BS;
        for (int j = 0; j < BS; ++j) {
            float s = l[r][j];
            for (int m = 0; m < j; ++m) s -= l[r][m] * d[m][j];
            l[r][j] = s / d[j][j];
        }
    }
    __syncthreads();

    for (int m = t; m < BS * BS; m += 2 * BS) {
        int r = m / BS, c = m % BS;
        a[(off + r) * n + other + c] = u[r][c];
        a[(other + r) * n + off + c] = l[r][c];
    }
}

extern "C" __global__ void lud_internal(float* __restrict__ a, int n, int k) {
    __shared__ float l[BS][BS];
    __shared__ float u[BS][BS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int off = k * BS;
    const int row = (k + 1 + blockIdx.y) * BS + ty;
    const int col = (k + 1 + blockIdx.x) * BS + tx;
    l[ty][tx] = a[row * n + off + tx];
    u[ty][tx] = a[(off + ty) * n + col];
    __syncthreads();
    float s = 0.0f;
#pragma unroll
    for (int m = 0; m < BS; ++m) s += l[ty][m] * u[m][tx];
    a[row * n + col] -= s;
}
