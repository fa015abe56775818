// 38_nbody.cu
// Exercises: n-body-like all-pairs gravitational interaction: float4
// positions (xyz + mass in w), shared-memory tiles of bodies, rsqrtf,
// long fmaf chains, #pragma unroll over a tile, velocity/position update
// with float4 loads/stores.

#define NB_TILE 128

__device__ __forceinline__ float3 body_body(float4 bi, float4 bj, float3 ai)
{
    float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
    float dist2 = fmaf(r.x, r.x, fmaf(r.y, r.y, fmaf(r.z, r.z, 1e-3f)));   // softening
    float inv = rsqrtf(dist2);
    float s = bj.w * inv * inv * inv;
    ai.x = fmaf(r.x, s, ai.x);
    ai.y = fmaf(r.y, s, ai.y);
    ai.z = fmaf(r.z, s, ai.z);
    return ai;
}

__global__ void nbody_step(const float4 *pos, float4 *vel, float4 *new_pos, int n, float dt)
{
    __shared__ float4 tile[NB_TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float3 acc = make_float3(0.f, 0.f, 0.f);
    for (int base = 0; base < n; base += NB_TILE) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.f, 0.f, 0.f, 0.f);   // w=0: no force
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < NB_TILE; ++k) acc = body_body(me, tile[k], acc);
        __syncthreads();
    }
    if (i >= n) return;
    float4 v = vel[i];
    v.x += acc.x * dt; v.y += acc.y * dt; v.z += acc.z * dt;
    vel[i] = v;
    new_pos[i] = make_float4(me.x + v.x * dt, me.y + v.y * dt, me.z + v.z * dt, me.w);
}
