// 05_half.cu
// Exercises: half precision via cuda_fp16.h: __half2float, __float2half,
// __float2half_rz, __hadd/__hmul/__hfma/__hmax on __half, __half2 packed
// arithmetic (__hadd2/__hmul2/__hfma2), half<->float2 conversions, 16-bit
// and 32-bit loads/stores of __half/__half2 (cvt.f32.f16, cvt.rn.f16.f32,
// add/mul/fma .f16 / .f16x2, mov.b32 {h,h} packing).
//
// NOTE: the pinned nvidia-cuda-nvcc wheel ships cuda_fp16.h but not the CCCL
// header <nv/target> it includes (that header comes with the separate
// nvidia-cuda-cccl wheel).  When <nv/target> is not available we fall back
// to a tiny header-free shim (same function names, implemented with inline
// PTX) so this file always compiles. Both variants emit the same kind of
// f16 PTX (the real header also wraps its f16 ops in inline-asm { } blocks).
#if __has_include(<nv/target>)
#include <cuda_fp16.h>
#define CORPUS_REAL_FP16 1
#else
struct __half  { unsigned short x; };
struct __half2 { unsigned int x; };
__device__ __forceinline__ float __half2float(__half h)
{ float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x)); return f; }
__device__ __forceinline__ __half __float2half(float f)
{ __half h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(f)); return h; }
__device__ __forceinline__ __half __float2half_rz(float f)
{ __half h; asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h.x) : "f"(f)); return h; }
#define HOP(name, op) __device__ __forceinline__ __half name(__half a, __half b) \
{ __half r; asm(op " %0, %1, %2;" : "=h"(r.x) : "h"(a.x), "h"(b.x)); return r; }
HOP(__hadd, "add.f16") HOP(__hmul, "mul.f16")
__device__ __forceinline__ __half __hmax(__half a, __half b)   // max.f16 needs sm_80
{ return __float2half(fmaxf(__half2float(a), __half2float(b))); }
#define H2OP(name, op) __device__ __forceinline__ __half2 name(__half2 a, __half2 b) \
{ __half2 r; asm(op " %0, %1, %2;" : "=r"(r.x) : "r"(a.x), "r"(b.x)); return r; }
H2OP(__hadd2, "add.f16x2") H2OP(__hmul2, "mul.f16x2")
__device__ __forceinline__ __half __hfma(__half a, __half b, __half c)
{ __half r; asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r.x) : "h"(a.x), "h"(b.x), "h"(c.x)); return r; }
__device__ __forceinline__ __half2 __hfma2(__half2 a, __half2 b, __half2 c)
{ __half2 r; asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r.x) : "r"(a.x), "r"(b.x), "r"(c.x)); return r; }
__device__ __forceinline__ __half2 __floats2half2_rn(float a, float b)
{ __half2 r; asm("{.reg .f16 l, h; cvt.rn.f16.f32 l, %1; cvt.rn.f16.f32 h, %2; mov.b32 %0, {l, h};}"
                 : "=r"(r.x) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ float2 __half22float2(__half2 h)
{ float2 f; asm("{.reg .f16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h;}"
                : "=f"(f.x), "=f"(f.y) : "r"(h.x)); return f; }
__device__ __forceinline__ __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
#endif

__global__ void half_ops(const __half *a, const __half *b, __half *out,
                         float *fout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half x = a[i], y = b[i];
    float fx = __half2float(x), fy = __half2float(y);
    __half s = __hadd(x, y);
    __half p = __hmul(x, y);
    __half f = __hfma(x, y, s);
    out[i] = __float2half(fx * fy + __half2float(f) + __half2float(p));
    fout[i] = __half2float(__float2half_rz(fx - fy)) + __half2float(__hmax(x, y));
}

__global__ void half2_ops(const __half2 *a, const __half2 *b, __half2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = a[i], y = b[i];
    __half2 r = __hfma2(x, y, __hadd2(x, y));
    r = __hmul2(r, __floats2half2_rn(0.5f, 2.0f));
    float2 f = __half22float2(r);
    out[i] = __float22half2_rn(make_float2(f.y, f.x));
}
