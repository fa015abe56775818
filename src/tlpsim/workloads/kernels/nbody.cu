// All-pairs gravitational n-body step (stands in for the CUDA SDK nbody).
// Bodies are float4 (x, y, z, mass).  Every thread owns one body; the CTA
// walks the body array in tiles of NB_BLOCK bodies staged in shared memory,
// and each thread accumulates the softened acceleration
//     a_i += m_j r_ij / (|r_ij|^2 + eps^2)^(3/2)
// with one rsqrt per pair, then integrates velocity and position
// (semi-implicit Euler) into the output buffers.

#define NB_BLOCK 128

__device__ __forceinline__ float3 interact(float4 bi, float4 bj, float3 a, float eps2) {
    float rx = bj.x - bi.x, ry = bj.y - bi.y, rz = bj.z - bi.z;
    float d2 = rx * rx + ry * ry + rz * rz + eps2;
    float inv = rsqrtf(d2);
    float s = bj.w * inv * inv * inv;
    a.x += rx * s;
    a.y += ry * s;
    a.z += rz * s;
    return a;
}

extern "C" __global__ void nbody_step(const float4* __restrict__ pos_in, float4* __restrict__ pos_out,
                                      float4* __restrict__ vel, int n, float dt, float eps2) {
    __shared__ float4 tile[NB_BLOCK];
    const int i = blockIdx.x * NB_BLOCK + threadIdx.x;
    const float4 me = i < n ? pos_in[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    for (int base = 0; base < n; base += NB_BLOCK) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos_in[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // mass 0: no force
        __syncthreads();
#pragma unroll 4
        for (int k = 0; k < NB_BLOCK; ++k) a = interact(me, tile[k], a, eps2);
        __syncthreads();
    }
    if (i >= n) return;
    float4 v = vel[i];
    v.x += a.x * dt;
    v.y += a.y * dt;
    v.z += a.z * dt;
    vel[i] = v;
    pos_out[i] = make_float4(me.x + v.x * dt, me.y + v.y * dt, me.z + v.z * dt, me.w);
}
