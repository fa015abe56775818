"""stencil3d: 7-point 3D stencil marching in z with register-held columns (Parboil stencil).

Stands in for: STN (Lee et al. HPCA 2014, Table 2: 32x4 CTAs, Type IV); ST (EXPARS Table 3: Parboil
block2D_hybrid_coarsen_x; GPUDuet Table 2).
Trait that matters: 32x4 CTAs marching in z, register-limited (48 registers)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BX, BY, COLS = 32, 4, 4  # matches stencil3d.cu
# nx, ny, nz, iterations
SIZES = {"tiny": (40, 20, 8, 2), "small": (128, 128, 32, 2), "study": (512, 1152, 8, 2), "paper": (512, 512, 64, 100)}
C0, C1 = 0.4, 0.1   # a smoothing stencil: weights sum to 1, values stay in [0, 1]


def reference(a, iterations):
    a = a.astype(np.float64)   # indexed [z, y, x]
    for _ in range(iterations):
        b = a.copy()
        b[1:-1, 1:-1, 1:-1] = C0 * a[1:-1, 1:-1, 1:-1] + C1 * (
            a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1] + a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:]
            + a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1])
        a = b
    return a


@register("stencil3d", "7-point 3D stencil, 2D grid over (x, y), each thread marches 4 columns in z",
          "stencil3d.cu", stands_for=("STENCIL", "stencil", "ST", "Parboil stencil"),
          traits=("2d-grid", "register-heavy", "memory-bound"))
def run(size, rng):
    nx, ny, nz, iterations = SIZES[size]
    a0 = rng.random((nz, ny, nx), dtype=np.float32)
    k = cp.RawKernel(kernel_source("stencil3d.cu"), "stencil7")
    # Both buffers start as the input so the (never written) boundary faces stay fixed.
    bufs = [cp.asarray(a0), cp.asarray(a0.copy())]
    grid = (-(-nx // BX), -(-ny // (BY * COLS)))
    for it in range(iterations):
        k(grid, (BX, BY), (bufs[it % 2], bufs[(it + 1) % 2], np.int32(nx), np.int32(ny), np.int32(nz),
                           np.float32(C0), np.float32(C1)))
    # Seven-term float32 sums of values in [0, 1] with weights summing to 1: rounding stays ~1e-7.
    return [compare("grid", bufs[iterations % 2].get(), reference(a0, iterations), rtol=1e-5, atol=1e-6)]
