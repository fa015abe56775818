"""gaussian: Gaussian elimination, one multiplier launch and one 2D update launch per
pivot (Rodinia gaussian): 2(n-1) small launches with shrinking grids of 64-thread CTAs.

Verified against the same elimination in float64 and by back-substituting the
device's triangular system against numpy.linalg.solve.

Stands in for: gaussian (RegLess: all of Rodinia).
Trait that matters: 2(n-1) small launches with shrinking grids (fixed by the algorithm)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BXY = 8
BLOCK1 = 256
# matrix order; paper: Rodinia's 1024 x 1024 input
N = {"tiny": 16, "small": 128, "study": 256, "paper": 1024}


def _eliminate(a, b):
    a = a.astype(np.float64).copy()
    b = b.astype(np.float64).copy()
    m = np.zeros_like(a)
    n = a.shape[0]
    for t in range(n - 1):
        m[t + 1:, t] = a[t + 1:, t] / a[t, t]
        a[t + 1:, t:] -= np.outer(m[t + 1:, t], a[t, t:])
        b[t + 1:] -= m[t + 1:, t] * b[t]
    return a, b, m


def _back_substitute(u, y):
    x = np.zeros_like(y)
    for i in range(len(y) - 1, -1, -1):
        x[i] = (y[i] - u[i, i + 1:] @ x[i + 1:]) / u[i, i]
    return x


@register("gaussian", "Gaussian elimination: per-pivot multiplier and 2D update launches",
          "gaussian.cu", stands_for=("GS", "GE", "gaussian"),
          traits=("multi-kernel", "2d-grid", "memory-bound"))
def run(size, rng):
    n = N[size]
    a = (rng.random((n, n), dtype=np.float32) - np.float32(0.5))
    a[np.diag_indices(n)] += np.float32(n / 2)        # diagonally dominant: no pivoting needed
    b = rng.random(n, dtype=np.float32)
    mod = cp.RawModule(code=kernel_source("gaussian.cu"))
    mult = mod.get_function("gauss_multipliers")
    elim = mod.get_function("gauss_eliminate")
    d_a, d_b, d_m = cp.asarray(a), cp.asarray(b), cp.zeros((n, n), np.float32)
    for t in range(n - 1):
        rows = n - t - 1
        mult(((rows + BLOCK1 - 1) // BLOCK1,), (BLOCK1,), (d_a, d_m, np.int32(n), np.int32(t)))
        elim(((n - t + BXY - 1) // BXY, (rows + BXY - 1) // BXY), (BXY, BXY),
             (d_a, d_b, d_m, np.int32(n), np.int32(t)))
    got_a, got_b, got_m = d_a.get(), d_b.get(), d_m.get()
    ref_a, ref_b, ref_m = _eliminate(a, b)
    # every entry is updated up to n times in float32: error <~ n * eps * (entry scale);
    # the eliminated part below the diagonal is rounding residue and is not compared
    eps = 2.0 ** -23
    scale_a = float(np.abs(ref_a).max())
    x = _back_substitute(np.triu(got_a).astype(np.float64), got_b.astype(np.float64))
    x_ref = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    return [
        compare("multipliers", np.tril(got_m, -1), np.tril(ref_m, -1), rtol=1e-4, atol=4 * eps),
        compare("upper triangle", np.triu(got_a), np.triu(ref_a), rtol=1e-4, atol=n * eps * scale_a),
        compare("rhs", got_b, ref_b, rtol=1e-4, atol=n * eps * float(np.abs(ref_b).max())),
        # diagonally dominant => condition number O(1): relative solution error ~ n * eps
        compare("solution", x, x_ref, rtol=1e-4, atol=n * eps * float(np.abs(x_ref).max())),
    ]
