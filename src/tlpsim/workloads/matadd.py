"""matadd: 2D element-wise matrix addition on a 2D grid (Polybench-style).

Stands in for: MADD (Lee et al. HPCA 2014, Table 2: 16x16 CTAs, Type II: the variant matadd_16x16).
Trait that matters: streaming, thread-limited; 32x8 CTAs share no L1 line with their neighbours (a
`block` parameter gives other shapes)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register, register_variant

# (rows, cols); deliberately not multiples of the CTA shape so edge CTAs are partial.
SHAPE = {"tiny": (72, 100), "small": (1000, 1000), "study": (1000, 1000), "paper": (4096, 4096)}
BLOCK = (32, 8)


@register("matadd", "C = A + B over float32 matrices, one thread per element on a 2D grid", "matadd.cu",
          stands_for=("MA", "matrixAdd", "Polybench"), traits=("2d-grid", "memory-bound"))
def run(size, rng, block=BLOCK):
    rows, cols = SHAPE[size]
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    b = rng.standard_normal((rows, cols), dtype=np.float32)
    k = cp.RawKernel(kernel_source("matadd.cu"), "matadd")
    da, db = cp.asarray(a), cp.asarray(b)
    dc = cp.zeros((rows, cols), np.float32)
    grid = ((cols + block[0] - 1) // block[0], (rows + block[1] - 1) // block[1])
    k(grid, block, (da, db, dc, np.int32(rows), np.int32(cols)))
    # a float32 add is correctly rounded on both sides: exact match expected
    return [compare("C", dc.get(), a + b)]


register_variant("matadd", "matadd_16x16", "matadd with the paper's 16x16 CTAs: a CTA row is 64 B, half a 128 B "
                 "L1 line, so horizontally adjacent CTAs share lines", stands_for=("MADD",), block=(16, 16))
