// 15_local_array.cu
// Exercises: per-thread local arrays indexed by runtime values (forces a
// .local depot: __local_depot, %SP/%SPL, ld.local/st.local), a local
// struct array, local array passed to a non-inlined function by pointer
// (generic addressing of local memory, cvta.local).

struct Item { int key; float val; };

__device__ __noinline__ float sum_local(const float *p, int n)
{
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s += p[k];
    return s;
}

__global__ void local_array(const int *idx, const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float buf[32];
    Item items[8];
    for (int k = 0; k < 32; ++k) buf[k] = in[(i + k) % n];
    for (int k = 0; k < 8; ++k) { items[k].key = idx[(i + k) % n]; items[k].val = buf[k]; }
    int j = idx[i] & 31;                      // runtime index
    buf[j] += 1.0f;                           // dynamic store
    float r = buf[(j * 7) & 31];              // dynamic load
    Item it = items[items[0].key & 7];        // dynamic struct load
    r += it.val * (float)it.key;
    r += sum_local(buf, j + 1);               // pointer to local memory
    out[i] = r;
}
