// Speckle-reducing anisotropic diffusion (stands in for Rodinia SRAD), two kernels per
// iteration over a 2D image with reflecting edges (an off-image neighbour is the pixel).
//   srad_coeff:  directional differences and the diffusion coefficient of every pixel,
//                from the instantaneous coefficient of variation q and the speckle scale q0
//                (q0^2 is computed by the host from a region of interest each iteration);
//   srad_update: divergence of c * grad J and the explicit update of J.
// The divisions use the fast hardware reciprocal path (__fdividef / __frcp_rn), which makes
// the first kernel heavy on the special-function unit.

#define BX 16
#define BY 16

extern "C" __global__ void srad_coeff(const float* __restrict__ J, float* __restrict__ dN, float* __restrict__ dS,
                                      float* __restrict__ dW, float* __restrict__ dE, float* __restrict__ C,
                                      int rows, int cols, float q0sqr)
{
    int x = blockIdx.x * BX + threadIdx.x;
    int y = blockIdx.y * BY + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int i = y * cols + x;
    float jc = J[i];
    float n = J[(y > 0 ? y - 1 : y) * cols + x] - jc;
    float s = J[(y < rows - 1 ? y + 1 : y) * cols + x] - jc;
    float w = J[y * cols + (x > 0 ? x - 1 : x)] - jc;
    float e = J[y * cols + (x < cols - 1 ? x + 1 : x)] - jc;

    float inv_jc = __frcp_rn(jc);
    float g2 = (n * n + s * s + w * w + e * e) * inv_jc * inv_jc;     // |grad J|^2 / J^2
    float lap = (n + s + w + e) * inv_jc;                             // laplacian / J
    float num = 0.5f * g2 - 0.0625f * lap * lap;
    float den = 1.0f + 0.25f * lap;
    float qsqr = __fdividef(num, den * den);
    float d = __fdividef(qsqr - q0sqr, q0sqr * (1.0f + q0sqr));
    float c = __frcp_rn(1.0f + d);
    c = fminf(fmaxf(c, 0.0f), 1.0f);

    dN[i] = n; dS[i] = s; dW[i] = w; dE[i] = e;
    C[i] = c;
}

extern "C" __global__ void srad_update(float* __restrict__ J, const float* __restrict__ dN,
                                       const float* __restrict__ dS, const float* __restrict__ dW,
                                       const float* __restrict__ dE, const float* __restrict__ C,
                                       int rows, int cols, float lambda)
{
    int x = blockIdx.x * BX + threadIdx.x;
    int y = blockIdx.y * BY + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int i = y * cols + x;
    float cc = C[i];
    float cs = C[(y < rows - 1 ? y + 1 : y) * cols + x];
    float ce = C[y * cols + (x < cols - 1 ? x + 1 : x)];
    float div = cc * dN[i] + cs * dS[i] + cc * dW[i] + ce * dE[i];
    J[i] = J[i] + 0.25f * lambda * div;
}
