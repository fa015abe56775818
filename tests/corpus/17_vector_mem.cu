// 17_vector_mem.cu
// Exercises: vector loads/stores float4, float2, int2, int4, double2,
// uchar4 (ld/st .v2/.v4), __ldg (ld.global.nc), const __restrict__
// pointers (read-only path), __ldcs/__stcs/__ldcg cache-hinted accesses,
// make_float4 / make_int2 constructors.

__global__ void vector_mem(const float4 *__restrict__ a, const int2 *__restrict__ b,
                           const double2 *c, const uchar4 *d, float4 *out4,
                           int2 *out2, double2 *outd, uchar4 *outc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = a[i];                     // ld.global.nc.v4.f32 via restrict
    int2 w = __ldg(&b[i]);               // explicit __ldg
    double2 dd = __ldg(&c[i]);
    uchar4 ch = d[i];
    out4[i] = make_float4(v.x + w.x, v.y + w.y, v.z * v.w, (float)dd.x);
    out2[i] = make_int2(w.x ^ w.y, (int)ch.x + ch.w);
    outd[i] = make_double2(dd.x * dd.y, dd.y - (double)v.x);
    outc[i] = make_uchar4(ch.w, ch.z, ch.y, ch.x);
}

__global__ void cache_hints(const float *__restrict__ in, const int4 *in4,
                            float *out, int4 *out4, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __ldg(in + i) + __ldcs(in + ((i + 1) % n)) + __ldcg(in + ((i + 2) % n));
    int4 q = __ldca(in4 + i);
    __stcs(out + i, x);
    __stwb(out4 + i, make_int4(q.w, q.z, q.y, q.x));
    float2 f2 = reinterpret_cast<const float2 *>(in)[i / 2];
    __stcg(out + n + i, f2.x - f2.y);
}
