"""fdtd2d: 2D FDTD electromagnetics, three kernels per time step (Polybench FDTD-2D).

Stands in for: FDTD (Lee et al. HPCA 2014, Table 2: 3D FDTD, 16x16 CTAs, Type II: the variant
fdtd2d_16x16); FDTD_1/FDTD_2 (GPUDuet Table 2: Polybench FDTD-2D).
Trait that matters: three dependent memory-bound kernels per time step; thread-limited 32x8 CTAs (a
`block` parameter gives other shapes)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register, register_variant

BLOCK = (32, 8)
# nx (rows), ny (columns), time steps
SIZES = {"tiny": (40, 72, 2), "small": (256, 256, 6), "study": (512, 512, 2), "paper": (2048, 2048, 500)}


def reference(ex, ey, hz, source, steps):
    ex, ey, hz = (a.astype(np.float64) for a in (ex, ey, hz))
    for t in range(steps):
        ey[0, :] = source[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


@register("fdtd2d", "2D FDTD: ey, ex and hz update kernels per time step", "fdtd2d.cu",
          stands_for=("FDTD", "FDTD-2D", "fdtd-2d", "FD2D"),
          traits=("2d-grid", "multi-kernel", "memory-bound"))
def run(size, rng, block=BLOCK):
    nx, ny, steps = SIZES[size]
    ex0, ey0, hz0 = (rng.standard_normal((nx, ny)).astype(np.float32) for _ in range(3))
    source = np.sin(np.arange(steps) * 0.3).astype(np.float32)
    mod = cp.RawModule(code=kernel_source("fdtd2d.cu"))
    k_ey, k_ex, k_hz = (mod.get_function(f"fdtd_{f}") for f in ("ey", "ex", "hz"))
    ex, ey, hz = cp.asarray(ex0), cp.asarray(ey0), cp.asarray(hz0)
    d_src = cp.asarray(source)
    grid = (-(-ny // block[0]), -(-nx // block[1]))
    n_x, n_y = np.int32(nx), np.int32(ny)
    for t in range(steps):
        k_ey(grid, block, (ey, hz, d_src, np.int32(t), n_x, n_y))
        k_ex(grid, block, (ex, hz, n_x, n_y))
        k_hz(grid, block, (hz, ex, ey, n_x, n_y))
    rex, rey, rhz = reference(ex0, ey0, hz0, source, steps)
    # Each step adds a few float32 roundings to O(1) values; differences can cancel to near
    # zero, so an absolute term covers those points.
    tol = dict(rtol=1e-5, atol=1e-5 * steps)
    return [compare("ex", ex.get(), rex, **tol), compare("ey", ey.get(), rey, **tol),
            compare("hz", hz.get(), rhz, **tol)]


register_variant("fdtd2d", "fdtd2d_16x16", "fdtd2d with the paper's 16x16 CTAs (FDTD in Lee et al.'s Table 2): "
                 "horizontally adjacent CTAs share 128 B L1 lines", stands_for=("FDTD",), block=(16, 16))
