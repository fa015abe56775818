// Nearest neighbour (stands in for Rodinia NN): the Euclidean distance from
// one query point (latitude, longitude) to every record, written out, and the
// index of the closest record.  Each thread handles NN_PER_THREAD records in a
// grid-stride pattern (coalesced float2 loads), keeps its own best candidate,
// and the CTA reduces the candidates in shared memory; a second one-CTA kernel
// reduces the per-CTA minima.  Ties go to the smaller record index.

#define NN_BLOCK 256

struct Best {
    float dist;
    int index;
};

__device__ __forceinline__ bool better(float d, int i, float bd, int bi) {
    return d < bd || (d == bd && i < bi);
}

// Tree reduction of (dist, index) pairs held in shared memory by all NN_BLOCK threads
__device__ void cta_argmin(float* s_dist, int* s_index) {
    const int t = threadIdx.x;
    for (int stride = NN_BLOCK / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (t < stride && better(s_dist[t + stride], s_index[t + stride], s_dist[t], s_index[t])) {
            s_dist[t] = s_dist[t + stride];
            s_index[t] = s_index[t + stride];
        }
    }
    __syncthreads();
}

extern "C" __global__ void nn_distances(const float2* __restrict__ records, float* __restrict__ dist,
                                        float* __restrict__ block_dist, int* __restrict__ block_index,
                                        int n, float qlat, float qlng) {
    __shared__ float s_dist[NN_BLOCK];
    __shared__ int s_index[NN_BLOCK];
    const int stride = gridDim.x * NN_BLOCK;
    float best = __int_as_float(0x7f800000);   // +inf
    int best_i = 0x7fffffff;
    for (int i = blockIdx.x * NN_BLOCK + threadIdx.x; i < n; i += stride) {
        float2 r = records[i];
        float dlat = r.x - qlat, dlng = r.y - qlng;
        float d = sqrtf(dlat * dlat + dlng * dlng);
        dist[i] = d;
        if (better(d, i, best, best_i)) {
            best = d;
            best_i = i;
        }
    }
    s_dist[threadIdx.x] = best;
    s_index[threadIdx.x] = best_i;
    cta_argmin(s_dist, s_index);
    if (threadIdx.x == 0) {
        block_dist[blockIdx.x] = s_dist[0];
        block_index[blockIdx.x] = s_index[0];
    }
}

// One CTA reduces the `count` per-CTA candidates to the global nearest record
extern "C" __global__ void nn_final(const float* __restrict__ block_dist, const int* __restrict__ block_index,
                                    float* __restrict__ out_dist, int* __restrict__ out_index, int count) {
    __shared__ float s_dist[NN_BLOCK];
    __shared__ int s_index[NN_BLOCK];
    float best = __int_as_float(0x7f800000);
    int best_i = 0x7fffffff;
    for (int i = threadIdx.x; i < count; i += NN_BLOCK)
        if (better(block_dist[i], block_index[i], best, best_i)) {
            best = block_dist[i];
            best_i = block_index[i];
        }
    s_dist[threadIdx.x] = best;
    s_index[threadIdx.x] = best_i;
    cta_argmin(s_dist, s_index);
    if (threadIdx.x == 0) {
        *out_dist = s_dist[0];
        *out_index = s_index[0];
    }
}
