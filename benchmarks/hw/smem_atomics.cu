// smem_atomics.cu -- the cost of contended shared-memory atomics: integer add (native
// ATOMS on sm_90) and float add (a compare-and-swap loop ptxas emits: LDS, FADD,
// ATOMS.CAST, retry). Not yet measured on the H200: tlpsim derives the loop's round
// (sm.shared_atomic_cas_round_cycles = 56) from the calibrated latencies, and
// kmeans_accumulate, whose time the rounds set, runs 47% faster in tlpsim than on the card.
//
// One warp on one SM. Its 32 lanes update words lane % m of a shared array (m = 32, 16,
// 8, 4, 2, 1: 32 / m lanes on each word), REPS dependent times: each update's address
// depends on the value the last one returned (integer) or on the loop (float, whose
// result is not returned), so consecutive updates do not overlap. %clock of warp 0
// around the timed updates / REPS = cycles per update.
//
// Build and run (H200): nvcc -arch=sm_90 -O3 -o smem_atomics smem_atomics.cu && ./smem_atomics
#include "hw_common.h"

#define REPS 256
#define PASSES 2

__global__ void iatom(int m, unsigned int *clk, int *out)
{
    __shared__ int s[32];
    s[threadIdx.x] = 0;
    __syncwarp();
    int w = threadIdx.x % m, t0 = 0, got = 0;
    for (int p = 0; p < PASSES; ++p) {
        t0 = read_clock();
        for (int r = 0; r < REPS; ++r) {
            got = atomicAdd(&s[(w + (got & 0x40000000)) & 31], 1);   // the address waits for the last result
        }
    }
    unsigned int t1 = read_clock();
    out[threadIdx.x] = got;
    if (threadIdx.x == 0) *clk = t1 - t0;
}

__global__ void fatom(int m, unsigned int *clk, float *out)
{
    __shared__ float s[32];
    s[threadIdx.x] = 0.0f;
    __syncwarp();
    int w = threadIdx.x % m;
    unsigned int t0 = 0;
    for (int p = 0; p < PASSES; ++p) {
        t0 = read_clock();
        for (int r = 0; r < REPS; ++r) {
            atomicAdd(&s[w], 1.0f);
            __syncwarp();                                         // one update at a time
        }
    }
    unsigned int t1 = read_clock();
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x];
    if (threadIdx.x == 0) *clk = t1 - t0;
}

int main()
{
    unsigned int *dclk, clk;
    int *iout;
    float *fout;
    CHECK(cudaMalloc(&dclk, sizeof(unsigned int)));
    CHECK(cudaMalloc(&iout, 32 * sizeof(int)));
    CHECK(cudaMalloc(&fout, 32 * sizeof(float)));
    const int ms[] = {32, 16, 8, 4, 2, 1};
    for (int kind = 0; kind < 2; ++kind) {
        for (int k = 0; k < 6; ++k) {
            if (kind == 0) iatom<<<1, 32>>>(ms[k], dclk, iout);
            else fatom<<<1, 32>>>(ms[k], dclk, fout);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(&clk, dclk, sizeof(clk), cudaMemcpyDeviceToHost));
            printf("smem_atomics %s lanes_per_word=%d timed=%d clock_cycles=%u cycles_per_update=%.2f\n",
                   kind == 0 ? "add.s32" : "add.f32", 32 / ms[k], REPS, clk, (double)clk / REPS);
        }
    }
    printf("PASS\n");
    cudaFree(dclk); cudaFree(iout); cudaFree(fout);
    return 0;
}
