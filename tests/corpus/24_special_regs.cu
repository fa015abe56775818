// 24_special_regs.cu
// Exercises: special registers threadIdx/blockIdx/blockDim/gridDim in
// x, y and z (%tid/%ctaid/%ntid/%nctaid), %laneid, %warpid, %smid,
// %nwarpid, %lanemask_lt via inline asm, clock() (%clock), clock64()
// (%clock64), globaltimer, warpSize (WARP_SZ).

__device__ __forceinline__ unsigned lane_id()
{ unsigned r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned warp_id()
{ unsigned r; asm volatile("mov.u32 %0, %%warpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sm_id()
{ unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned nwarp_id()
{ unsigned r; asm("mov.u32 %0, %%nwarpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned lanemask_lt()
{ unsigned r; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long global_timer()
{ unsigned long long r; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)); return r; }

__global__ void special_regs(unsigned *ids, long long *times)
{
    long long t0 = clock64();
    int start = clock();
    unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned nthreads = blockDim.x * blockDim.y * blockDim.z;
    unsigned gid = bid * nthreads + tid;
    unsigned *o = ids + 8 * gid;
    o[0] = gid;
    o[1] = lane_id() | (warp_id() << 8) | (sm_id() << 16);
    o[2] = nwarp_id() + lanemask_lt();
    o[3] = threadIdx.y * 100 + threadIdx.z;
    o[4] = blockIdx.y * 100 + blockIdx.z;
    o[5] = gridDim.x * gridDim.y * gridDim.z;
    o[6] = (unsigned)warpSize + (tid % warpSize);
    int stop = clock();
    o[7] = (unsigned)(stop - start);
    times[2 * gid] = clock64() - t0;
    times[2 * gid + 1] = (long long)global_timer();
}
