"""transpose: 32x32 tiles staged through a padded shared-memory tile (SDK transpose, coalesced).

Stands in for: TRAN (Lee et al. HPCA 2014, Table 2: 16x16 CTAs, Type II: the variant
transpose_16x16).
Trait that matters: shared-memory tile, register-limited 32x8 CTAs (a `block` parameter gives other
shapes)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register, register_variant

SHAPE = {"tiny": (48, 80), "small": (768, 1024),
         "study": (1024, 1024), "paper": (4096, 4096)}  # (rows, cols) of the input
TILE = 32
BLOCK = (32, 8)


@register("transpose", "out = in^T through a 32x33 shared-memory tile, 4 elements per thread",
          "transpose.cu", stands_for=("TRA", "transpose", "SDK transpose (coalesced)"),
          traits=("2d-grid", "shared-memory", "memory-bound"))
def run(size, rng, block=BLOCK):
    rows, cols = SHAPE[size]
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    tile, rows_per_pass = block
    if tile % rows_per_pass:
        raise ValueError(f"transpose: CTA {block[0]}x{block[1]}: the tile height {rows_per_pass} must divide {tile}")
    # the default shape compiles the source as it is (the built-in results stay bit-identical)
    options = () if block == BLOCK else (f"-DTILE={tile}", f"-DROWS={rows_per_pass}")
    k = cp.RawKernel(kernel_source("transpose.cu"), "transpose_tiled", options=options)
    dx = cp.asarray(x)
    dy = cp.zeros((cols, rows), np.float32)
    k(((cols + tile - 1) // tile, (rows + tile - 1) // tile), block, (dx, dy, np.int32(rows), np.int32(cols)))
    return [compare("out", dy.get(), x.T)]  # pure data movement: exact


register_variant("transpose", "transpose_16x16", "transpose with the paper's 16x16 CTAs (TRAN in Lee et al.'s "
                 "Table 2): a 16x16 tile, one element per thread, so adjacent CTAs read and write halves of the "
                 "same 128 B lines", stands_for=("TRAN",), block=(16, 16))
