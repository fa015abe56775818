// Batched scalar products (SDK scalarProd style): out[v] = dot(a[v], b[v]) for nvec
// pairs of vectors of `elems` floats each. One CTA per vector pair (a CTA loops when
// the grid is smaller than the batch): each thread accumulates a strided slice of
// products, then the CTA reduces its 256 partial sums with a full shared-memory tree,
// one __syncthreads per level.
#define BLOCK 256

extern "C" __global__ void __launch_bounds__(BLOCK)
scalarprod(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
           int nvec, int elems) {
    __shared__ float acc[BLOCK];
    const int tid = threadIdx.x;
    for (int v = blockIdx.x; v < nvec; v += gridDim.x) {
        const float* pa = a + (size_t)v * elems;
        const float* pb = b + (size_t)v * elems;
        float s = 0.0f;
        for (int i = tid; i < elems; i += BLOCK) s = fmaf(pa[i], pb[i], s);
        acc[tid] = s;
        for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            if (tid < stride) acc[tid] += acc[tid + stride];
        }
        __syncthreads();
        if (tid == 0) out[v] = acc[0];
        __syncthreads();  // acc is reused by the next vector pair
    }
}
