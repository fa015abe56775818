// 26_names_templates.cu
// Exercises: kernel naming/linkage: a templated kernel instantiated for
// float, int and double (mangled names with template args), a template
// with a non-type parameter, a kernel in a namespace (and a nested one),
// an extern "C" kernel (unmangled name), overloaded kernels with the same
// plain name but different parameter lists (name ambiguity), a static
// (internal linkage) kernel, __launch_bounds__ with one and two arguments
// (.maxntid / .minnctapersm), __maxnreg__ style register limit (.maxnreg).

template <typename T>
__global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
template __global__ void axpy<float>(float, const float *, float *, int);
template __global__ void axpy<int>(int, const int *, int *, int);
template __global__ void axpy<double>(double, const double *, double *, int);

template <int K, typename T>
__global__ void scale_k(T *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= (T)K;
}
template __global__ void scale_k<3, float>(float *, int);
template __global__ void scale_k<-2, long long>(long long *, int);

namespace corpus {
__global__ void ns_kernel(int *p) { p[threadIdx.x] += 1; }
namespace inner {
__global__ void ns_kernel(int *p) { p[threadIdx.x] += 2; }
}
}

extern "C" __global__ void c_linkage_kernel(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = -p[i];
}

// overloads: same plain name "fill"
__global__ void fill(int *p, int v) { p[threadIdx.x] = v; }
__global__ void fill(float *p, float v) { p[threadIdx.x] = v; }
__global__ void fill(int *p, int v, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x) p[i] = v;
}

// internal linkage: emitted as ".entry" without ".visible" (kept alive by the
// host-side launch below)
static __global__ void internal_kernel(int *p) { p[0] = 7; }
void host_ref_internal(int *p) { internal_kernel<<<1, 1>>>(p); }

__global__ void __launch_bounds__(256) bounded1(float *p) { p[threadIdx.x] *= 2.0f; }
__global__ void __launch_bounds__(128, 4) bounded2(float *p) { p[threadIdx.x] += 1.0f; }
__global__ void __maxnreg__(32) reg_limited(float *p) { p[threadIdx.x] -= 1.0f; }
