"""laplace3d: Jacobi sweeps of the 3D Laplace equation, each thread marching one (x, y)
column in z, every neighbour read from global memory (GPGPU-Sim's laplace3d).

Stands in for: LPS (Lee et al. HPCA 2014, Table 2: 3D Laplace solver, 16x8 CTAs,
Type IV) and the large-footprint 3D stencils of the papers (3DFD there; SRAD-like
multi-array stencils).
Trait that matters: a large per-CTA cache footprint. A 16x8 CTA re-reads each plane
of its tile (with a one-point halo) in three consecutive z steps and across its rows,
a window of about 7.5 KiB; CTA slots limit occupancy (8 CTAs per Fermi SM), so from
about 3 CTAs per SM the windows no longer fit a 16 KiB L1 and the reuse goes to the L2. One launch per sweep, ping-ponging two volumes.

Verification is exact: the kernel adds the six neighbours left to right in float32 and
multiplies by 1/6, and the NumPy reference does the same."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BLOCK = (16, 8)   # the paper's LPS CTA
# nx, ny, nz, sweeps; paper: Lee et al.'s LPS, one launch of 2048 16x8 CTAs (512 x 512 columns)
SIZES = {"tiny": (40, 20, 6, 2), "small": (128, 128, 16, 2), "study": (528, 264, 8, 1),
         "paper": (512, 512, 64, 1)}


def reference(u, sweeps):
    """float32, in the kernel's order of operations (u indexed [z, y, x])."""
    u = u.copy()
    sixth = np.float32(1.0) / np.float32(6.0)
    for _ in range(sweeps):
        v = u.copy()
        c = slice(1, -1)
        s = (((((u[c, c, :-2] + u[c, c, 2:]) + u[c, :-2, c]) + u[c, 2:, c]) + u[:-2, c, c]) + u[2:, c, c])
        v[c, c, c] = s * sixth
        u = v
    return u


@register("laplace3d", "3D Laplace Jacobi sweeps, one thread per (x, y) column marching in z, all reads from "
          "global memory", "laplace3d.cu", stands_for=("LPS", "laplace3d", "3DFD"),
          traits=("2d-grid", "memory-bound", "cache-sensitive"))
def run(size, rng):
    nx, ny, nz, sweeps = SIZES[size]
    u0 = rng.random((nz, ny, nx), dtype=np.float32)
    k = cp.RawKernel(kernel_source("laplace3d.cu"), "laplace3d")
    bufs = [cp.asarray(u0), cp.zeros((nz, ny, nx), np.float32)]
    grid = (-(-nx // BLOCK[0]), -(-ny // BLOCK[1]))
    for s in range(sweeps):
        k(grid, BLOCK, (bufs[s % 2], bufs[(s + 1) % 2], np.int32(nx), np.int32(ny), np.int32(nz)))
    return [compare("u", bufs[sweeps % 2].get(), reference(u0, sweeps))]
