/* tlpsim's CUDA runtime: CUDA arrays and texture objects (Python side: api_texture.py).
 *
 * A CUDA array is storage in the simulated device memory; its cudaArray_t is the
 * device address of its first element (programs treat the handle as opaque). The
 * structs of the texture API are unpacked here, so Python receives plain words:
 * channel formats as (x, y, z, w, kind), float border colours as their bits.
 */

#include <string.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* cudaMemcpyToArray & co: deprecated, still exported */

#include "libcudart_entry.h"

#define DESC(d) (uint64_t)(int64_t)(d).x, (uint64_t)(int64_t)(d).y, (uint64_t)(int64_t)(d).z, \
                (uint64_t)(int64_t)(d).w, (uint64_t)(d).f

static uint64_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* ------------------------------------------------------------------ arrays */

EXPORT cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                                   size_t height, unsigned int flags)
{
    if (!desc)
        CALL("cudaMallocArray", P(array), 0, 0, 0, 0, 0, width, height, flags, 1);
    CALL("cudaMallocArray", P(array), DESC(*desc), width, height, flags, 0);
}

EXPORT cudaError_t cudaFreeArray(cudaArray_t array) { CALL("cudaFreeArray", P(array)); }

EXPORT cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent,
                                    unsigned int *flags, cudaArray_t array)
{
    int64_t v[9] = {0}; /* x y z w kind width height depth flags */
    uint64_t a[] = {P(array), P(v)};
    cudaError_t err = (cudaError_t)tlpsim_rt_call("cudaArrayGetInfo", a, 2);
    if (err != cudaSuccess)
        return err;
    if (desc) {
        desc->x = (int)v[0]; desc->y = (int)v[1]; desc->z = (int)v[2]; desc->w = (int)v[3];
        desc->f = (enum cudaChannelFormatKind)v[4];
    }
    if (extent) {
        extent->width = (size_t)v[5]; extent->height = (size_t)v[6]; extent->depth = (size_t)v[7];
    }
    if (flags)
        *flags = (unsigned int)v[8];
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    return cudaArrayGetInfo(desc, NULL, NULL, (cudaArray_t)array);
}

/* One handler (registered under each function's name) for every array copy: (dst, dst_array?, dx, dy, dpitch, src, src_array?, sx, sy, spitch,
   width bytes, height rows, kind, stream, blocking). Arrays take offsets (x in bytes, y in rows);
   linear memory takes a pitch. */
#define ACOPY(dst, dsta, dx, dy, dp, src, srca, sx, sy, sp, w, h, kind, stream, blocking)                    \
    CALL(__func__, P(dst), dsta, dx, dy, dp, P(src), srca, sx, sy, sp, w, h, (uint64_t)(kind), \
         P(stream), blocking)

EXPORT cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                     enum cudaMemcpyKind kind)
{
    ACOPY(dst, 1, wOffset, hOffset, 0, src, 0, 0, 0, 0, count, 0, kind, 0, 1);
}
EXPORT cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                          size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    ACOPY(dst, 1, wOffset, hOffset, 0, src, 0, 0, 0, 0, count, 0, kind, stream, 0);
}
EXPORT cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                       size_t count, enum cudaMemcpyKind kind)
{
    ACOPY(dst, 0, 0, 0, 0, src, 1, wOffset, hOffset, 0, count, 0, kind, 0, 1);
}
EXPORT cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                            size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    ACOPY(dst, 0, 0, 0, 0, src, 1, wOffset, hOffset, 0, count, 0, kind, stream, 0);
}
EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                       size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    ACOPY(dst, 1, wOffset, hOffset, 0, src, 0, 0, 0, spitch, width, height, kind, 0, 1);
}
EXPORT cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                            size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
                                            cudaStream_t stream)
{
    ACOPY(dst, 1, wOffset, hOffset, 0, src, 0, 0, 0, spitch, width, height, kind, stream, 0);
}
EXPORT cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                         size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    ACOPY(dst, 0, 0, 0, dpitch, src, 1, wOffset, hOffset, 0, width, height, kind, 0, 1);
}
EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                              size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind,
                                              cudaStream_t stream)
{
    ACOPY(dst, 0, 0, 0, dpitch, src, 1, wOffset, hOffset, 0, width, height, kind, stream, 0);
}
EXPORT cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                            cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                            size_t width, size_t height, enum cudaMemcpyKind kind)
{
    ACOPY(dst, 1, wOffsetDst, hOffsetDst, 0, src, 1, wOffsetSrc, hOffsetSrc, 0, width, height, kind, 0, 1);
}

/* ------------------------------------------------------------------ texture objects */

EXPORT cudaError_t cudaCreateTextureObject(cudaTextureObject_t *pTexObject, const struct cudaResourceDesc *pResDesc,
                                           const struct cudaTextureDesc *pTexDesc,
                                           const struct cudaResourceViewDesc *pResViewDesc)
{
    if (!pResDesc || !pTexDesc)
        CALL("cudaCreateTextureObject", P(pTexObject), 99);
    const struct cudaResourceDesc *r = pResDesc;
    const struct cudaTextureDesc *t = pTexDesc;
    uint64_t base = 0, size = 0, width = 0, height = 0, pitch = 0;
    struct cudaChannelFormatDesc d = {0, 0, 0, 0, cudaChannelFormatKindNone};
    switch (r->resType) {
    case cudaResourceTypeArray: base = P(r->res.array.array); break;
    case cudaResourceTypeLinear:
        base = P(r->res.linear.devPtr); d = r->res.linear.desc; size = r->res.linear.sizeInBytes;
        break;
    case cudaResourceTypePitch2D:
        base = P(r->res.pitch2D.devPtr); d = r->res.pitch2D.desc; width = r->res.pitch2D.width;
        height = r->res.pitch2D.height; pitch = r->res.pitch2D.pitchInBytes;
        break;
    default: break;
    }
    CALL("cudaCreateTextureObject", P(pTexObject), (uint64_t)r->resType, base, DESC(d), size, width, height, pitch,
         (uint64_t)t->addressMode[0], (uint64_t)t->addressMode[1], (uint64_t)t->addressMode[2],
         (uint64_t)t->filterMode, (uint64_t)t->readMode, (uint64_t)t->normalizedCoords, (uint64_t)t->sRGB,
         float_bits(t->borderColor[0]), float_bits(t->borderColor[1]), float_bits(t->borderColor[2]),
         float_bits(t->borderColor[3]), P(pResViewDesc));
}

EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject)
{
    CALL("cudaDestroyTextureObject", (uint64_t)texObject);
}

/* ------------------------------------------------------------------ per-thread default stream variants */

ALIAS(cudaMemcpyToArray_ptds, cudaMemcpyToArray);
ALIAS(cudaMemcpyToArrayAsync_ptsz, cudaMemcpyToArrayAsync);
ALIAS(cudaMemcpyFromArray_ptds, cudaMemcpyFromArray);
ALIAS(cudaMemcpyFromArrayAsync_ptsz, cudaMemcpyFromArrayAsync);
ALIAS(cudaMemcpy2DToArray_ptds, cudaMemcpy2DToArray);
ALIAS(cudaMemcpy2DToArrayAsync_ptsz, cudaMemcpy2DToArrayAsync);
ALIAS(cudaMemcpy2DFromArray_ptds, cudaMemcpy2DFromArray);
ALIAS(cudaMemcpy2DFromArrayAsync_ptsz, cudaMemcpy2DFromArrayAsync);
ALIAS(cudaMemcpy2DArrayToArray_ptds, cudaMemcpy2DArrayToArray);
