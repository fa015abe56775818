// icache_cold.cu -- what a kernel's first pass over its code costs: cycles per 128-byte
// line of straight-line code fetched cold, against the same code once it is cached.
// The h200 preset models a 128 KB L1I with a 16-line stream-buffer prefetcher (Huerta et al.,
// arXiv:2503.20481, §5.2: estimated on Ampere, not measured on Hopper). Without prefetch
// sgemm_tiled would be +72 % against this card (every line a serial L2 round trip); with
// the stream buffer the cold cost is about one round trip per kernel and SM. This measures
// which the card does, and how far ahead it runs (docs/validation-h200.md).
//
// One CTA of W warps on one SM (W = 1, 4, 32). The body is LINES lines of SASS, eight
// 16-byte FADDs each, run twice (a loop that ptxas must not unroll): the first pass
// fetches every line cold, the second finds them cached. Each warp's lane 0 records the
// %clock interval of each pass. Prints, per LINES and W, the slowest warp's cold and
// warm cycles and their difference per line. Without prefetch the difference is about
// one L2 round trip per line (~260 cycles); with sequential prefetch, far less.
//
// Build and run (H200): nvcc -arch=sm_90 -O3 -o icache_cold icache_cold.cu && ./icache_cold
#include "hw_common.h"

template <int LINES>
__global__ void straight(unsigned int *cycles, float *sink)
{
    float a = threadIdx.x, b = 1.0f, c = 2.0f, d = 3.0f;
    const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll 1
    for (int pass = 0; pass < 2; ++pass) {
        __syncthreads();
        unsigned int t0 = read_clock();
#pragma unroll
        for (int i = 0; i < LINES * 2; ++i) {   // four FADDs an iteration: one line per two
            asm volatile("add.f32 %0, %0, %1;" : "+f"(a) : "f"(b));
            asm volatile("add.f32 %0, %0, %1;" : "+f"(c) : "f"(d));
            asm volatile("add.f32 %0, %0, %1;" : "+f"(b) : "f"(c));
            asm volatile("add.f32 %0, %0, %1;" : "+f"(d) : "f"(a));
        }
        unsigned int t1 = read_clock();
        if ((threadIdx.x & 31) == 0) cycles[pass * warps + warp] = t1 - t0;
    }
    sink[threadIdx.x] = a + b + c + d;
}

template <int LINES>
int measure(unsigned int *dcyc, float *sink)
{
    static unsigned int cyc[2 * 32];
    const int ws[] = {1, 4, 32};
    for (int k = 0; k < 3; ++k) {
        int w = ws[k];
        straight<LINES><<<1, 32 * w>>>(dcyc, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(cyc, dcyc, 2 * w * sizeof(unsigned int), cudaMemcpyDeviceToHost));
        unsigned int cold = 0, warm = 0;
        for (int i = 0; i < w; ++i) {
            cold = cyc[i] > cold ? cyc[i] : cold;
            warm = cyc[w + i] > warm ? cyc[w + i] : warm;
        }
        printf("lines %5d warps %2d: cold %8u warm %8u cycles, cold - warm %7.1f cycles per line\n", LINES, w,
               cold, warm, (double)((long long)cold - (long long)warm) / LINES);
    }
    return 0;
}

int main()
{
    unsigned int *dcyc;
    float *sink;
    CHECK(cudaMalloc(&dcyc, 2 * 32 * sizeof(unsigned int)));
    CHECK(cudaMalloc(&sink, 1024 * sizeof(float)));
    if (measure<16>(dcyc, sink) || measure<64>(dcyc, sink) || measure<256>(dcyc, sink) ||
        measure<1024>(dcyc, sink))
        return 1;
    printf("PASS\n");
    return 0;
}
