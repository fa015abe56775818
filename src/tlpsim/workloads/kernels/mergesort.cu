// Merge sort of (key, value) pairs (stands in for the CUDA SDK mergeSort).
// Pairs are ordered by key, then by value; the host makes the values the
// original positions, so the result is the stable sort by key.
//   ms_tile_sort   each CTA bitonic-sorts a tile of MS_TILE pairs in shared
//                  memory (8 KiB: keys + values), the SDK's shared-memory
//                  stage shape (SHARED_SIZE_LIMIT 1024 keys, 512 threads): one
//                  compare-exchange per thread per step, a barrier before
//                  every step (55 steps);
//   ms_merge_pass  merges neighbouring sorted runs of `run` pairs into runs of
//                  2*run: every thread takes one pair, finds its rank in the
//                  partner run (global memory) by a galloping search from its own
//                  position, and scatters it to its final place.  One launch per
//                  pass, log2(n / MS_TILE) passes.

#define MS_TILE 1024
#define MS_THREADS (MS_TILE / 2)

__device__ __forceinline__ bool pair_less(unsigned ka, unsigned va, unsigned kb, unsigned vb) {
    return ka < kb || (ka == kb && va < vb);
}

extern "C" __global__ void ms_tile_sort(unsigned* __restrict__ keys, unsigned* __restrict__ vals) {
    __shared__ unsigned s_key[MS_TILE];
    __shared__ unsigned s_val[MS_TILE];
    const size_t base = (size_t)blockIdx.x * MS_TILE;
    const int t = threadIdx.x;
    s_key[t] = keys[base + t];
    s_val[t] = vals[base + t];
    s_key[t + MS_THREADS] = keys[base + t + MS_THREADS];
    s_val[t + MS_THREADS] = vals[base + t + MS_THREADS];
#pragma unroll 1
    for (int size = 2; size <= MS_TILE; size <<= 1) {
        const bool ascending = (t & (size >> 1)) == 0;       // direction of this thread's bitonic run
#pragma unroll 1
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            __syncthreads();
            const int lo = 2 * t - (t & (stride - 1));
            const int hi = lo + stride;
            unsigned klo = s_key[lo], khi = s_key[hi];
            unsigned vlo = s_val[lo], vhi = s_val[hi];
            if (pair_less(khi, vhi, klo, vlo) == ascending) {   // out of order: swap
                s_key[lo] = khi; s_key[hi] = klo;
                s_val[lo] = vhi; s_val[hi] = vlo;
            }
        }
    }
    __syncthreads();
    keys[base + t] = s_key[t];
    vals[base + t] = s_val[t];
    keys[base + t + MS_THREADS] = s_key[t + MS_THREADS];
    vals[base + t + MS_THREADS] = s_val[t + MS_THREADS];
}

extern "C" __global__ void ms_merge_pass(const unsigned* __restrict__ keys_in, const unsigned* __restrict__ vals_in,
                                         unsigned* __restrict__ keys_out, unsigned* __restrict__ vals_out,
                                         int n, int run) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int pair_base = i / (2 * run) * (2 * run);
    const bool first = i - pair_base < run;
    const int own_pos = first ? i - pair_base : i - pair_base - run;
    const int other = first ? pair_base + run : pair_base;
    const int other_len = max(0, min(run, n - other));
    const unsigned k = keys_in[i], v = vals_in[i];
    // rank = number of pairs in the partner run that are smaller (all pairs are
    // distinct).  Galloping search from the guess rank ~ own_pos: exponential
    // steps away from the guess, then a binary search of the bracket.  Trip
    // counts depend on how far the true rank is from the guess: divergent.
    const unsigned* ok = keys_in + other;
    const unsigned* ov = vals_in + other;
    const int guess = min(own_pos, other_len);
    int lo, hi, step = 1;
    if (guess > 0 && !pair_less(ok[guess - 1], ov[guess - 1], k, v)) {
        hi = guess - 1;                                    // rank <= guess - 1: gallop down
        while (hi - step >= 0 && !pair_less(ok[hi - step], ov[hi - step], k, v)) {
            hi -= step;
            step <<= 1;
        }
        lo = max(0, hi - step + 1);
    } else {
        lo = guess;                                        // rank >= guess: gallop up
        while (lo + step <= other_len && pair_less(ok[lo + step - 1], ov[lo + step - 1], k, v)) {
            lo += step;
            step <<= 1;
        }
        hi = min(other_len, lo + step - 1);
    }
    while (lo < hi) {                                      // rank in [lo, hi]
        const int mid = (lo + hi) >> 1;
        if (pair_less(ok[mid], ov[mid], k, v)) lo = mid + 1;
        else hi = mid;
    }
    const int dst = pair_base + own_pos + lo;
    keys_out[dst] = k;
    vals_out[dst] = v;
}
