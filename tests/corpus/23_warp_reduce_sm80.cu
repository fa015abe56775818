// 23_warp_reduce_sm80.cu
// arch: sm_80
// Exercises: sm_80 warp reduction intrinsics __reduce_add_sync,
// __reduce_min_sync, __reduce_max_sync (signed/unsigned), __reduce_and_sync,
// __reduce_or_sync, __reduce_xor_sync (redux.sync.*), compared against a
// cooperative-groups-free shuffle reduction.

__device__ int shfl_reduce_add(int v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return __shfl_sync(0xffffffffu, v, 0);
}

__global__ void warp_reduce_sm80(const int *in, int *out, unsigned *uout)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    unsigned u = (unsigned)v;
    const unsigned full = 0xffffffffu;
    int s = __reduce_add_sync(full, v);
    int mn = __reduce_min_sync(full, v);
    int mx = __reduce_max_sync(full, v);
    unsigned umn = __reduce_min_sync(full, u);
    unsigned umx = __reduce_max_sync(full, u);
    unsigned a = __reduce_and_sync(full, u);
    unsigned o = __reduce_or_sync(full, u);
    unsigned x = __reduce_xor_sync(full, u);
    int ref = shfl_reduce_add(v);
    out[i] = s + mn + mx + (s == ref ? 0 : 1000000);
    uout[i] = umn ^ umx ^ a ^ o ^ x;
}
