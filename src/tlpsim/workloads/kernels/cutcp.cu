// Cutoff Coulombic potential on one 2-D slice of a lattice (stands in for
// Parboil CUTCP and the SDK-style direct Coulomb summation).  The atoms of
// the current chunk sit in constant memory as (x, y, dz^2, q); each thread
// owns CUTCP_UNROLL lattice points of one row, spaced blockDim.x points apart
// (so stores coalesce), and keeps one partial energy per point in registers.
// The cutoff uses the CUTCP smoothing  e += q/r * (1 - r^2/rc^2)^2  for r < rc.

#define CUTCP_MAX_ATOMS 2048     // atoms per constant-memory chunk (32 KiB)
#define CUTCP_UNROLL 8           // lattice points per thread

__constant__ float4 c_atoms[CUTCP_MAX_ATOMS];

extern "C" __global__ void cutcp_slice(float* __restrict__ energy, int nx, float spacing, int natoms,
                                       float inv_cutoff2) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col0 = blockIdx.x * blockDim.x * CUTCP_UNROLL + threadIdx.x;
    const float step = blockDim.x * spacing;     // x distance between this thread's points
    const float x0 = col0 * spacing;
    const float y = row * spacing;
    float* out = energy + (size_t)row * nx + col0;

    float e[CUTCP_UNROLL];
#pragma unroll
    for (int u = 0; u < CUTCP_UNROLL; ++u) e[u] = out[u * blockDim.x];

    for (int a = 0; a < natoms; ++a) {
        float4 atom = c_atoms[a];
        float dy = y - atom.y;
        float dyz2 = dy * dy + atom.z;
        float dx = x0 - atom.x;
#pragma unroll
        for (int u = 0; u < CUTCP_UNROLL; ++u) {
            float r2 = dx * dx + dyz2;
            float s = fmaxf(1.0f - r2 * inv_cutoff2, 0.0f);   // 0 beyond the cutoff
            e[u] += atom.w * rsqrtf(r2) * (s * s);
            dx += step;
        }
    }
#pragma unroll
    for (int u = 0; u < CUTCP_UNROLL; ++u) out[u * blockDim.x] = e[u];
}
