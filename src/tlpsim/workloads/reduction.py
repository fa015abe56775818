"""reduction: two-launch parallel sum (shared-memory tree + warp shuffles), SDK reduction.

Stands in for: SDK reduction.
Trait that matters: thread-limited, a second single-CTA launch."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# (elements, CTAs of the first launch); n is not a multiple of the grid's thread count.
SIZE = {"tiny": (10_000, 8), "small": (2_000_003, 1024), "study": (2_000_003, 1024), "paper": (1 << 24, 2048)}
BLOCK = 256


@register("reduction", "sum of a float32 array: per-CTA partial sums, then one CTA reduces the partials",
          "reduction.cu", stands_for=("RD", "reduction", "SDK reduction"),
          traits=("shared-memory", "barrier-heavy", "multi-kernel", "memory-bound"))
def run(size, rng):
    n, grid = SIZE[size]
    x = rng.uniform(0, 1, n).astype(np.float32)
    mod = cp.RawModule(code=kernel_source("reduction.cu"))
    k1, k2 = mod.get_function("reduce_partial"), mod.get_function("reduce_final")
    dx = cp.asarray(x)
    dpart = cp.zeros(grid, np.float32)
    dout = cp.zeros(1, np.float32)
    k1((grid,), (BLOCK,), (dx, dpart, np.int32(n)))
    k2((1,), (BLOCK,), (dpart, dout, np.int32(grid)))
    # element i is visited by CTA (i // BLOCK) % grid (grid-stride loop)
    owner = (np.arange(n) // BLOCK) % grid
    part_ref = np.bincount(owner, weights=x.astype(np.float64), minlength=grid)
    # all terms are in [0, 1): no cancellation; float32 partial sums of a few thousand
    # terms (sequential runs of n/(grid*BLOCK), then a tree) stay within ~1e-6 relative
    return [compare("partials", dpart.get(), part_ref, rtol=1e-5),
            compare("sum", dout.get(), np.array([x.astype(np.float64).sum()]), rtol=1e-5)]
