// 2D finite-difference time-domain electromagnetics (stands in for Polybench FDTD-2D):
// per time step three dependent kernels over an NX x NY grid (row-major [i][j], threads
// along j): the E-field components ey and ex from the curl of hz, then hz from the new
// E field. Row 0 of ey is driven by a source value for the step.

extern "C" __global__ void fdtd_ey(float* __restrict__ ey, const float* __restrict__ hz,
                                   const float* __restrict__ source, int t, int nx, int ny)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    int k = i * ny + j;
    if (i == 0)
        ey[k] = source[t];
    else
        ey[k] = ey[k] - 0.5f * (hz[k] - hz[k - ny]);
}

extern "C" __global__ void fdtd_ex(float* __restrict__ ex, const float* __restrict__ hz, int nx, int ny)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny || j == 0) return;
    int k = i * ny + j;
    ex[k] = ex[k] - 0.5f * (hz[k] - hz[k - 1]);
}

extern "C" __global__ void fdtd_hz(float* __restrict__ hz, const float* __restrict__ ex,
                                   const float* __restrict__ ey, int nx, int ny)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx - 1 || j >= ny - 1) return;
    int k = i * ny + j;
    hz[k] = hz[k] - 0.7f * (ex[k + 1] - ex[k] + ey[k + ny] - ey[k]);
}
