// 09_loops.cu
// Exercises: data-dependent loops with break and continue, do-while,
// while, #pragma unroll (full and partial), #pragma unroll 1, grid-stride
// loops, nested loops with divergent trip counts.

__global__ void loops(const int *in, int *out, int n, int limit)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += blockDim.x * gridDim.x) {          // grid-stride loop
        int v = in[i];
        int acc = 0;
        for (int k = 0; k < limit; ++k) {        // break / continue
            if ((v + k) % 3 == 0) continue;
            if (acc > 1000) break;
            acc += v * k;
        }
        int steps = 0;
        unsigned x = (unsigned)v | 1u;
        do {                                     // do-while (Collatz steps)
            x = (x & 1u) ? 3u * x + 1u : x >> 1;
            ++steps;
        } while (x != 1u && steps < 64);
        int w = v;
        while (w > 10) w /= 2;                   // while loop
        out[i] = acc + steps + w;
    }
}

__global__ void unrolled(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float c[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) c[k] = in[(i + k) % n];   // fully unrolled
    float s = 0.0f;
#pragma unroll 4
    for (int k = 0; k < n; ++k) s += in[k] * c[k & 7];    // partially unrolled
#pragma unroll 1
    for (int k = 0; k < i % 5; ++k) s *= 0.5f;            // not unrolled
    for (int a = 0; a < (i & 3); ++a)                      // nested, divergent
        for (int b = a; b < 4; ++b) s += (float)(a * b);
    out[i] = s;
}
