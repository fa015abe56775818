// 11_device_funcs.cu
// Exercises: non-inlined device functions (__noinline__ -> .func + call
// with .param space), a device function returning a struct (return by
// .param aggregate), a function with many (10) parameters, a void
// function writing through a pointer, a call chain, an inlined helper.

struct Stats { float mean; float var; int count; };

__device__ __noinline__ Stats make_stats(const float *p, int n)
{
    Stats s = {0.0f, 0.0f, n};
    for (int k = 0; k < n; ++k) s.mean += p[k];
    s.mean /= (float)n;
    for (int k = 0; k < n; ++k) { float d = p[k] - s.mean; s.var += d * d; }
    s.var /= (float)n;
    return s;
}

__device__ __noinline__ float many_params(float a, float b, float c, float d,
                                          int e, int f, double g, long long h,
                                          unsigned char k, const float *ptr)
{
    return a * b + c * d + (float)(e - f) + (float)g + (float)h + (float)k + ptr[e & 3];
}

__device__ __noinline__ void write_pair(int *dst, int a, int b)
{
    dst[0] = a; dst[1] = b;
}

__device__ __noinline__ int leaf(int x) { return x * x + 1; }
__device__ __noinline__ int middle(int x) { return leaf(x) + leaf(x + 1); }
__device__ __forceinline__ int inlined(int x) { return x << 2; }

__global__ void device_funcs(const float *data, float *out, int *pairs, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Stats s = make_stats(data + (i & ~7), 8);
    float m = many_params(s.mean, s.var, data[i], 2.0f, i, s.count,
                          0.25, (long long)i * 1000000007ll, (unsigned char)i, data);
    out[i] = m;
    write_pair(pairs + 2 * i, middle(i), inlined(i));
}
