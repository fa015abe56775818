"""mm2: Polybench 2MM, D = alpha*A*B*C + beta*D as two dependent GEMM launches.

Stands in for: MM (GPUDuet Table 2: Polybench 2MM).
Trait that matters: register-limited (48 registers), cache-sensitive global re-reads."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# (NI, NJ, NK, NL): distinct extents so a swapped index would be caught.
SHAPE = {"tiny": (40, 36, 44, 52), "small": (128, 112, 144, 136),
         "study": (2048, 96, 64, 96), "paper": (2048, 2048, 2048, 2048)}
BLOCK = (32, 8)


def _grid(cols, rows):
    return ((cols + BLOCK[0] - 1) // BLOCK[0], (rows + BLOCK[1] - 1) // BLOCK[1])


@register("mm2", "Polybench 2MM: tmp = alpha*A*B then D = beta*D + tmp*C (two launches, 2D grids)", "mm2.cu",
          stands_for=("2MM", "2mm", "Polybench"), traits=("2d-grid", "multi-kernel", "cache-sensitive"))
def run(size, rng):
    ni, nj, nk, nl = SHAPE[size]
    alpha, beta = np.float32(1.25), np.float32(0.8)
    a = rng.uniform(0, 1, (ni, nk)).astype(np.float32)
    b = rng.uniform(0, 1, (nk, nj)).astype(np.float32)
    c = rng.uniform(0, 1, (nj, nl)).astype(np.float32)
    d = rng.uniform(0, 1, (ni, nl)).astype(np.float32)
    mod = cp.RawModule(code=kernel_source("mm2.cu"))
    k1, k2 = mod.get_function("mm2_stage1"), mod.get_function("mm2_stage2")
    da, db, dc, dd = cp.asarray(a), cp.asarray(b), cp.asarray(c), cp.asarray(d)
    dtmp = cp.zeros((ni, nj), np.float32)
    k1(_grid(nj, ni), BLOCK, (da, db, dtmp, np.int32(ni), np.int32(nj), np.int32(nk), alpha))
    k2(_grid(nl, ni), BLOCK, (dtmp, dc, dd, np.int32(ni), np.int32(nj), np.int32(nl), beta))
    tmp_ref = float(alpha) * (a.astype(np.float64) @ b.astype(np.float64))
    d_ref = float(beta) * d.astype(np.float64) + tmp_ref @ c.astype(np.float64)
    # all inputs are non-negative, so every sum is free of cancellation and the
    # float32 sequential sums stay within a few K*eps relative of the exact value
    return [compare("tmp", dtmp.get(), tmp_ref, rtol=1e-4),
            compare("D", dd.get(), d_ref, rtol=2e-4)]
