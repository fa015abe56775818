// Kernels of the kinds issue 29 found far from GPGPU-Sim (docs/validation.md,
// "Causes of the held-out errors"), run by benchmarks/fidelity/run.py. Written for
// this purpose; not the held-out programs. Each one's expected behaviour is in run.py.
#define TILE 16

// shared-memory tiled matrix multiply: per tile two coalesced global loads, two
// barriers and a 16-step inner loop of two shared loads and one FMA
extern "C" __global__ void mm_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = sum;
}

// tree reduction in shared memory (two loads per thread, then log2(blockDim) steps
// of a divergent add and a barrier)
extern "C" __global__ void reduce_tree(const float* in, float* out, int n) {
    extern __shared__ float s[];
    unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// 5-point stencil straight from global memory (the +-1 neighbours straddle lines)
extern "C" __global__ void stencil5(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x <= 0 || y <= 0 || x >= w - 1 || y >= h - 1) return;
    int i = y * w + x;
    out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}

// 5-point stencil through a shared-memory tile with a one-element halo
extern "C" __global__ void stencil5_smem(const float* in, float* out, int w, int h) {
    __shared__ float t[8 + 2][32 + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx, y = blockIdx.y * 8 + ty;
    int cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1);
    t[ty + 1][tx + 1] = in[cy * w + cx];
    if (tx == 0) t[ty + 1][0] = in[cy * w + max(cx - 1, 0)];
    if (tx == 31) t[ty + 1][33] = in[cy * w + min(cx + 1, w - 1)];
    if (ty == 0) t[0][tx + 1] = in[max(cy - 1, 0) * w + cx];
    if (ty == 7) t[9][tx + 1] = in[min(cy + 1, h - 1) * w + cx];
    __syncthreads();
    if (x <= 0 || y <= 0 || x >= w - 1 || y >= h - 1) return;
    out[y * w + x] = 0.2f * (t[ty + 1][tx + 1] + t[ty + 1][tx] + t[ty + 1][tx + 2] + t[ty][tx + 1] + t[ty + 2][tx + 1]);
}

// naive transpose: coalesced reads, one 8-byte partial write per line per warp
extern "C" __global__ void transpose_naive(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[x * h + y] = in[y * w + x];
}

// issue rate of one warp: `reps` x 16 independent integer adds, no branch inside a group
extern "C" __global__ void issue_stream(unsigned* out, int reps) {
    unsigned a = threadIdx.x, b = a + 1, c = a + 2, d = a + 3, e = a + 4, f = a + 5, g = a + 6, h = a + 7;
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            asm volatile("add.u32 %0, %0, 1;" : "+r"(a)); asm volatile("add.u32 %0, %0, 1;" : "+r"(b));
            asm volatile("add.u32 %0, %0, 1;" : "+r"(c)); asm volatile("add.u32 %0, %0, 1;" : "+r"(d));
            asm volatile("add.u32 %0, %0, 1;" : "+r"(e)); asm volatile("add.u32 %0, %0, 1;" : "+r"(f));
            asm volatile("add.u32 %0, %0, 1;" : "+r"(g)); asm volatile("add.u32 %0, %0, 1;" : "+r"(h));
        }
    }
    out[threadIdx.x] = a + b + c + d + e + f + g + h;
}

// Written after the sector replies and the switch's speed-up were modelled, to check that
// they generalise (docs/validation.md): a streaming add, and a wider stencil in square CTAs
extern "C" __global__ void stream_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void stencil9(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x <= 1 || y <= 1 || x >= w - 2 || y >= h - 2) return;
    int i = y * w + x;
    out[i] = 0.1f * (in[i] + in[i - 1] + in[i + 1] + in[i - 2] + in[i + 2] + in[i - w] + in[i + w]
                     + in[i - 2 * w] + in[i + 2 * w]);
}
