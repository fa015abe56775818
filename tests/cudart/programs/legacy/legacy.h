#ifndef LEGACY_H
#define LEGACY_H
#ifdef __cplusplus
extern "C" {
#endif
/* squares x[0..n) on the GPU; returns the first CUDA error (0 = success) */
int gpu_square(float *x, int n);
#ifdef __cplusplus
}
#endif
#endif
