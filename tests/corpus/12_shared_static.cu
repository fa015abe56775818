// 12_shared_static.cu
// Exercises: static __shared__ 1D and 2D arrays (incl. 2D of double),
// __syncthreads, __syncthreads_count / __syncthreads_and / __syncthreads_or
// (bar.red.popc / bar.red.and / bar.red.or), __threadfence,
// __threadfence_block, __threadfence_system (membar / fence), 2D thread
// blocks (threadIdx.y).

#define TILE 16

__global__ void shared_static(const float *in, float *out, int *flags, int w, int h)
{
    __shared__ float tile[TILE][TILE + 1];
    __shared__ double dsum[TILE];
    __shared__ int counters[4];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty;
    bool inside = x < w && y < h;
    tile[ty][tx] = inside ? in[y * w + x] : 0.0f;
    if (tx < 4 && ty == 0) counters[tx] = 0;
    __syncthreads();
    if (tx == 0) {
        double s = 0.0;
        for (int k = 0; k < TILE; ++k) s += tile[ty][k];
        dsum[ty] = s;
    }
    __syncthreads();
    float v = tile[tx][ty];                           // transposed read
    int npos = __syncthreads_count(v > 0.0f);
    int allpos = __syncthreads_and(v >= 0.0f);
    int anybig = __syncthreads_or(v > 100.0f);
    if (v < 0.0f) atomicAdd(&counters[tx & 3], 1);
    __syncthreads();
    if (inside) out[y * w + x] = v + (float)dsum[ty] + (float)npos;
    __threadfence_block();
    if (tx == 0 && ty == 0) {
        flags[blockIdx.y * gridDim.x + blockIdx.x] = allpos * 2 + anybig + 4 * counters[ty & 3];
        __threadfence();
        __threadfence_system();
    }
}
