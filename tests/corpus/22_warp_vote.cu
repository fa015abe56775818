// 22_warp_vote.cu
// Exercises: __ballot_sync, __any_sync, __all_sync, __uni_sync (vote.sync
// .ballot/.any/.all/.uni), __activemask (activemask.b32), __match_any_sync
// and __match_all_sync (match.sync, sm_70+), __syncwarp with full and
// partial masks (bar.warp.sync), votes inside divergent code.

__global__ void warp_vote(const int *in, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = i < n ? in[i] : -1;
    const unsigned full = 0xffffffffu;
    unsigned ballot = __ballot_sync(full, v > 0);
    int any = __any_sync(full, v == 7);
    int all = __all_sync(full, v >= 0);
    int uni = __uni_sync(full, v & 1);
    unsigned same = __match_any_sync(full, v & 0xf);
    int pred;
    unsigned allsame = __match_all_sync(full, v >> 8, &pred);
    __syncwarp();
    unsigned act = 0, sub = 0;
    if (lane & 1) {                                   // divergent region
        act = __activemask();
        sub = __ballot_sync(0xaaaaaaaau, v > 3);
        __syncwarp(0xaaaaaaaau);
    }
    unsigned long long key = (unsigned long long)v * 0x9e3779b97f4a7c15ull;
    unsigned same64 = __match_any_sync(full, key);    // 64-bit match
    if (i < n)
        out[i] = ballot ^ (any << 1) ^ (all << 2) ^ (uni << 3) ^ same ^ allsame
                 ^ (unsigned)pred ^ act ^ sub ^ same64 ^ __popc(ballot & ((1u << lane) - 1u));
}
