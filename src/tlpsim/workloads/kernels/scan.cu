// Exclusive prefix sum of a large uint32 array in three launches:
//   scan_blocks: each CTA of 256 threads scans a 512-element segment in shared memory
//                with a work-efficient up-sweep / down-sweep (one barrier per level;
//                addresses padded by one word per 32 to avoid bank conflicts) and
//                records the segment total;
//   scan_sums:   one CTA scans the segment totals in place, 512 at a time with a carry;
//   scan_add:    every segment adds its scanned offset back.
#define BLOCK 256
#define SEG (2 * BLOCK)
#define PAD(i) ((i) + ((i) >> 5))

// Exclusive scan of s[PAD(0..SEG-1)] in place; returns the segment total. Ends with a
// barrier, so every thread may read any element afterwards.
__device__ unsigned segment_scan(unsigned* s) {
    const int t = threadIdx.x;
    int offset = 1;
    for (int d = SEG >> 1; d > 0; d >>= 1) {  // up-sweep
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1;
            int bi = offset * (2 * t + 2) - 1;
            s[PAD(bi)] += s[PAD(ai)];
        }
        offset <<= 1;
    }
    __syncthreads();
    const unsigned total = s[PAD(SEG - 1)];
    __syncthreads();
    if (t == 0) s[PAD(SEG - 1)] = 0u;
    for (int d = 1; d < SEG; d <<= 1) {  // down-sweep
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1;
            int bi = offset * (2 * t + 2) - 1;
            unsigned x = s[PAD(ai)];
            s[PAD(ai)] = s[PAD(bi)];
            s[PAD(bi)] += x;
        }
    }
    __syncthreads();
    return total;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_blocks(const unsigned* __restrict__ in, unsigned* __restrict__ out, unsigned* __restrict__ sums, int n) {
    __shared__ unsigned s[PAD(SEG)];
    const int t = threadIdx.x;
    const int base = blockIdx.x * SEG;
    const int i0 = base + t, i1 = base + t + BLOCK;
    s[PAD(t)] = i0 < n ? in[i0] : 0u;
    s[PAD(t + BLOCK)] = i1 < n ? in[i1] : 0u;
    unsigned total = segment_scan(s);
    if (i0 < n) out[i0] = s[PAD(t)];
    if (i1 < n) out[i1] = s[PAD(t + BLOCK)];
    if (t == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_sums(unsigned* __restrict__ sums, int count) {
    __shared__ unsigned s[PAD(SEG)];
    const int t = threadIdx.x;
    unsigned carry = 0u;
    for (int base = 0; base < count; base += SEG) {
        const int i0 = base + t, i1 = base + t + BLOCK;
        s[PAD(t)] = i0 < count ? sums[i0] : 0u;
        s[PAD(t + BLOCK)] = i1 < count ? sums[i1] : 0u;
        unsigned total = segment_scan(s);
        if (i0 < count) sums[i0] = s[PAD(t)] + carry;
        if (i1 < count) sums[i1] = s[PAD(t + BLOCK)] + carry;
        carry += total;
        __syncthreads();  // the next chunk overwrites s
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_add(unsigned* __restrict__ out, const unsigned* __restrict__ sums, int n) {
    const unsigned add = sums[blockIdx.x];
    const int i0 = blockIdx.x * SEG + threadIdx.x, i1 = i0 + BLOCK;
    if (i0 < n) out[i0] += add;
    if (i1 < n) out[i1] += add;
}
