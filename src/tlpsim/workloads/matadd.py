"""matadd: 2D element-wise matrix addition on a 2D grid (Polybench-style)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# (rows, cols); deliberately not multiples of the CTA shape so edge CTAs are partial.
SHAPE = {"tiny": (72, 100), "small": (1000, 1000), "study": (1000, 1000), "paper": (4096, 4096)}
BLOCK = (32, 8)


@register("matadd", "C = A + B over float32 matrices, one thread per element on a 2D grid", "matadd.cu",
          stands_for=("MA", "matrixAdd", "Polybench"), traits=("2d-grid", "memory-bound"))
def run(size, rng):
    rows, cols = SHAPE[size]
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    b = rng.standard_normal((rows, cols), dtype=np.float32)
    k = cp.RawKernel(kernel_source("matadd.cu"), "matadd")
    da, db = cp.asarray(a), cp.asarray(b)
    dc = cp.zeros((rows, cols), np.float32)
    grid = ((cols + BLOCK[0] - 1) // BLOCK[0], (rows + BLOCK[1] - 1) // BLOCK[1])
    k(grid, BLOCK, (da, db, dc, np.int32(rows), np.int32(cols)))
    # a float32 add is correctly rounded on both sides: exact match expected
    return [compare("C", dc.get(), a + b)]
