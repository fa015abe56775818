// Gaussian elimination without pivoting, forward phase (stands in for Rodinia
// gaussian).  For every pivot t = 0 .. n-2 the host launches two kernels:
//   gauss_multipliers  1D: m[i][t] = a[i][t] / a[t][t] for the rows i > t.
//   gauss_eliminate    2D grid of 8x8 CTAs over the trailing (n-t-1) x (n-t)
//                      submatrix: a[i][j] -= m[i][t] * a[t][j]; the threads of
//                      the pivot column also update the right-hand side b.
// That is 2(n-1) short launches with shrinking grids; the small CTAs make the
// per-SM CTA-slot limit, not threads or registers, bound occupancy.

#define BXY 8

extern "C" __global__ void gauss_multipliers(const float* __restrict__ a, float* __restrict__ m, int n, int t) {
    int i = t + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) m[i * n + t] = a[i * n + t] / a[t * n + t];
}

extern "C" __global__ void gauss_eliminate(float* __restrict__ a, float* __restrict__ b,
                                           const float* __restrict__ m, int n, int t) {
    int j = t + blockIdx.x * BXY + threadIdx.x;          // column, from the pivot column on
    int i = t + 1 + blockIdx.y * BXY + threadIdx.y;      // row below the pivot
    if (i >= n || j >= n) return;
    float mult = m[i * n + t];
    a[i * n + j] -= mult * a[t * n + j];
    if (j == t) b[i] -= mult * b[t];
}
