"""lbm: lattice-Boltzmann D3Q19 fluid solver (Parboil LBM).

One fused pull-stream + BGK-collide kernel per time step (ping-pong buffers),
periodic box with solid walls at y = 0 and y = ny-1 plus spherical obstacles
(bounce-back: a branch), driven by a body force along x. The 19
distributions are held in registers (56 with -maxrregcount=63: register-
limited on Fermi); each cell streams 19 floats in and 19 out.

Stands in for: LBM (Lee et al. HPCA 2014, Table 2: 100-thread CTAs, Type IV; ours 32x4); LBM (EXPARS
Table 3; GPUDuet Table 2).
Trait that matters: register-limited (56 registers), streams 19 distributions per cell."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# D3Q19 lattice, in the order of LBM_DIRECTIONS in lbm.cu
C = np.array([(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
              (1, 1, 0), (-1, -1, 0), (1, -1, 0), (-1, 1, 0), (1, 0, 1), (-1, 0, -1), (1, 0, -1), (-1, 0, 1),
              (0, 1, 1), (0, -1, -1), (0, 1, -1), (0, -1, 1)])
W = np.array([1 / 3] + [1 / 18] * 6 + [1 / 36] * 12)
OPP = np.array([0] + [q + 1 if q % 2 else q - 1 for q in range(1, 19)])
BLOCK = (32, 4, 1)
OMEGA = 1.6
FORCE_X = 1e-5
# (nx, ny, nz, time steps); nx a multiple of 32, ny of 4.
# paper approaches Parboil LBM "short" (120x120x150, 2.2M cells)
SIZES = {"tiny": (32, 8, 8, 3), "small": (64, 32, 16, 4), "study": (128, 64, 20, 2), "paper": (96, 96, 96, 10)}


def _equilibrium(rho, u):
    cu = 3.0 * np.einsum("qd,d...->q...", C, u)
    usq = 1.5 * (u ** 2).sum(axis=0)
    return W.reshape(-1, 1, 1, 1) * rho * (1.0 + cu + 0.5 * cu * cu - usq)


def _reference(f, solid, steps):
    f = f.astype(np.float64)
    fluid = ~solid
    force = 3.0 * W * C[:, 0] * FORCE_X
    for _ in range(steps):
        # pull streaming: f_q(x) <- f_q(x - c_q); arrays are (z, y, x)
        fin = np.stack([np.roll(f[q], (C[q, 2], C[q, 1], C[q, 0]), axis=(0, 1, 2)) for q in range(19)])
        rho = fin.sum(axis=0)
        u = np.einsum("qd,q...->d...", C, fin) / rho
        out = fin + OMEGA * (_equilibrium(rho, u) - fin) + force.reshape(-1, 1, 1, 1)
        f = np.where(fluid, out, fin[OPP])
    return f


@register("lbm", "lattice-Boltzmann D3Q19 stream+collide with bounce-back obstacles, one launch per step",
          "lbm.cu", stands_for=("LBM", "lbm"),
          traits=("register-heavy", "memory-bound", "multi-kernel", "3d-grid"))
def run(size, rng):
    nx, ny, nz, steps = SIZES[size]
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    solid = (y == 0) | (y == ny - 1)
    for _ in range(max(1, nx * ny * nz // 4096)):  # a few spherical obstacles
        cx, cy, cz = rng.uniform(0, nx), rng.uniform(2, ny - 2), rng.uniform(0, nz)
        r = rng.uniform(1.0, max(1.5, ny / 6))
        solid |= (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2 < r * r
    rho0 = 1.0 + 0.01 * rng.standard_normal((nz, ny, nx))
    u0 = 0.02 * rng.standard_normal((3, nz, ny, nx))
    f0 = _equilibrium(rho0, u0).astype(np.float32)  # (19, nz, ny, nx) = the SoA layout

    k = cp.RawKernel(kernel_source("lbm.cu"), "lbm_step")
    bufs = [cp.asarray(f0), cp.zeros(f0.shape, np.float32)]
    d_solid = cp.asarray(solid.astype(np.uint8))
    grid = (nx // BLOCK[0], ny // BLOCK[1], nz)
    for t in range(steps):
        k(grid, BLOCK, (bufs[t % 2], bufs[(t + 1) % 2], d_solid, np.int32(nx), np.int32(ny), np.int32(nz),
                        np.float32(OMEGA), np.float32(FORCE_X)))
    got = bufs[steps % 2].get()
    ref = _reference(f0, solid, steps)
    # Distributions are O(1/36 .. 1/3); each float32 step (19-term sums, one
    # division, ~10 FMAs per population) adds a few 1e-8, so 2e-7 per step
    # absolute bounds the drift (BGK with omega < 2 does not amplify it).
    return [compare("f", got, ref, atol=2e-7 * steps)]
