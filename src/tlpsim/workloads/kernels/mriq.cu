// MRI-Q: Q(x) = sum_k |phi_k|^2 * exp(i 2*pi k.x) for every voxel x
// (stands in for Parboil MRI-Q).  The k-space samples are streamed through
// constant memory in chunks, one ComputeQ launch per chunk; every thread owns
// one voxel and walks the whole chunk (all threads read the same sample at
// the same time: a constant-cache broadcast), so the inner loop is sin/cos
// on the SFU plus a handful of FMAs.

#define MRIQ_CHUNK 1024            // samples per constant-memory chunk (16 KiB)
#define MRIQ_TWO_PI 6.2831853071795864769f

// (kx, ky, kz, |phi|^2) of the samples of the current chunk
__constant__ float4 c_ksamples[MRIQ_CHUNK];

// |phi|^2 of every sample: a short streaming kernel run once before the chunks
extern "C" __global__ void mriq_phimag(const float* __restrict__ phi_re, const float* __restrict__ phi_im,
                                       float* __restrict__ phi_mag, int num_k) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < num_k) {
        float re = phi_re[k], im = phi_im[k];
        phi_mag[k] = re * re + im * im;
    }
}

// Accumulate the contribution of `count` samples (already in c_ksamples) into Q
extern "C" __global__ void mriq_computeq(const float* __restrict__ x, const float* __restrict__ y,
                                         const float* __restrict__ z, float* __restrict__ q_re,
                                         float* __restrict__ q_im, int num_x, int count) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= num_x) return;
    float px = MRIQ_TWO_PI * x[v], py = MRIQ_TWO_PI * y[v], pz = MRIQ_TWO_PI * z[v];
    float acc_re = q_re[v], acc_im = q_im[v];
    int k = 0;
    // four samples per trip: independent SFU work for the scheduler to overlap
    for (; k + 4 <= count; k += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            float4 s = c_ksamples[k + u];
            float arg = s.x * px + s.y * py + s.z * pz;
            float sn, cs;
            __sincosf(arg, &sn, &cs);
            acc_re += s.w * cs;
            acc_im += s.w * sn;
        }
    }
    for (; k < count; ++k) {
        float4 s = c_ksamples[k];
        float arg = s.x * px + s.y * py + s.z * pz;
        acc_re += s.w * __cosf(arg);
        acc_im += s.w * __sinf(arg);
    }
    q_re[v] = acc_re;
    q_im[v] = acc_im;
}
