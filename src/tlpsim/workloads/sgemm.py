"""sgemm: shared-memory tiled GEMM with 4x4 register tiles per thread (Parboil SGEMM / SDK matrixMul).

Stands in for: MMUL (Lee et al. HPCA 2014, Table 2: 16x16 CTAs, Type I); SGE (EXPARS Table 3:
Parboil mysgemmNT); MMS (GPUDuet Table 2: SDK matrixMul).
Trait that matters: 16x16 CTAs, register-limited (64 registers), compute-bound."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# (M, N, K): M, N multiples of the 64x64 CTA tile, K a multiple of the 16-deep k tile.
SHAPE = {"tiny": (128, 64, 48), "small": (512, 512, 112), "study": (1536, 1024, 112), "paper": (1024, 1024, 1024)}
TILE_M, TILE_N, TILE_K = 64, 64, 16
BLOCK = (16, 16)


@register("sgemm", "C = alpha*A*B + beta*C with 64x64 shared-memory tiles and 4x4 outputs per thread",
          "sgemm.cu", stands_for=("SGEMM", "sgemm", "MM", "matrixMul"),
          traits=("2d-grid", "shared-memory", "register-heavy", "compute-bound", "barrier-heavy"))
def run(size, rng):
    m, n, kdim = SHAPE[size]
    assert m % TILE_M == 0 and n % TILE_N == 0 and kdim % TILE_K == 0
    alpha, beta = np.float32(1.0), np.float32(-0.75)
    a = rng.uniform(-1, 1, (m, kdim)).astype(np.float32)
    b = rng.uniform(-1, 1, (kdim, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    k = cp.RawKernel(kernel_source("sgemm.cu"), "sgemm_tiled")
    da, db, dc = cp.asarray(a), cp.asarray(b), cp.asarray(c)
    k((n // TILE_N, m // TILE_M), BLOCK, (da, db, dc, np.int32(m), np.int32(n), np.int32(kdim), alpha, beta))
    ref = float(alpha) * (a.astype(np.float64) @ b.astype(np.float64)) + float(beta) * c.astype(np.float64)
    # sequential float32 FMA chain of length K with |terms| <= 1 (see sgemm_naive)
    return [compare("C", dc.get(), ref, rtol=1e-4, atol=1e-4 * np.sqrt(kdim))]
