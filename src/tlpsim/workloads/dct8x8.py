"""dct8x8: 8x8 block DCT-II of an image and its inverse (CUDA SDK dct8x8).

Each 32x4-thread CTA transforms a 64x32 tile (8.1 KiB of shared memory:
shared-memory-limited on Fermi): coalesced load, row pass, barrier, column
pass, coalesced store; two 8-point vectors (16 values) per thread in registers,
transformed with immediate-coefficient butterflies. Forward then inverse launch;
both the coefficients and the reconstruction are checked.

Stands in for: SDK dct8x8.
Trait that matters: 32x4 CTAs, shared-memory-limited (8.1 KiB per CTA)."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

TILE_W, TILE_H = 64, 32
# (width, height), multiples of 64 and 32; paper ~ the SDK's 512x512 test image and beyond
SIZES = {"tiny": (64, 64), "small": (1024, 512), "study": (2048, 1056), "paper": (2048, 2048)}


def dct_matrix():
    u, k = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    c = 0.5 * np.cos((2 * k + 1) * u * np.pi / 16)
    c[0] = np.sqrt(1 / 8)
    return c


@register("dct8x8", "8x8 block DCT and inverse DCT of an image, 64x32 tiles in shared memory", "dct8x8.cu",
          stands_for=("DCT", "dct8x8", "DCT8x8"),
          traits=("2d-grid", "shared-memory", "register-heavy", "multi-kernel"))
def run(size, rng):
    w, h = SIZES[size]
    # a smooth gradient plus texture, in 8-bit video range like the SDK test image
    yy, xx = np.mgrid[0:h, 0:w]
    img = 128 + 60 * np.sin(xx / 37.0) * np.cos(yy / 23.0) + rng.normal(0, 25, (h, w))
    img = np.clip(img, 16, 235).astype(np.float32)  # video range: no zero pixels

    mod = cp.RawModule(code=kernel_source("dct8x8.cu"))
    d_img = cp.asarray(img)
    d_coef, d_back = cp.zeros((h, w), np.float32), cp.zeros((h, w), np.float32)
    grid, block = (w // TILE_W, h // TILE_H), (32, 4)
    mod.get_function("dct8x8_forward")(grid, block, (d_img, d_coef, np.int32(w)))
    mod.get_function("dct8x8_inverse")(grid, block, (d_coef, d_back, np.int32(w)))

    c = dct_matrix()
    blocks = img.astype(np.float64).reshape(h // 8, 8, w // 8, 8)
    ref = np.einsum("uk,akbl,vl->aubv", c, blocks, c).reshape(h, w)
    # Coefficients are bounded by 8 * 255 = 2040; the two 1-D passes make ~10
    # float32 roundings on values of that size: |error| < 10 * 2^-24 * 2040 ~ 1.2e-3.
    # The reconstruction goes through two more passes of the same size.
    return [compare("coefficients", d_coef.get(), ref, atol=1.2e-3),
            compare("reconstruction", d_back.get(), img, atol=2.4e-3)]
