// 35_bitonic_sort.cu
// Exercises: in-block bitonic sort of key/value pairs in shared memory:
// nested power-of-two loops, XOR partner indexing, direction from bit
// tests, compare-and-swap with divergent branches, padding with +INF for
// partial blocks; plus a global-memory bitonic merge step kernel.

#define N_SORT 512

__global__ void bitonic_sort_shared(float *keys, int *vals, int n)
{
    __shared__ float sk[N_SORT];
    __shared__ int sv[N_SORT];
    int base = blockIdx.x * N_SORT;
    for (int t = threadIdx.x; t < N_SORT; t += blockDim.x) {
        bool ok = base + t < n;
        sk[t] = ok ? keys[base + t] : __int_as_float(0x7f800000);   // +inf pad
        sv[t] = ok ? vals[base + t] : -1;
    }
    __syncthreads();
    for (int size = 2; size <= N_SORT; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int t = threadIdx.x; t < N_SORT; t += blockDim.x) {
                int p = t ^ stride;
                if (p > t) {
                    bool ascending = (t & size) == 0;
                    float a = sk[t], b = sk[p];
                    if ((a > b) == ascending) {
                        sk[t] = b; sk[p] = a;
                        int tv = sv[t]; sv[t] = sv[p]; sv[p] = tv;
                    }
                }
            }
            __syncthreads();
        }
    }
    for (int t = threadIdx.x; t < N_SORT; t += blockDim.x)
        if (base + t < n) { keys[base + t] = sk[t]; vals[base + t] = sv[t]; }
}

__global__ void bitonic_merge_global(unsigned *data, int j, int k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned p = i ^ (unsigned)j;
    if (p > i) {
        unsigned a = data[i], b = data[p];
        bool up = (i & (unsigned)k) == 0;
        if (up ? a > b : a < b) { data[i] = b; data[p] = a; }
    }
}
