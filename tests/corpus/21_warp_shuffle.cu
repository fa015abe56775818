// 21_warp_shuffle.cu
// Exercises: __shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync
// on int, float, double (split into two 32-bit shuffles) and long long,
// with and without a width argument (sub-warp segments, c operand of
// shfl.sync), a butterfly all-reduce, a shuffle-based inclusive scan.

__global__ void shuffles(const int *in, const float *fin, const double *din,
                         int *out, float *fout, double *dout)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = in[i];
    float f = fin[i];
    double d = din[i];
    const unsigned full = 0xffffffffu;
    int a = __shfl_sync(full, v, 0);                 // broadcast lane 0
    int b = __shfl_sync(full, v, lane + 1, 8);       // width 8 segments
    int c = __shfl_up_sync(full, v, 1);
    int e = __shfl_down_sync(full, v, 2, 16);        // width 16
    int g = __shfl_xor_sync(full, v, 4);
    float fa = __shfl_xor_sync(full, f, 1, 4);       // float, width 4
    float fb = __shfl_down_sync(full, f, 1);
    double da = __shfl_sync(full, d, 31 - lane);     // 64-bit: two shfl
    long long la = __shfl_up_sync(full, (long long)v << 20, 3);
    out[i] = a + b + c + e + g + (int)(la >> 20);
    fout[i] = fa + fb;
    dout[i] = da;
}

__global__ void warp_allreduce_scan(const float *in, float *sum_out, float *scan_out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    float v = in[i];
    float s = v;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)          // butterfly all-reduce
        s += __shfl_xor_sync(0xffffffffu, s, off);
    float x = v;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {         // inclusive scan
        float y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off) x += y;
    }
    sum_out[i] = s;
    scan_out[i] = x;
}
