// 03_float_arith.cu
// Exercises: float/double add/sub/mul/div, fmaf/fma, explicitly rounded
// intrinsics __fmaf_rn/rz/ru/rd, __fadd_rz, __fmul_ru, __fdiv_rn,
// __fsqrt_rn, __frcp_rn, __saturatef, fminf/fmaxf/fabsf, double variants
// __dadd_rn, __dmul_rz, __fma_rn, sqrt (double), copysign.

__global__ void float_arith(const float *a, const float *b, const float *c,
                            float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], z = c[i];
    float r = x + y - z;
    r += x * y / z;                  // IEEE div (full precision)
    r += fmaf(x, y, z);
    r += __fmaf_rn(x, y, z) + __fmaf_rz(x, y, z);
    r += __fmaf_ru(x, y, z) + __fmaf_rd(x, y, z);
    r += __fadd_rz(x, y) + __fmul_ru(x, z);
    r += __fdiv_rn(x, y) + __fsqrt_rn(fabsf(z)) + __frcp_rn(y);
    r += __saturatef(x);
    r += fminf(x, y) + fmaxf(y, z) + fabsf(x - z);
    r += copysignf(1.0f, y) - (-z);
    out[i] = r;
}

__global__ void double_arith(const double *a, const double *b, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    double r = x * y + x / y - (x - y);
    r += fma(x, y, 1.0);
    r += __dadd_rn(x, y) + __dmul_rz(x, y) + __fma_rn(x, y, r);
    r += __ddiv_ru(x, y) + __drcp_rn(y) + __dsqrt_rd(fabs(x));
    r += sqrt(fabs(y)) + fmin(x, y) + fmax(x, y) + fabs(r);
    out[i] = r;
}
