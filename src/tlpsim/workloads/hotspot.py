"""hotspot: 2D thermal stencil with pyramid time blocking in shared memory (Rodinia HotSpot).

Stands in for: HS (EXPARS Table 3: calculate_temp; GPUDuet Table 2); hotspot (RegLess: all of
Rodinia); 3DFD (Lee et al. HPCA 2014, Table 2: 16x16 CTAs, Type IV: the variant hotspot_16x16).
Trait that matters: shared-memory-limited (15 KiB: 3 CTAs/SM on Fermi), barrier-heavy; 32x8 CTAs (a
`block` parameter gives other shapes)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register, register_variant

TILE_X, TILE_Y, BLOCK_Y = 32, 40, 8   # matches hotspot.cu
# grid rows, cols, time steps per launch (pyramid height), launches
SIZES = {"tiny": (48, 64, 2, 2), "small": (256, 256, 2, 3), "study": (864, 672, 2, 2), "paper": (1024, 1024, 2, 30)}
# Update coefficients (step/(C*Rx), step/(C*Ry), step/(C*Rz), step/C) and ambient temperature;
# cx + cy < 0.5 keeps the explicit scheme stable.
CX, CY, CZ, CP, AMBIENT = 0.12, 0.10, 0.002, 0.6, 80.0


def reference(temp, power, total_steps):
    t = temp.astype(np.float64)
    p = power.astype(np.float64)
    for _ in range(total_steps):
        e = np.pad(t, 1, mode="edge")   # a neighbour off the grid reads as the cell itself
        t = (t + CP * p + CY * (e[:-2, 1:-1] + e[2:, 1:-1] - 2 * t) + CX * (e[1:-1, 2:] + e[1:-1, :-2] - 2 * t)
             + CZ * (AMBIENT - t))
    return t


@register("hotspot", "thermal 2D stencil, several time steps per launch in 15 KiB of shared memory",
          "hotspot.cu", stands_for=("HS", "hotspot", "HOTSP"),
          traits=("2d-grid", "shared-memory", "barrier-heavy"))
def run(size, rng, block=(TILE_X, BLOCK_Y)):
    rows, cols, steps, launches = SIZES[size]
    temp = (320.0 + 20.0 * rng.random((rows, cols))).astype(np.float32)
    power = (rng.random((rows, cols)) ** 4).astype(np.float32)   # a few hot blocks, mostly cool
    # A CTA of block[0] x block[1] threads keeps the default's 5 rows per thread: its tile is
    # block[0] x 5*block[1] cells. The default shape compiles the source as it is.
    tile_x, block_y = block
    tile_y = TILE_Y // BLOCK_Y * block_y
    options = () if block == (TILE_X, BLOCK_Y) else (f"-DTILE_X={tile_x}", f"-DTILE_Y={tile_y}", f"-DBLOCK_Y={block_y}")
    k = cp.RawKernel(kernel_source("hotspot.cu"), "hotspot_pyramid", options=options)
    bufs = [cp.asarray(temp), cp.zeros((rows, cols), np.float32)]
    d_power = cp.asarray(power)
    grid = (-(-cols // (tile_x - 2 * steps)), -(-rows // (tile_y - 2 * steps)))
    for i in range(launches):
        k(grid, block, (d_power, bufs[i % 2], bufs[(i + 1) % 2], np.int32(rows), np.int32(cols),
                                    np.int32(steps), np.float32(CX), np.float32(CY), np.float32(CZ),
                                    np.float32(CP), np.float32(AMBIENT)))
    got = bufs[launches % 2].get()
    # float32 rounding of values near 330 is ~2e-5 per step; 1e-5 relative covers ~100 steps.
    return [compare("temperature", got, reference(temp, power, steps * launches), rtol=1e-5)]


register_variant("hotspot", "hotspot_16x16", "hotspot with the paper's 16x16 CTAs (3DFD in Lee et al.'s Table 2): "
                 "16x80 tiles in the same 15 KiB of shared memory, so horizontally adjacent CTAs share 128 B lines",
                 stands_for=("3DFD",), block=(16, 16))
