// Jacobi relaxation of the 3D Laplace equation (stands in for LPS, the GPGPU-Sim
// distribution's laplace3d by Mike Giles, and for the SDK's FDTD3d shape).
//
// A 2D grid of 2D CTAs covers the (x, y) plane; each thread owns one (x, y) column and
// marches it in z, replacing interior points by the mean of their six neighbours and
// copying the boundary faces through. Nothing is staged in shared memory: every
// neighbour comes from global memory, so the reuse of a plane (read as z+1, z and z-1 in
// three steps, and by the CTA's neighbouring rows) is caught by the L1 only while the
// CTA's three-plane window stays there. A 16x8 CTA's window is 3 planes x 10 rows x 1-2
// lines, about 7.5 KiB: two such CTAs fill a 16 KiB Fermi L1, and with more the window
// thrashes to the L2.

extern "C" __global__ void laplace3d(const float* __restrict__ u1, float* __restrict__ u2, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    const long plane = (long)nx * ny;
    long idx = (long)j * nx + i;
    bool edge = i == 0 || i == nx - 1 || j == 0 || j == ny - 1;
    const float sixth = 1.0f / 6.0f;
#pragma unroll 1
    for (int k = 0; k < nz; ++k, idx += plane) {
        if (edge || k == 0 || k == nz - 1) {
            u2[idx] = u1[idx];
        } else {
            u2[idx] = (u1[idx - 1] + u1[idx + 1] + u1[idx - nx] + u1[idx + nx] + u1[idx - plane] + u1[idx + plane])
                      * sixth;
        }
    }
}
