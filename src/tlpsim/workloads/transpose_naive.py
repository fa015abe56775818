"""transpose_naive: one element per thread, coalesced reads and scattered writes.

Stands in for: SDK transpose (naive); the variant transpose_naive_16x16 is the naive kernel of
TRAN (Lee et al. HPCA 2014, Table 2: 4096 CTAs of 16x16, a 1024 x 1024 matrix).
Trait that matters: thread-limited, coalesced reads and scattered writes. With 16x16 CTAs on
TRAN's matrix a warp's store half-writes 16 lines 4 KiB apart, and the L2 evicts more of them
half written as CTAs per SM rise (Type IV on gtx480: docs/workloads.md)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register, register_variant

SHAPE = {"tiny": (48, 80), "small": (768, 1024),
         "study": (768, 1024), "paper": (4096, 4096)}  # (rows, cols) of the input
# Lee et al.'s TRAN: 4096 CTAs of 16x16, a 1024 x 1024 matrix (Table 2), at `study` and `paper`
TRAN_SHAPE = {"tiny": (48, 80), "small": (512, 512), "study": (1024, 1024), "paper": (1024, 1024)}
BLOCK = (32, 8)


@register("transpose_naive", "out = in^T, one element per thread; the stores of a warp are rows apart",
          "transpose_naive.cu", stands_for=("TRA", "transpose", "SDK transpose (naive)"),
          traits=("2d-grid", "memory-bound"))
def run(size, rng, block=BLOCK, shapes=None):
    rows, cols = (shapes or SHAPE)[size]
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    k = cp.RawKernel(kernel_source("transpose_naive.cu"), "transpose_naive")
    dx = cp.asarray(x)
    dy = cp.zeros((cols, rows), np.float32)
    k(((cols + block[0] - 1) // block[0], (rows + block[1] - 1) // block[1]), block,
      (dx, dy, np.int32(rows), np.int32(cols)))
    return [compare("out", dy.get(), x.T)]  # pure data movement: exact


register_variant("transpose_naive", "transpose_naive_16x16", "transpose_naive as the naive kernel of Lee et al.'s TRAN: "
                 "16x16 CTAs on a 1024 x 1024 matrix (4096 CTAs), so a warp's stores half-write 16 lines 4 KiB apart",
                 stands_for=("TRAN (naive kernel)",), block=(16, 16), shapes=TRAN_SHAPE)
