/* What the entry-point files of tlpsim's CUDA runtime share (libcudart.c,
 * libcudart_graph.c, libcudart_texture.c): exporting a symbol, passing a pointer as a word, and CALL,
 * which hands a call's argument words to the Python runtime through tlpsim_rt_call
 * (defined in libcudart.c) and returns its cudaError_t. */

#ifndef TLPSIM_LIBCUDART_ENTRY_H
#define TLPSIM_LIBCUDART_ENTRY_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))
#define P(x) ((uint64_t)(uintptr_t)(x))

int tlpsim_rt_call(const char *name, uint64_t *args, int nargs);

#define NARGS(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)
#define CALL(name, ...)                                              \
    do {                                                             \
        uint64_t a_[] = {0, __VA_ARGS__};                            \
        return (cudaError_t)tlpsim_rt_call(name, a_ + 1, NARGS(a_)); \
    } while (0)

/* the per-thread-default-stream variants (_ptds, _ptsz) are the same functions */
#define ALIAS(name, target) EXPORT __typeof__(target) name __attribute__((alias(#target)))

#endif
