// 3D finite-difference stencil of radius 4 (stands in for 3DFD, the CUDA SDK's FDTD3d,
// in Lee et al., HPCA 2014), with every input read from global memory.
//
// out = c0 * in + sum over r = 1..4 of c_r * (the six points at distance r along x, y, z),
// on the interior of an nx x ny x nz volume (a 4-point halo on every side stays as it
// is). A 2D grid of 16x16 CTAs covers the interior (x, y) plane; each thread marches
// its column in z. The SDK stages the plane in shared memory and keeps the z column in
// registers; here all 25 points come through the caches, so a CTA re-reads a window of
// 9 planes of its 24x24-point tile (about 40 KiB): more than a 16 KiB L1 holds even for
// one CTA, and with a few CTAs per SM on 15 SMs more than the 768 KiB L2.

#define RADIUS 4

__constant__ float c_coeff[RADIUS + 1];

extern "C" __global__ void fd3d(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
    int j = blockIdx.y * blockDim.y + threadIdx.y + RADIUS;
    if (i >= nx - RADIUS || j >= ny - RADIUS) return;
    const long plane = (long)nx * ny;
    long idx = RADIUS * plane + (long)j * nx + i;
#pragma unroll 1
    for (int k = RADIUS; k < nz - RADIUS; ++k, idx += plane) {
        float v = c_coeff[0] * in[idx];
#pragma unroll 1
        for (int r = 1; r <= RADIUS; ++r) {
            float s = in[idx - r] + in[idx + r];
            s += in[idx - r * nx] + in[idx + r * nx];
            s += in[idx - r * plane] + in[idx + r * plane];
            v += c_coeff[r] * s;
        }
        out[idx] = v;
    }
}
