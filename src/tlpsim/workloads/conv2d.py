"""conv2d: 2D convolution, constant-memory filter, shared-memory input tile with halo.

Stands in for: CONV (GPUDuet Table 2: Polybench 2DCONV).
Trait that matters: 32x8 CTAs, shared-memory-limited (a 15 KiB tile: 3 CTAs/SM on Fermi),
constant-memory filter."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

R, BX, BY, OUT_X, OUT_Y = 3, 32, 8, 64, 48   # matches conv2d.cu
TAPS = 2 * R + 1
# rows, cols
SIZES = {"tiny": (60, 90), "small": (384, 512), "study": (1152, 1536), "paper": (4096, 4096)}


def reference(img, filt):
    """out[y, x] = sum_{i,j} filt[i, j] * img[y + i - R, x + j - R], zero outside the image."""
    p = np.pad(img.astype(np.float64), R)
    rows, cols = img.shape
    out = np.zeros((rows, cols))
    for i in range(TAPS):
        for j in range(TAPS):
            out += filt[i, j] * p[i:i + rows, j:j + cols]
    return out


@register("conv2d", "7x7 2D convolution: constant-memory filter, 14.8 KiB shared input tile per CTA",
          "conv2d.cu", stands_for=("CONV", "2DCONV", "convolution2D", "2dconv"),
          traits=("2d-grid", "constant-memory", "shared-memory", "compute-bound"))
def run(size, rng):
    rows, cols = SIZES[size]
    img = rng.random((rows, cols), dtype=np.float32)
    filt = rng.standard_normal((TAPS, TAPS)).astype(np.float32)
    filt /= np.abs(filt).sum()
    mod = cp.RawModule(code=kernel_source("conv2d.cu"))
    mod.get_global("c_filter").set(np.frombuffer(filt.tobytes(), np.uint8))   # cudaMemcpyToSymbol
    k = mod.get_function("conv2d")
    d_in, d_out = cp.asarray(img), cp.zeros((rows, cols), np.float32)
    k((-(-cols // OUT_X), -(-rows // OUT_Y)), (BX, BY), (d_in, d_out, np.int32(rows), np.int32(cols)))
    # 49-term float32 dot products of values in [0, 1] with weights of total magnitude 1.
    return [compare("out", d_out.get(), reference(img, filt), rtol=1e-4, atol=1e-5)]
