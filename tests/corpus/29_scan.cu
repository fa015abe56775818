// 29_scan.cu
// Exercises: work-efficient exclusive prefix scan (Blelloch up-sweep /
// down-sweep) in shared memory with bank-conflict padding macro, per-block
// sums output, and a second kernel adding block offsets (uniform add).

#define LOG_BANKS 5
#define PAD(i) ((i) + ((i) >> LOG_BANKS))

__global__ void scan_exclusive(const int *in, int *out, int *block_sums, int n)
{
    __shared__ int s[2 * 256 + (2 * 256 >> LOG_BANKS)];
    int t = threadIdx.x;
    int m = 2 * blockDim.x;                      // elements per block
    int base = blockIdx.x * m;
    int a = t, b = t + blockDim.x;
    s[PAD(a)] = base + a < n ? in[base + a] : 0;
    s[PAD(b)] = base + b < n ? in[base + b] : 0;
    int off = 1;
    for (int d = m >> 1; d > 0; d >>= 1) {       // up-sweep
        __syncthreads();
        if (t < d) {
            int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
            s[PAD(bi)] += s[PAD(ai)];
        }
        off <<= 1;
    }
    if (t == 0) {
        block_sums[blockIdx.x] = s[PAD(m - 1)];
        s[PAD(m - 1)] = 0;
    }
    for (int d = 1; d < m; d <<= 1) {            // down-sweep
        off >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
            int tmp = s[PAD(ai)];
            s[PAD(ai)] = s[PAD(bi)];
            s[PAD(bi)] += tmp;
        }
    }
    __syncthreads();
    if (base + a < n) out[base + a] = s[PAD(a)];
    if (base + b < n) out[base + b] = s[PAD(b)];
}

__global__ void add_block_offsets(int *data, const int *scanned_sums, int n)
{
    int i = blockIdx.x * 2 * blockDim.x + threadIdx.x;
    int add = scanned_sums[blockIdx.x];
    if (i < n) data[i] += add;
    if (i + blockDim.x < n) data[i + blockDim.x] += add;
}
