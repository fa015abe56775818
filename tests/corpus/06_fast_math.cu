// 06_fast_math.cu
// Exercises: fast-math approximate intrinsics: __expf, __logf, __sinf,
// __cosf, __powf, __sincosf, __tanf, __exp10f, __log2f, __log10f, rsqrtf,
// __fdividef, exp2f, log2f (ex2.approx / lg2.approx / sin.approx /
// cos.approx / rsqrt.approx / div.approx / rcp.approx).

__global__ void fast_math(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float r = __expf(x) + __logf(fabsf(y) + 1.0f);
    r += __sinf(x) * __cosf(y);
    r += __powf(fabsf(x), y);
    float s, c;
    __sincosf(y, &s, &c);
    r += s - c + __tanf(x);
    r += __exp10f(x) + __log2f(fabsf(x) + 2.0f) + __log10f(fabsf(y) + 2.0f);
    r += rsqrtf(fabsf(x) + 1.0f);
    r += __fdividef(x, y);
    r += exp2f(x) + log2f(fabsf(y) + 0.5f);
    r += __frsqrt_rn(fabsf(y) + 1.0f);
    out[i] = r;
}
