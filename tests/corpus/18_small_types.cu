// 18_small_types.cu
// Exercises: 8/16-bit loads and stores (char, signed char, unsigned char,
// short, unsigned short, bool), sign/zero extension, 64-bit pointer
// arithmetic (pointer differences, byte offsets, size_t indices, negative
// strides), volatile shared memory (warp-synchronous style reads), casts
// between pointer types.

__global__ void small_types(const char *c, const unsigned char *uc, const short *s,
                            const unsigned short *us, const bool *b,
                            signed char *oc, short *os, bool *ob, int *oi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = c[i] + uc[i] + s[i] + us[i] + (b[i] ? 1000 : 0);
    oc[i] = (signed char)(v >> 3);
    os[i] = (short)(s[i] * uc[i]);
    ob[i] = (v & 1) != 0 && b[i];
    oi[i] = v;
}

__global__ void pointer_arith(const float *base, float *out, size_t n, long long stride)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float *p = base + i;                         // 64-bit offset
    const float *q = base + (n - 1) - i;               // reverse
    const char *bytes = reinterpret_cast<const char *>(base);
    const float *r = reinterpret_cast<const float *>(bytes + ((i * 4 * stride) % (n * 4)));
    long long diff = q - p;                            // pointer difference
    out[i] = *p + *q + *r + (float)diff;
}

__global__ void volatile_shared(const int *in, int *out)
{
    __shared__ volatile int vs[64];
    int t = threadIdx.x;
    vs[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
        vs[t] += vs[t + 32];                           // every access ld/st.volatile
        __syncwarp();
        vs[t] += vs[(t + 16) & 31];
    }
    __syncthreads();
    if (t == 0) out[blockIdx.x] = vs[0];
}
