// 13_dynamic_shared.cu
// Exercises: extern __shared__ dynamic shared memory reinterpreted as
// several element types via pointer casts (float, int, double,
// unsigned char), carving sub-arrays at runtime offsets, two kernels
// sharing the same extern symbol name, shared-address arithmetic.

extern __shared__ unsigned char smem_raw[];

__global__ void dyn_shared_mixed(const float *fin, const int *iin, float *out, int n)
{
    // layout: [double d[nthreads]] [float f[nthreads]] [int k[nthreads]] [uchar b[nthreads]]
    int t = threadIdx.x, nt = blockDim.x;
    double *d = reinterpret_cast<double *>(smem_raw);
    float *f = reinterpret_cast<float *>(d + nt);
    int *k = reinterpret_cast<int *>(f + nt);
    unsigned char *b = reinterpret_cast<unsigned char *>(k + nt);
    int i = blockIdx.x * nt + t;
    float fv = i < n ? fin[i] : 0.0f;
    int iv = i < n ? iin[i] : 0;
    d[t] = (double)fv * 2.0;
    f[t] = fv;
    k[t] = iv;
    b[t] = (unsigned char)(iv & 0xff);
    __syncthreads();
    int o = (t + 1) % nt;
    float r = (float)d[o] + f[o] + (float)k[o] + (float)b[o];
    if (i < n) out[i] = r;
}

extern __shared__ float smem_f[];

__global__ void dyn_shared_reverse(float *data, int n)
{
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    smem_f[t] = i < n ? data[i] : 0.0f;
    __syncthreads();
    if (i < n) data[i] = smem_f[blockDim.x - 1 - t];
}
