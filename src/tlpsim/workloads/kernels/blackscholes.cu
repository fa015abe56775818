// European call and put prices by the Black-Scholes formula (stands in for the
// CUDA SDK BlackScholes sample).  A grid-stride loop over the options; each option
// costs a logarithm, a square root, three exponentials and two divisions -- all
// issued to the special-function unit via the fast intrinsics -- plus two
// evaluations of a 5th-order polynomial approximation of the normal CDF.

__device__ __forceinline__ float normal_cdf(float d) {
    // Abramowitz & Stegun 26.2.17, |error| < 7.5e-8
    const float p = 0.2316419f;
    const float b1 = 0.319381530f, b2 = -0.356563782f, b3 = 1.781477937f, b4 = -1.821255978f,
                b5 = 1.330274429f;
    const float inv_sqrt_2pi = 0.398942280401432678f;
    float k = __fdividef(1.0f, fmaf(p, fabsf(d), 1.0f));
    float poly = k * (b1 + k * (b2 + k * (b3 + k * (b4 + k * b5))));
    float tail = inv_sqrt_2pi * __expf(-0.5f * d * d) * poly;
    return d > 0.0f ? 1.0f - tail : tail;
}

extern "C" __global__ void black_scholes(const float* __restrict__ spot, const float* __restrict__ strike,
                                         const float* __restrict__ years, float* __restrict__ call,
                                         float* __restrict__ put, float rate, float vol, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float s = spot[i], x = strike[i], t = years[i];
        float sqrt_t = sqrtf(t);
        float vs = vol * sqrt_t;
        float d1 = __fdividef(__logf(__fdividef(s, x)) + (rate + 0.5f * vol * vol) * t, vs);
        float d2 = d1 - vs;
        float n1 = normal_cdf(d1);
        float n2 = normal_cdf(d2);
        float disc = x * __expf(-rate * t);
        call[i] = s * n1 - disc * n2;
        put[i] = disc * (1.0f - n2) - s * (1.0f - n1);
    }
}
