"""transpose_naive: one element per thread, coalesced reads and scattered writes.

Stands in for: SDK transpose (naive).
Trait that matters: thread-limited, coalesced reads and scattered writes."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

SHAPE = {"tiny": (48, 80), "small": (768, 1024),
         "study": (768, 1024), "paper": (4096, 4096)}  # (rows, cols) of the input
BLOCK = (32, 8)


@register("transpose_naive", "out = in^T, one element per thread; the stores of a warp are rows apart",
          "transpose_naive.cu", stands_for=("TRA", "transpose", "SDK transpose (naive)"),
          traits=("2d-grid", "memory-bound"))
def run(size, rng):
    rows, cols = SHAPE[size]
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    k = cp.RawKernel(kernel_source("transpose_naive.cu"), "transpose_naive")
    dx = cp.asarray(x)
    dy = cp.zeros((cols, rows), np.float32)
    k(((cols + BLOCK[0] - 1) // BLOCK[0], (rows + BLOCK[1] - 1) // BLOCK[1]), BLOCK,
      (dx, dy, np.int32(rows), np.int32(cols)))
    return [compare("out", dy.get(), x.T)]  # pure data movement: exact
