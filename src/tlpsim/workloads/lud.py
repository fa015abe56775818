"""lud: blocked LU decomposition without pivoting (Rodinia LUD).

Per 16-column block step: a 1-CTA diagonal factorisation, a perimeter kernel
(row block of U and column block of L, the two half-warps on different loops) and
a 2D-grid internal update of the shrinking trailing submatrix. The input is
diagonally dominant so no pivoting is needed; verified against a float64
Doolittle factorisation and by reconstructing A = L U.

Stands in for: lud (RegLess: all of Rodinia).
Trait that matters: 16x16 CTAs on shrinking grids (fixed by the algorithm), register-limited
internal kernel."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BS = 16
# matrix order (multiple of 16); paper: Rodinia's 2048 x 2048 input
N = {"tiny": 48, "small": 256, "study": 512, "paper": 2048}


def _doolittle(a):
    a = a.astype(np.float64).copy()
    for i in range(a.shape[0] - 1):
        a[i + 1:, i] /= a[i, i]
        a[i + 1:, i + 1:] -= np.outer(a[i + 1:, i], a[i, i + 1:])
    return a


@register("lud", "blocked LU decomposition: diagonal, perimeter and internal kernels per block step",
          "lud.cu", stands_for=("LUD", "LU", "lud"),
          traits=("2d-grid", "shared-memory", "multi-kernel", "barrier-heavy", "divergent"))
def run(size, rng):
    n = N[size]
    nb = n // BS
    a = rng.random((n, n), dtype=np.float32)
    a[np.diag_indices(n)] += np.float32(n)          # diagonally dominant: no pivoting
    mod = cp.RawModule(code=kernel_source("lud.cu"))
    diagonal = mod.get_function("lud_diagonal")
    perimeter = mod.get_function("lud_perimeter")
    internal = mod.get_function("lud_internal")
    d_a = cp.asarray(a)
    for k in range(nb):
        diagonal((1,), (BS, BS), (d_a, np.int32(n), np.int32(k)))
        rest = nb - k - 1
        if rest:
            perimeter((rest,), (2 * BS,), (d_a, np.int32(n), np.int32(k)))
            internal((rest, rest), (BS, BS), (d_a, np.int32(n), np.int32(k)))
    lu = d_a.get().astype(np.float64)
    ref = _doolittle(a)
    lower = np.tril(lu, -1) + np.eye(n)
    upper = np.triu(lu)
    # Each entry of the factors is an O(n)-term float32 sum: with eps = 2^-23 the
    # rounding error is at most ~ n * eps * (the size of the terms). U's terms are
    # O(1) (off-diagonal) to O(n) (diagonal); L = A_ij / U_jj is O(1/n) with an
    # O(1/n) smaller absolute error. Backward error: |A - L U| <= ~ n * eps * |L||U|.
    eps = 2.0 ** -23
    return [
        compare("L", np.tril(lu, -1), np.tril(ref, -1), rtol=1e-4, atol=4 * eps),
        compare("U", upper, np.triu(ref), rtol=1e-4, atol=4 * n * eps),
        compare("L @ U", lower @ upper, a.astype(np.float64), rtol=0.0, atol=n * eps * float(np.abs(a).max())),
    ]
