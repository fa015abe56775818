"""transpose: 32x32 tiles staged through a padded shared-memory tile (SDK transpose, coalesced)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

SHAPE = {"tiny": (48, 80), "small": (768, 1024),
         "study": (1024, 1024), "paper": (4096, 4096)}  # (rows, cols) of the input
TILE = 32
BLOCK = (32, 8)


@register("transpose", "out = in^T through a 32x33 shared-memory tile, 4 elements per thread",
          "transpose.cu", stands_for=("TRA", "transpose", "SDK transpose (coalesced)"),
          traits=("2d-grid", "shared-memory", "memory-bound"))
def run(size, rng):
    rows, cols = SHAPE[size]
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    k = cp.RawKernel(kernel_source("transpose.cu"), "transpose_tiled")
    dx = cp.asarray(x)
    dy = cp.zeros((cols, rows), np.float32)
    k(((cols + TILE - 1) // TILE, (rows + TILE - 1) // TILE), BLOCK, (dx, dy, np.int32(rows), np.int32(cols)))
    return [compare("out", dy.get(), x.T)]  # pure data movement: exact
