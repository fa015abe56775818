// l1_merge.cu -- how many warps' loads one in-flight L1 miss serves (the L1's MSHR merge
// limit, l1d.mshr_max_merge; GPGPU-Sim's Volta value is 8). Not yet measured on the
// H200: sgemm_naive's time in tlpsim depends on it (docs/validation-h200.md).
//
// One CTA of W warps on one SM (W = 1, 2, 4, ..., 32). Each round, after a barrier, every
// warp reads the same 128-byte line with one coalesced ld.global.f32 (lane i: word i) and
// uses the value at once; the line is new to the SM each round (rounds step 4 KB through
// a 16 MB buffer that cudaMemset has just written, so the reads hit the L2, not the L1).
// Each warp's lane 0 records the %clock interval from just before its load to just after
// its use. If the L1 merges every warp into the one miss, all W warps see about one L2
// latency; with a merge limit M, warps past M wait for the fill and then hit, so the
// slowest warp's interval jumps once W > M. Prints, per W, the mean over rounds of the
// slowest warp's and of the average warp's interval (cycles).
//
// Build and run (H200): nvcc -arch=sm_90 -O3 -o l1_merge l1_merge.cu && ./l1_merge
#include "hw_common.h"

#define ROUNDS 64
#define STEP_WORDS 1024          // 4 KB between rounds' lines
#define BUF_WORDS (4 << 20)      // 16 MB

__global__ void merge(const float *buf, unsigned int *cycles, float *sink)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float acc = 0.0f;
    for (int r = 0; r < ROUNDS; ++r) {
        const float *p = buf + (size_t)r * STEP_WORDS + lane;
        __syncthreads();
        unsigned int t0 = read_clock();
        float v;
        asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
        acc += v;                                       // the use waits for the data
        asm volatile("" ::"f"(acc));
        unsigned int t1 = read_clock();
        if (lane == 0) cycles[r * warps + warp] = t1 - t0;
    }
    sink[threadIdx.x] = acc;
}

int main()
{
    float *buf, *sink;
    unsigned int *dcyc;
    static unsigned int cyc[ROUNDS * 32];
    CHECK(cudaMalloc(&buf, BUF_WORDS * sizeof(float)));
    CHECK(cudaMalloc(&sink, 1024 * sizeof(float)));
    CHECK(cudaMalloc(&dcyc, sizeof(cyc)));
    const int ws[] = {1, 2, 4, 6, 8, 10, 12, 16, 24, 32};
    for (int k = 0; k < (int)(sizeof(ws) / sizeof(ws[0])); ++k) {
        int w = ws[k];
        CHECK(cudaMemset(buf, 0, BUF_WORDS * sizeof(float)));   // the lines into the L2
        merge<<<1, 32 * w>>>(buf, dcyc, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(cyc, dcyc, ROUNDS * w * sizeof(unsigned int), cudaMemcpyDeviceToHost));
        double slowest = 0, mean = 0;
        for (int r = 1; r < ROUNDS; ++r) {               // round 0 warms the instruction cache
            unsigned int mx = 0;
            for (int i = 0; i < w; ++i) {
                unsigned int c = cyc[r * w + i];
                mx = c > mx ? c : mx;
                mean += c;
            }
            slowest += mx;
        }
        printf("l1_merge warps=%d rounds=%d slowest_warp_cycles=%.1f mean_warp_cycles=%.1f\n", w, ROUNDS - 1,
               slowest / (ROUNDS - 1), mean / ((ROUNDS - 1) * w));
    }
    printf("PASS\n");
    cudaFree(buf); cudaFree(sink); cudaFree(dcyc);
    return 0;
}
