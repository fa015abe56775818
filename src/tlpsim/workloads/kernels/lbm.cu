// Lattice-Boltzmann D3Q19, one fused stream-and-collide step per launch
// (stands in for Parboil LBM).  Structure-of-arrays layout f[q * n + cell],
// cell = (z * ny + y) * nx + x, periodic in x, y and z.  "Pull" streaming:
// a cell gathers f_q from its upstream neighbour (x - c_q), then
//   * solid cell:  full-way bounce-back, f_q <- f_opposite(q);
//   * fluid cell:  BGK relaxation towards equilibrium plus a constant body
//                  force along x (first-order forcing term 3 w_q c_q.F).
// All 19 distributions live in registers between the gather and the scatter,
// which is what makes the kernel register-heavy.

// X(q, cx, cy, cz, weight): the 19 lattice velocities; opposite pairs are (1,2), (3,4), ...
#define LBM_W0 (1.0f / 3.0f)
#define LBM_W1 (1.0f / 18.0f)
#define LBM_W2 (1.0f / 36.0f)
#define LBM_DIRECTIONS(X)                                                                           \
    X(0, 0, 0, 0, LBM_W0)                                                                           \
    X(1, 1, 0, 0, LBM_W1) X(2, -1, 0, 0, LBM_W1) X(3, 0, 1, 0, LBM_W1) X(4, 0, -1, 0, LBM_W1)       \
    X(5, 0, 0, 1, LBM_W1) X(6, 0, 0, -1, LBM_W1)                                                    \
    X(7, 1, 1, 0, LBM_W2) X(8, -1, -1, 0, LBM_W2) X(9, 1, -1, 0, LBM_W2) X(10, -1, 1, 0, LBM_W2)    \
    X(11, 1, 0, 1, LBM_W2) X(12, -1, 0, -1, LBM_W2) X(13, 1, 0, -1, LBM_W2) X(14, -1, 0, 1, LBM_W2) \
    X(15, 0, 1, 1, LBM_W2) X(16, 0, -1, -1, LBM_W2) X(17, 0, 1, -1, LBM_W2) X(18, 0, -1, 1, LBM_W2)

#define LBM_Q 19

// coordinate of the upstream neighbour along one axis for lattice velocity component c
__device__ __forceinline__ int upstream(int c, int minus, int same, int plus) {
    return c > 0 ? minus : (c < 0 ? plus : same);
}

extern "C" __global__ void lbm_step(const float* __restrict__ src, float* __restrict__ dst,
                                    const unsigned char* __restrict__ solid, int nx, int ny, int nz,
                                    float omega, float force_x) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    const int n = nx * ny * nz;
    const int cell = (z * ny + y) * nx + x;
    const int xm = x == 0 ? nx - 1 : x - 1, xp = x == nx - 1 ? 0 : x + 1;
    const int ym = y == 0 ? ny - 1 : y - 1, yp = y == ny - 1 ? 0 : y + 1;
    const int zm = z == 0 ? nz - 1 : z - 1, zp = z == nz - 1 ? 0 : z + 1;

    float f[LBM_Q];
#define LBM_GATHER(q, cx, cy, cz, w)                                                        \
    f[q] = src[(q) * n + (upstream(cz, zm, z, zp) * ny + upstream(cy, ym, y, yp)) * nx + \
               upstream(cx, xm, x, xp)];
    LBM_DIRECTIONS(LBM_GATHER)

    float out[LBM_Q];
    if (solid[cell]) {
        // bounce-back: every population leaves in the direction it came from
        out[0] = f[0];
#pragma unroll
        for (int q = 1; q < LBM_Q; q += 2) {
            out[q] = f[q + 1];
            out[q + 1] = f[q];
        }
    } else {
        float rho = 0.0f, jx = 0.0f, jy = 0.0f, jz = 0.0f;
#define LBM_MOMENTS(q, cx, cy, cz, w) \
    rho += f[q];                      \
    if (cx) jx += (cx) * f[q];        \
    if (cy) jy += (cy) * f[q];        \
    if (cz) jz += (cz) * f[q];
        LBM_DIRECTIONS(LBM_MOMENTS)
        const float inv_rho = 1.0f / rho;
        const float ux = jx * inv_rho, uy = jy * inv_rho, uz = jz * inv_rho;
        const float usq = 1.5f * (ux * ux + uy * uy + uz * uz);
#define LBM_COLLIDE(q, cx, cy, cz, w)                                              \
    {                                                                              \
        const float cu = 3.0f * ((cx) * ux + (cy) * uy + (cz) * uz);               \
        const float feq = (w) * rho * (1.0f + cu + 0.5f * cu * cu - usq);          \
        out[q] = f[q] + omega * (feq - f[q]) + 3.0f * (w) * (cx) * force_x;        \
    }
        LBM_DIRECTIONS(LBM_COLLIDE)
    }
#define LBM_SCATTER(q, cx, cy, cz, w) dst[(q) * n + cell] = out[q];
    LBM_DIRECTIONS(LBM_SCATTER)
}
