"""fd3d: a radius-4 3D finite-difference stencil, each thread marching one (x, y)
column in z, all 25 points read from global memory (the CUDA SDK's FDTD3d shape).

Stands in for: 3DFD (Lee et al. HPCA 2014, Table 2: 3D finite difference, 16x16 CTAs,
Type IV) as a cache-footprint workload; the SDK kernel stages planes in shared
memory, this one leaves all reuse to the caches.
Trait that matters: a large per-CTA footprint. A 16x16 CTA re-reads a window of 9
planes of its 24x24-point tile (about 40 KiB) while it marches: beyond a 16 KiB L1
even alone, and with more than one CTA per SM on the GTX480's 15 SMs beyond its
768 KiB L2, so the reuse goes to DRAM as CTAs per SM rise.

Verified against a float64 NumPy stencil; the float32 sums (with fused multiply-adds)
are within 1e-5 of the sum of the terms' magnitudes."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

RADIUS = 4   # matches kernels/fd3d.cu
BLOCK = (16, 16)
COEFF = np.array([-2.5, 1.6, -0.2, 0.025, -0.0018], np.float32)   # 8th-order second derivative, scaled
# nx, ny, nz including the 4-point halo on every side; paper: Lee et al.'s 3DFD, 900 CTAs of 16x16
# (480 x 480 interior columns)
SIZES = {"tiny": (30, 26, 12), "small": (136, 136, 24), "study": (520, 280, 16), "paper": (488, 488, 72)}


def reference(u):
    """(out, sum of |terms|) in float64, u indexed [z, y, x]; the halo stays 0."""
    c = COEFF.astype(np.float64)
    u = u.astype(np.float64)
    r = RADIUS
    core = (slice(r, -r),) * 3
    out = np.zeros_like(u)
    mag = np.zeros_like(u)
    out[core] = c[0] * u[core]
    mag[core] = abs(c[0] * u[core])
    nz, ny, nx = u.shape
    for d in range(1, r + 1):
        for axis in range(3):
            for sgn in (-1, 1):
                sl = [slice(r, -r)] * 3
                n = u.shape[axis]
                sl[axis] = slice(r + sgn * d, n - r + sgn * d)
                term = c[d] * u[tuple(sl)]
                out[core] += term
                mag[core] += abs(term)
    return out, mag


@register("fd3d", "radius-4 3D finite-difference stencil marching in z, all 25 points from global memory",
          "fd3d.cu", stands_for=("3DFD", "FDTD3d"), traits=("2d-grid", "memory-bound", "cache-sensitive"))
def run(size, rng):
    nx, ny, nz = SIZES[size]
    u = rng.standard_normal((nz, ny, nx), dtype=np.float32)
    mod = cp.RawModule(code=kernel_source("fd3d.cu"))
    k = mod.get_function("fd3d")
    mod.get_global("c_coeff").set(COEFF.view(np.uint8))
    d_in, d_out = cp.asarray(u), cp.zeros((nz, ny, nx), np.float32)
    grid = (-(-(nx - 2 * RADIUS) // BLOCK[0]), -(-(ny - 2 * RADIUS) // BLOCK[1]))
    k(grid, BLOCK, (d_in, d_out, np.int32(nx), np.int32(ny), np.int32(nz)))
    want, mag = reference(u)
    # float32 rounding of 25 terms: each point within 1e-5 of its terms' summed magnitude
    # (the halo is 0 on both sides)
    scale = np.maximum(mag, 1e-30)
    return [compare("out / sum|terms|", d_out.get() / scale, want / scale, atol=1e-5)]
