"""stencil2d: 5-point Jacobi sweeps of the 2D Laplace equation, one launch per sweep.

Stands in for: LPS in 2D (Lee et al. HPCA 2014, Table 2: 3D Laplace solver, 16x8 CTAs, Type IV; the
variant stencil2d_16x8 has that shape, and `laplace3d` is the 3D solver itself); Jacobi-2D stencils.
Trait that matters: thread-limited, neighbour reuse left to the L1/L2; 32x8 CTAs (a `block`
parameter gives other shapes)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register, register_variant

BLOCK = (32, 8)
# rows, cols, sweeps
SIZES = {"tiny": (40, 72, 3), "small": (512, 512, 4), "study": (512, 512, 4), "paper": (4096, 4096, 100)}


def reference(grid, sweeps):
    g = grid.astype(np.float64)
    for _ in range(sweeps):
        nxt = g.copy()
        nxt[1:-1, 1:-1] = 0.25 * ((g[:-2, 1:-1] + g[2:, 1:-1]) + (g[1:-1, :-2] + g[1:-1, 2:]))
        g = nxt
    return g


@register("stencil2d", "5-point Jacobi sweeps over a 2D grid, one launch per sweep", "stencil2d.cu",
          stands_for=("ST2D", "stencil2d", "Jacobi-2D", "jacobi-2d"),
          traits=("2d-grid", "memory-bound", "cache-sensitive"))
def run(size, rng, block=BLOCK):
    rows, cols, sweeps = SIZES[size]
    grid0 = rng.random((rows, cols), dtype=np.float32)
    grid0[0, :], grid0[-1, :], grid0[:, 0], grid0[:, -1] = 1.0, 0.0, 0.5, 0.25   # boundary values
    k = cp.RawKernel(kernel_source("stencil2d.cu"), "jacobi5")
    bufs = [cp.asarray(grid0), cp.zeros((rows, cols), np.float32)]
    launch_grid = (-(-cols // block[0]), -(-rows // block[1]))
    for s in range(sweeps):
        k(launch_grid, block, (bufs[s % 2], bufs[(s + 1) % 2], np.int32(rows), np.int32(cols)))
    # Averaging never amplifies error: a few float32 roundings per sweep, values in [0, 1].
    return [compare("grid", bufs[sweeps % 2].get(), reference(grid0, sweeps), rtol=1e-5, atol=1e-6)]


register_variant("stencil2d", "stencil2d_16x8", "stencil2d with the paper's 16x8 CTAs (LPS in Lee et al.'s Table 2): "
                 "horizontally adjacent CTAs share 128 B L1 lines, and each CTA's halo rows are its vertical "
                 "neighbours' rows", stands_for=("LPS",), block=(16, 8))
