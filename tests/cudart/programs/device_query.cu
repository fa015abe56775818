// Device management and queries: count, properties, attributes (consistent with
// the properties), kernel attributes, occupancy, versions, limits, pointer
// attributes.
#include <cstdio>
#include "check.h"

__global__ void heavy(float *out)
{
    __shared__ float tile[32][33];
    int t = threadIdx.x;
    tile[t % 32][t / 32] = t;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = tile[t / 32][t % 32];
}

int main()
{
    int count = 0, dev = -1;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    printf("%d device(s); device %d: \"%s\"\n", count, dev, p.name);
    printf("  compute capability %d.%d, %d SMs, %d threads/SM, %d blocks/SM, warp %d\n", p.major, p.minor,
           p.multiProcessorCount, p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor, p.warpSize);
    printf("  %zu MiB global, %zu B shared/block, %d regs/block, L2 %d KiB, bus %d bits\n",
           p.totalGlobalMem >> 20, p.sharedMemPerBlock, p.regsPerBlock, p.l2CacheSize >> 10, p.memoryBusWidth);
    int errors = count != 1 || dev != 0;
    int sms, clock, cc_major, maxThreads;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0));
    CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, 0));
    CHECK(cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerBlock, 0));
    printf("  attributes: %d SMs, clock %d kHz\n", sms, clock);
    errors += sms != p.multiProcessorCount || cc_major != p.major || maxThreads != p.maxThreadsPerBlock || clock <= 0;
    errors += cudaSetDevice(1) != cudaErrorInvalidDevice;
    errors += cudaGetLastError() != cudaErrorInvalidDevice;
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, heavy));
    printf("  heavy: %d registers, %zu B shared, max %d threads/block, PTX %d\n", fa.numRegs, fa.sharedSizeBytes,
           fa.maxThreadsPerBlock, fa.ptxVersion);
    errors += fa.sharedSizeBytes != 32 * 33 * sizeof(float) || fa.numRegs <= 0 || fa.maxThreadsPerBlock <= 0;
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, heavy, 256, 0));
    int by_smem = (int)(p.sharedMemPerMultiprocessor / fa.sharedSizeBytes);
    int by_threads = p.maxThreadsPerMultiProcessor / 256;
    int expect = by_smem < by_threads ? by_smem : by_threads;
    if (expect > p.maxBlocksPerMultiProcessor) expect = p.maxBlocksPerMultiProcessor;
    printf("  occupancy at 256 threads: %d blocks/SM (threads allow %d, shared memory %d)\n", blocks, by_threads,
           by_smem);
    errors += blocks <= 0 || blocks > expect;
    int rt = 0, drv = 0;
    CHECK(cudaRuntimeGetVersion(&rt));
    CHECK(cudaDriverGetVersion(&drv));
    errors += rt < 13000 || drv < rt;
    size_t fifo = 0;
    CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 22));
    CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
    errors += fifo != (1 << 22);
    float *d, *h;
    CHECK(cudaMalloc(&d, 1024));
    CHECK(cudaMallocHost(&h, 1024));
    cudaPointerAttributes pa, ph;
    CHECK(cudaPointerGetAttributes(&pa, d));
    CHECK(cudaPointerGetAttributes(&ph, h));
    errors += pa.type != cudaMemoryTypeDevice || ph.type != cudaMemoryTypeHost;
    size_t free_b, total_b;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    errors += total_b != p.totalGlobalMem || free_b >= total_b;
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    printf(errors ? "FAIL (%d)\n" : "PASS\n", errors);
    return errors ? 1 : 0;
}
