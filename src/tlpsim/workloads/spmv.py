"""spmv: CSR sparse matrix-vector multiply, scalar and vector kernels (Parboil SPMV).

The matrix has heavily skewed (log-normal) row lengths, mean ~10 and a tail of
a few hundred, with column indices mostly near the diagonal and partly uniform:
the scalar kernel (thread per row) diverges on row length and gathers x
irregularly; the vector kernel (warp per row) reduces with warp shuffles.

Stands in for: SPMV (GPUDuet Table 2: Parboil spmv).
Trait that matters: irregular gathers, divergent row lengths, register-limited (48 registers)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# rows (= columns); paper ~ Parboil SPMV "large" (~147k rows)
SIZES = {"tiny": 1024, "small": 12288, "study": 12288, "paper": 131072}
BLOCK = 256


def make_csr(n, rng):
    """Random CSR matrix: log-normal row lengths, 70% of entries within +-256 of the
    diagonal, the rest uniform; sorted, duplicate-free column indices per row."""
    lengths = np.minimum(np.floor(np.exp(rng.normal(1.8, 1.0, n))).astype(np.int64) + 1, n // 4)
    rows = np.repeat(np.arange(n), lengths)
    near = rows + rng.integers(-256, 257, rows.size)
    cols = np.where(rng.random(rows.size) < 0.7, near, rng.integers(0, n, rows.size)) % n
    key = np.unique(rows * n + cols)  # sorts by (row, col) and drops duplicates
    rows, cols = key // n, key % n
    row_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=row_ptr[1:])
    vals = rng.uniform(-1.0, 1.0, cols.size).astype(np.float32)
    return row_ptr.astype(np.int32), cols.astype(np.int32), vals, rows


@register("spmv", "CSR sparse matrix-vector multiply, thread-per-row and warp-per-row, skewed rows", "spmv.cu",
          stands_for=("SPMV", "spmv", "SpMV"),
          traits=("irregular", "divergent", "cache-sensitive", "memory-bound", "multi-kernel"))
def run(size, rng):
    n = SIZES[size]
    row_ptr, cols, vals, rows = make_csr(n, rng)
    x = rng.uniform(-1.0, 1.0, n).astype(np.float32)

    mod = cp.RawModule(code=kernel_source("spmv.cu"))
    d_ptr, d_cols, d_vals, d_x = cp.asarray(row_ptr), cp.asarray(cols), cp.asarray(vals), cp.asarray(x)
    y_scalar, y_vector = cp.zeros(n, np.float32), cp.zeros(n, np.float32)
    args = (d_ptr, d_cols, d_vals, d_x)
    mod.get_function("spmv_csr_scalar")(((n + BLOCK - 1) // BLOCK,), (BLOCK,), args + (y_scalar, np.int32(n)))
    mod.get_function("spmv_csr_vector")(((n * 32 + BLOCK - 1) // BLOCK,), (BLOCK,), args + (y_vector, np.int32(n)))

    prod = vals.astype(np.float64) * x[cols].astype(np.float64)
    ref = np.bincount(rows, weights=prod, minlength=n)
    # per-row scale: sum |a_ij x_j| (+1 for empty rows, whose result must be exactly 0)
    scale = np.bincount(rows, weights=np.abs(prod), minlength=n) + (row_ptr[1:] == row_ptr[:-1])
    # float32 sums of L products in either order err by <= ~L * 2^-24 of sum |a_ij x_j|
    # in the worst case, ~sqrt(L) * 2^-24 typically; rows here have L <= a few hundred.
    return [compare("y (scalar kernel, relative to row sum |a x|)", y_scalar.get() / scale, ref / scale, atol=1e-5),
            compare("y (vector kernel, relative to row sum |a x|)", y_vector.get() / scale, ref / scale, atol=1e-5)]
