// k-means clustering (stands in for Rodinia kmeans).
//
// One Lloyd iteration is three launches:
//   kmeans_assign      one thread per point: the point's NF features are loaded
//                      (coalesced, feature-major layout) into registers, then the
//                      squared distance to each of the k centroids -- read from
//                      constant memory, the same address in every lane, i.e. a
//                      broadcast -- picks the nearest.  Keeping the features in
//                      registers makes this kernel register-heavy.
//   kmeans_accumulate  per-CTA partial sums of the members of every cluster with
//                      shared-memory atomics into per-warp private copies (still
//                      contended: 32 lanes on k*NF addresses), merged and added
//                      with one global atomic per (cluster, feature) per CTA.
//   kmeans_update      new centroid = sum / count (empty clusters keep theirs).
// The host copies the new centroids into constant memory between iterations
// (cudaMemcpyToSymbol in a real program).
// A fourth kernel, kmeans_transpose, converts the point-major input into the
// feature-major layout once, before the iterations (a strided, uncoalesced pass).

#define NF 34      // features per point (the KDD-Cup set the papers use has 34)
#define MAXK 16    // capacity of the constant-memory centroid table
#define ACC_THREADS 256           // kmeans_accumulate must be launched with 256 threads
#define ACC_WARPS (ACC_THREADS / 32)

__constant__ float c_centroids[MAXK * NF];

extern "C" __global__ void kmeans_transpose(const float* __restrict__ points,
                                            float* __restrict__ feat, int npoints) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= npoints) return;
#pragma unroll 1
    for (int f = 0; f < NF; ++f) feat[f * npoints + p] = points[p * NF + f];
}

extern "C" __global__ void kmeans_assign(const float* __restrict__ feat, int* __restrict__ membership,
                                         int* __restrict__ changed, int npoints, int k) {
    __shared__ int s_changed;
    if (threadIdx.x == 0) s_changed = 0;
    __syncthreads();

    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < npoints) {
        float x[NF];
#pragma unroll
        for (int f = 0; f < NF; ++f) x[f] = feat[f * npoints + p];
        int best = 0;
        float best_d = 3.0e38f;
        for (int c = 0; c < k; ++c) {
            const float* cen = &c_centroids[c * NF];
            float d = 0.0f;
#pragma unroll
            for (int f = 0; f < NF; ++f) {
                float t = x[f] - cen[f];
                d = fmaf(t, t, d);
            }
            if (d < best_d) {   // strict: ties go to the lowest cluster index
                best_d = d;
                best = c;
            }
        }
        if (membership[p] != best) {
            membership[p] = best;
            atomicAdd(&s_changed, 1);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && s_changed) atomicAdd(changed, s_changed);
}

extern "C" __global__ void kmeans_accumulate(const float* __restrict__ feat, const int* __restrict__ membership,
                                             float* __restrict__ sums, int* __restrict__ counts,
                                             int npoints, int k) {
    // one private copy of the (cluster, feature) sums per warp: 8 x 16 x 34 floats =
    // 17 KiB of shared memory, so shared memory (2 CTAs per Fermi SM) is what limits
    // this kernel's occupancy
    __shared__ float s_sum[ACC_WARPS][MAXK * NF];
    __shared__ int s_cnt[ACC_WARPS][MAXK];
    const int warp = threadIdx.x / 32;
#pragma unroll 1
    for (int i = threadIdx.x; i < ACC_WARPS * MAXK * NF; i += ACC_THREADS) (&s_sum[0][0])[i] = 0.0f;
    if (threadIdx.x < ACC_WARPS * MAXK) (&s_cnt[0][0])[threadIdx.x] = 0;
    __syncthreads();

    int p = blockIdx.x * ACC_THREADS + threadIdx.x;
    if (p < npoints) {
        int c = membership[p];
        atomicAdd(&s_cnt[warp][c], 1);
        for (int f = 0; f < NF; ++f) atomicAdd(&s_sum[warp][c * NF + f], feat[f * npoints + p]);
    }
    __syncthreads();

    for (int i = threadIdx.x; i < k * NF; i += ACC_THREADS) {
        float v = 0.0f;
#pragma unroll 4
        for (int w = 0; w < ACC_WARPS; ++w) v += s_sum[w][i];
        if (v != 0.0f) atomicAdd(&sums[i], v);
    }
    if (threadIdx.x < k) {
        int n = 0;
#pragma unroll 4
        for (int w = 0; w < ACC_WARPS; ++w) n += s_cnt[w][threadIdx.x];
        if (n != 0) atomicAdd(&counts[threadIdx.x], n);
    }
}

extern "C" __global__ void kmeans_update(const float* __restrict__ sums, const int* __restrict__ counts,
                                         float* __restrict__ centroids, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k * NF) return;
    int n = counts[i / NF];
    if (n > 0) centroids[i] = sums[i] / (float)n;
}
