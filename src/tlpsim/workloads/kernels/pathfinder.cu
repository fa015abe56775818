// Minimum-cost path through a grid, row by row (stands in for Rodinia pathfinder).
//
// cost[r][c] = wall[r][c] + min(cost[r-1][c-1], cost[r-1][c], cost[r-1][c+1]).
// One launch advances `steps` rows.  Each 256-thread CTA loads a 256-column
// window of the previous row into shared memory and iterates `steps` rows in
// place; since column c's value depends on c-1..c+1 of the row above, the
// correct region shrinks by one column on each side per row (a pyramid), so a
// CTA only writes back its middle 256 - 2*steps columns and neighbouring CTAs
// overlap by 2*steps columns.  Lanes drop out of the work as the pyramid narrows
// and at the grid's edges: divergent, barrier-separated shared-memory rounds.

#define BLOCK 256
#define BIG 0x3fffffff

extern "C" __global__ void pathfinder_rows(const int* __restrict__ wall, const int* __restrict__ src,
                                           int* __restrict__ dst, int cols, int first_row, int steps) {
    __shared__ int s_prev[BLOCK];
    __shared__ int s_next[BLOCK];
    const int t = threadIdx.x;
    const int width = BLOCK - 2 * steps;              // columns this CTA finishes
    const int col = blockIdx.x * width - steps + t;   // this lane's column
    const bool inside = col >= 0 && col < cols;

    if (inside) s_prev[t] = src[col];
    __syncthreads();

    for (int i = 0; i < steps; ++i) {
        // lanes i+1 .. BLOCK-2-i still have their whole dependency cone in the window
        const bool live = inside && t > i && t < BLOCK - 1 - i;
        if (live) {
            int up = s_prev[t];
            int left = col > 0 ? s_prev[t - 1] : BIG;
            int right = col < cols - 1 ? s_prev[t + 1] : BIG;
            s_next[t] = min(up, min(left, right)) + wall[(first_row + i) * cols + col];
        }
        __syncthreads();
        if (live) s_prev[t] = s_next[t];
        __syncthreads();
    }

    if (inside && t >= steps && t < BLOCK - steps) dst[col] = s_prev[t];
}
