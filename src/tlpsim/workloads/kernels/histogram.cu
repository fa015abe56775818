// 256-bin byte histogram with shared-memory privatisation and global atomics
// (SDK histogram256 / Parboil histo style). The input is bytes packed four to a
// uint32 word; each thread walks a grid-strided set of words.
//
// histo_cta:      one 256-bin histogram per CTA in shared memory (1 KiB); every byte
//                 is a shared atomicAdd, then the CTA flushes its non-zero bins to the
//                 global histogram with atomicAdd.
// histo_subhist:  one private 256-bin histogram per half-warp (16 sub-histograms,
//                 16 KiB per 256-thread CTA), which cuts contention on shared atomics;
//                 the CTA then sums the sub-histograms bin by bin and flushes them with
//                 global atomicAdd. The 16 KiB of shared memory bound residency to
//                 three CTAs per SM on a 48 KiB Fermi SM.
#define BINS 256
#define BLOCK 256
#define SUBHISTS (BLOCK / 16)

extern "C" __global__ void __launch_bounds__(BLOCK)
histo_cta(const unsigned* __restrict__ words, int nwords, unsigned* __restrict__ hist) {
    __shared__ unsigned h[BINS];
    for (int b = threadIdx.x; b < BINS; b += BLOCK) h[b] = 0u;
    __syncthreads();

    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < nwords; i += gridDim.x * BLOCK) {
        unsigned w = words[i];
        atomicAdd(&h[w & 0xffu], 1u);
        atomicAdd(&h[(w >> 8) & 0xffu], 1u);
        atomicAdd(&h[(w >> 16) & 0xffu], 1u);
        atomicAdd(&h[w >> 24], 1u);
    }
    __syncthreads();

    for (int b = threadIdx.x; b < BINS; b += BLOCK) {
        unsigned c = h[b];
        if (c) atomicAdd(&hist[b], c);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
histo_subhist(const unsigned* __restrict__ words, int nwords, unsigned* __restrict__ hist) {
    __shared__ unsigned h[SUBHISTS * BINS];
    for (int b = threadIdx.x; b < SUBHISTS * BINS; b += BLOCK) h[b] = 0u;
    __syncthreads();

    unsigned* mine = h + (threadIdx.x >> 4) * BINS;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < nwords; i += gridDim.x * BLOCK) {
        unsigned w = words[i];
        atomicAdd(&mine[w & 0xffu], 1u);
        atomicAdd(&mine[(w >> 8) & 0xffu], 1u);
        atomicAdd(&mine[(w >> 16) & 0xffu], 1u);
        atomicAdd(&mine[w >> 24], 1u);
    }
    __syncthreads();

    for (int b = threadIdx.x; b < BINS; b += BLOCK) {
        unsigned c = 0u;
#pragma unroll
        for (int s = 0; s < SUBHISTS; ++s) c += h[s * BINS + b];
        if (c) atomicAdd(&hist[b], c);
    }
}
