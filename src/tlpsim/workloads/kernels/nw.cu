// Needleman-Wunsch global sequence alignment (stands in for Rodinia NW).
//
// The (n+1) x (n+1) score matrix (row 0 / column 0 hold the gap penalties) is
// cut into BS x BS blocks; block (bi, bj) depends on its upper, left and
// upper-left neighbours, so blocks are processed one block anti-diagonal per
// launch (2 * n/BS - 1 launches).  Each CTA -- BS threads, half a warp -- copies
// its block's top row, left column and substitution scores into shared memory
// and sweeps the block's own 2*BS-1 cell anti-diagonals, one __syncthreads per
// step; on each step only the threads whose cell lies on that anti-diagonal work.

#define BS 16

__device__ __forceinline__ int max3(int a, int b, int c) { return max(a, max(b, c)); }

extern "C" __global__ void nw_diagonal(int* __restrict__ score, const int* __restrict__ subst,
                                       int n, int diag, int first_bi, int penalty) {
    __shared__ int s_score[BS + 1][BS + 1];
    __shared__ int s_sub[BS][BS];

    const int stride = n + 1;
    const int t = threadIdx.x;
    const int bi = first_bi + blockIdx.x;
    const int bj = diag - bi;
    const int r0 = bi * BS;            // row of the block's top halo
    const int c0 = bj * BS;            // column of the block's left halo

    if (t == 0) s_score[0][0] = score[r0 * stride + c0];
    s_score[0][t + 1] = score[r0 * stride + c0 + 1 + t];
    s_score[t + 1][0] = score[(r0 + 1 + t) * stride + c0];
    for (int r = 0; r < BS; ++r) s_sub[r][t] = subst[(r0 + 1 + r) * stride + c0 + 1 + t];
    __syncthreads();

    // cell (t, step - t) is on anti-diagonal `step` of the block
    for (int step = 0; step < 2 * BS - 1; ++step) {
        int col = step - t;
        if (col >= 0 && col < BS) {
            s_score[t + 1][col + 1] = max3(s_score[t][col] + s_sub[t][col],
                                           s_score[t][col + 1] - penalty,
                                           s_score[t + 1][col] - penalty);
        }
        __syncthreads();
    }

    for (int r = 0; r < BS; ++r) score[(r0 + 1 + r) * stride + c0 + 1 + t] = s_score[r + 1][t + 1];
}
