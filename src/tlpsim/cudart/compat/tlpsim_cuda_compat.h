/* tlpsim's CUDA compatibility declarations (tlpsim's own text, not NVIDIA's).
 *
 * Programs written for CUDA 4-12 call runtime functions that CUDA 13 removed. The
 * headers of `tlpsim toolkit` (and every `tlpsim nvcc` compile) include this file at
 * the end of cuda_runtime_api.h, so such programs build unmodified; each function
 * here does what CUDA 12 documented for it, through a function CUDA 13 still has.
 *
 * The cudaDeviceProp fields CUDA 13 removed (clockRate, deviceOverlap, ...) are not
 * here: the toolkit's driver_types.h names the first words of the struct's reserved
 * array after them (same size and layout), and tlpsim's cudaGetDeviceProperties
 * fills those words (see libcudart.c, `compat_props`).
 */
#ifndef TLPSIM_CUDA_COMPAT_H
#define TLPSIM_CUDA_COMPAT_H
#if !defined(__CUDACC_RTC__)

#define TLPSIM_CUDA_COMPAT 1

#if defined(__cplusplus)
#define TLPSIM_COMPAT_FN static inline
#else
#define TLPSIM_COMPAT_FN static inline __attribute__((unused))
#endif

/* cudaThread* were the pre-CUDA-4.0 names of the cudaDevice* functions */
TLPSIM_COMPAT_FN cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
TLPSIM_COMPAT_FN cudaError_t cudaThreadExit(void) { return cudaDeviceReset(); }
TLPSIM_COMPAT_FN cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value)
{ return cudaDeviceSetLimit(limit, value); }
TLPSIM_COMPAT_FN cudaError_t cudaThreadGetLimit(size_t *value, enum cudaLimit limit)
{ return cudaDeviceGetLimit(value, limit); }
TLPSIM_COMPAT_FN cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache *config)
{ return cudaDeviceGetCacheConfig(config); }
TLPSIM_COMPAT_FN cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config)
{ return cudaDeviceSetCacheConfig(config); }

/* converted doubles for devices without double precision (compute 1.2 and older);
 * CUDA 12 documents them as doing nothing on every later device */
TLPSIM_COMPAT_FN cudaError_t cudaSetDoubleForDevice(double *d) { (void)d; return cudaSuccess; }
TLPSIM_COMPAT_FN cudaError_t cudaSetDoubleForHost(double *d) { (void)d; return cudaSuccess; }

#undef TLPSIM_COMPAT_FN
#endif /* !__CUDACC_RTC__ */
#endif /* TLPSIM_CUDA_COMPAT_H */
