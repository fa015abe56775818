// 36_rng.cu
// Exercises: in-kernel pseudo random number generators: xorshift32,
// xorshift64*, 32-bit LCG, a splitmix64-style hash for seeding (64-bit
// multiply / shifts), conversion of random bits to float in [0,1) with
// 0x1p-24f scaling, Monte-Carlo estimate of pi with a per-block count.

__device__ __forceinline__ unsigned xorshift32(unsigned &s)
{
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    return s;
}

__device__ __forceinline__ unsigned long long xorshift64star(unsigned long long &s)
{
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
}

__device__ __forceinline__ unsigned long long splitmix64(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__global__ void monte_carlo_pi(unsigned long long seed, int samples, unsigned long long *hits)
{
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long s64 = splitmix64(seed + gid) | 1ull;
    unsigned s32 = (unsigned)(s64 >> 32) | 1u;
    unsigned lcg = (unsigned)s64;
    unsigned count = 0;
    for (int k = 0; k < samples; ++k) {
        unsigned bits = (k & 1) ? (unsigned)(xorshift64star(s64) >> 40)   // alternate
                                : xorshift32(s32) >> 8;                   // generators
        float x = bits * 0x1p-24f;
        lcg = lcg * 1664525u + 1013904223u;                  // LCG
        float y = (lcg >> 8) * 0x1p-24f;
        count += (x * x + y * y <= 1.0f);
    }
    __shared__ unsigned block_count;
    if (threadIdx.x == 0) block_count = 0;
    __syncthreads();
    atomicAdd(&block_count, count);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(hits, (unsigned long long)block_count);
}

__global__ void fill_random(float *out, unsigned seed, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long s = splitmix64(((unsigned long long)seed << 32) ^ i);
    out[i] = (float)(xorshift64star(s) >> 40) * 0x1p-24f * 2.0f - 1.0f;
}
