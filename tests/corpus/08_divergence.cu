// 08_divergence.cu
// Exercises: if/else divergence on thread id and on data, nested
// divergence (3 levels), early return from divergent paths, select
// (selp / ternary), predicated short-circuit && / ||, reconvergence
// before a __syncthreads.

__global__ void divergence(const int *in, int *out, int n)
{
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    __shared__ int buf[256];
    int v = (i < n) ? in[i] : 0;
    int r;
    if (tid & 1) {                    // odd lanes
        if (v > 0) {
            if (v > 100) r = v * 3;
            else         r = v + 7;
        } else {
            r = -v;
        }
    } else {                          // even lanes
        if ((v & 3) == 0 || v < -50) r = v >> 1;
        else if (v & 2 && tid > 16)  r = v ^ tid;
        else                         r = 0;
    }
    buf[tid] = r;
    __syncthreads();                  // reconvergence point
    if (i >= n) return;               // early return after the barrier
    int left = buf[(tid + blockDim.x - 1) % blockDim.x];
    if (left == r) {
        out[i] = 0;
        return;                       // early return inside divergent path
    }
    out[i] = r > left ? r - left : left - r;
}

__device__ int classify(float x)
{
    if (x != x) return -1;            // NaN
    if (x < 0.0f) return 0;
    if (x < 1.0f) return 1;
    return 2;
}

__global__ void divergence_float(const float *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        int c = classify(x);
        out[i] = c == 2 ? (int)x : c * 10;
    } else if (i < n + 32) {
        out[i] = -2;                  // tail threads write a marker
    }
}
