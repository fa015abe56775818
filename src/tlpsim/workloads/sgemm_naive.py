"""sgemm_naive: one thread per output element GEMM straight from global memory.

Stands in for: GEMM (GPUDuet Table 2: Polybench GEMM).
Trait that matters: 16x16 CTAs, register-limited, cache-sensitive global re-reads."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# (M, N, K); K is not a multiple of the unroll factor at tiny to exercise the tail loop.
SHAPE = {"tiny": (40, 48, 37), "small": (192, 192, 192), "study": (448, 448, 192), "paper": (1024, 1024, 1024)}
BLOCK = (16, 16)


@register("sgemm_naive", "C = alpha*A*B + beta*C, one thread per output, k loop unrolled 8x into 4 accumulators",
          "sgemm_naive.cu", stands_for=("GEMM", "gemm", "MM", "Polybench"),
          traits=("2d-grid", "register-heavy", "cache-sensitive"))
def run(size, rng):
    m, n, kdim = SHAPE[size]
    alpha, beta = np.float32(1.5), np.float32(0.5)
    a = rng.uniform(-1, 1, (m, kdim)).astype(np.float32)
    b = rng.uniform(-1, 1, (kdim, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    k = cp.RawKernel(kernel_source("sgemm_naive.cu"), "sgemm_naive")
    da, db, dc = cp.asarray(a), cp.asarray(b), cp.asarray(c)
    grid = ((n + BLOCK[0] - 1) // BLOCK[0], (m + BLOCK[1] - 1) // BLOCK[1])
    k(grid, BLOCK, (da, db, dc, np.int32(m), np.int32(n), np.int32(kdim), alpha, beta))
    ref = float(alpha) * (a.astype(np.float64) @ b.astype(np.float64)) + float(beta) * c.astype(np.float64)
    # float32 dot products of length K with |terms| <= 1: absolute error grows like
    # sqrt(K) * eps * sum|a*b| <= ~K * 6e-8; atol covers K up to 1024 with margin.
    return [compare("C", dc.get(), ref, rtol=1e-4, atol=1e-4 * np.sqrt(kdim))]
