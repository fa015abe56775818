// 07_libm.cu
// Exercises: full-precision libm calls that expand to long inline code
// (range reduction, polynomial evaluation, special-case branches):
// expf, logf, sinf, cosf, tanhf, powf, erff, atan2f, fmodf (float);
// sqrt, exp, log, sin (double).

__global__ void libm_float(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float r = expf(x) + logf(y);
    r += sinf(x) + cosf(y);
    r += tanhf(x - y);
    r += powf(x, y);
    r += erff(x);
    r += atan2f(y, x);
    r += fmodf(x, y);
    out[i] = r;
}

__global__ void libm_double(const double *a, const double *b, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    out[i] = sqrt(x) + exp(y) + log(x + 1.0) + sin(y);
}
