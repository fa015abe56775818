// Monte-Carlo pricing of European call options (stands in for the CUDA SDK
// MonteCarlo sample).  Grid (blocks per option, options); each thread runs its
// own xorshift128 generator -- seeded by hashing its global thread id -- and
// simulates `pairs` pairs of terminal prices: a Box-Muller transform (log, sqrt,
// cos, sin on the SFU) turns two uniforms into two normal deviates, each priced
// with an exponential.  Per-thread sums of payoffs and squared payoffs are
// reduced across the CTA in shared memory (tree, one barrier per level), and
// mc_finalize turns the per-CTA partial sums into a discounted price and its
// standard error.

#define THREADS 256

struct Xorshift128 {
    unsigned x, y, z, w;
};

__device__ __forceinline__ unsigned mix32(unsigned v) {
    v = (v ^ 61u) ^ (v >> 16);
    v *= 0x27d4eb2du;
    v ^= v >> 15;
    v *= 0x9e3779b1u;
    v ^= v >> 13;
    return v;
}

__device__ __forceinline__ unsigned next_u32(Xorshift128& s) {
    unsigned t = s.x ^ (s.x << 11);
    s.x = s.y;
    s.y = s.z;
    s.z = s.w;
    s.w = s.w ^ (s.w >> 19) ^ (t ^ (t >> 8));
    return s.w;
}

// uniform in (0, 1], exactly representable in float32
__device__ __forceinline__ float next_uniform(Xorshift128& s) {
    return (float)((next_u32(s) >> 8) + 1u) * 5.9604644775390625e-8f;
}

extern "C" __global__ void mc_paths(const float* __restrict__ spot, const float* __restrict__ strike,
                                    const float* __restrict__ years, float* __restrict__ partial,
                                    float rate, float vol, int pairs, unsigned seed) {
    __shared__ float s_sum[THREADS];
    __shared__ float s_sq[THREADS];
    const int opt = blockIdx.y;
    const unsigned gid = (unsigned)((opt * gridDim.x + blockIdx.x) * THREADS + threadIdx.x);

    Xorshift128 st;
    st.x = mix32(gid * 4u + 0u + seed);
    st.y = mix32(gid * 4u + 1u + seed);
    st.z = mix32(gid * 4u + 2u + seed);
    st.w = mix32(gid * 4u + 3u + seed) | 1u;      // never the all-zero state

    const float s0 = spot[opt], k = strike[opt], t = years[opt];
    const float drift = (rate - 0.5f * vol * vol) * t;
    const float diffusion = vol * sqrtf(t);

    float sum = 0.0f, sq = 0.0f;
    for (int p = 0; p < pairs; ++p) {
        float u1 = next_uniform(st);
        float u2 = next_uniform(st);
        float radius = sqrtf(-2.0f * __logf(u1));
        float angle = 6.28318530717958648f * u2 - 3.14159265358979324f;   // [-pi, pi)
        float z0 = radius * __cosf(angle);
        float z1 = radius * __sinf(angle);
        float pay0 = fmaxf(s0 * __expf(drift + diffusion * z0) - k, 0.0f);
        float pay1 = fmaxf(s0 * __expf(drift + diffusion * z1) - k, 0.0f);
        sum += pay0 + pay1;
        sq += pay0 * pay0 + pay1 * pay1;
    }

    s_sum[threadIdx.x] = sum;
    s_sq[threadIdx.x] = sq;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            s_sum[threadIdx.x] += s_sum[threadIdx.x + stride];
            s_sq[threadIdx.x] += s_sq[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int cta = opt * gridDim.x + blockIdx.x;
        partial[2 * cta] = s_sum[0];
        partial[2 * cta + 1] = s_sq[0];
    }
}

extern "C" __global__ void mc_finalize(const float* __restrict__ partial, const float* __restrict__ years,
                                       float* __restrict__ price, float* __restrict__ stderr_,
                                       float rate, int ctas_per_option, int paths, int n_options) {
    int opt = blockIdx.x * blockDim.x + threadIdx.x;
    if (opt >= n_options) return;
    float sum = 0.0f, sq = 0.0f;
    for (int c = 0; c < ctas_per_option; ++c) {
        sum += partial[2 * (opt * ctas_per_option + c)];
        sq += partial[2 * (opt * ctas_per_option + c) + 1];
    }
    float mean = sum / (float)paths;
    float var = fmaxf(sq / (float)paths - mean * mean, 0.0f) * ((float)paths / (float)(paths - 1));
    float disc = expf(-rate * years[opt]);
    price[opt] = disc * mean;
    stderr_[opt] = disc * sqrtf(var / (float)paths);
}
