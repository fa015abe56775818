"""srad: speckle-reducing anisotropic diffusion, two kernels per iteration (Rodinia SRAD).

Stands in for: SRAD (Lee et al. HPCA 2014, Table 2: 16x16 CTAs, Type II); srad (RegLess: all of
Rodinia).
Trait that matters: 16x16 CTAs, thread- and register-limited, memory-bound."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BX = BY = 16  # matches srad.cu
# rows, cols, iterations
SIZES = {"tiny": (48, 64, 2), "small": (256, 256, 4), "study": (512, 512, 2), "paper": (2048, 2048, 100)}
LAMBDA = 0.5


def make_image(rows, cols, rng):
    """A smooth scene (a few bright blobs on a ramp) under multiplicative speckle, mapped
    into (0, 1] and exponentiated as SRAD does with its input image."""
    y, x = np.mgrid[0:rows, 0:cols].astype(np.float64)
    scene = 0.3 + 0.2 * x / cols
    for _ in range(6):
        cy, cx, r = rng.random() * rows, rng.random() * cols, (0.05 + 0.15 * rng.random()) * min(rows, cols)
        scene += 0.4 * np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * r * r))
    speckle = rng.gamma(4.0, 0.25, (rows, cols))
    img = np.clip(scene * speckle, 0.0, None)
    return np.exp(img / img.max()).astype(np.float32)


def roi(rows, cols):
    return slice(rows // 8, rows // 8 + max(rows // 4, 2)), slice(cols // 8, cols // 8 + max(cols // 4, 2))


def q0_squared(J, region):
    v = J[region].astype(np.float64)
    mean = v.mean()
    return v.var() / (mean * mean)


def reference(J, iterations, region):
    J = J.astype(np.float64)
    for _ in range(iterations):
        q0 = q0_squared(J, region)
        e = np.pad(J, 1, mode="edge")
        dn, ds = e[:-2, 1:-1] - J, e[2:, 1:-1] - J
        dw, de = e[1:-1, :-2] - J, e[1:-1, 2:] - J
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (J * J)
        lap = (dn + ds + dw + de) / J
        num = 0.5 * g2 - 0.0625 * lap * lap
        den = 1.0 + 0.25 * lap
        q = num / (den * den)
        c = np.clip(1.0 / (1.0 + (q - q0) / (q0 * (1.0 + q0))), 0.0, 1.0)
        cpad = np.pad(c, 1, mode="edge")
        div = c * dn + cpad[2:, 1:-1] * ds + c * dw + cpad[1:-1, 2:] * de
        J = J + 0.25 * LAMBDA * div
    return J


@register("srad", "speckle-reducing anisotropic diffusion, coefficient and update kernels per iteration",
          "srad.cu", stands_for=("SRAD", "srad", "SR"),
          traits=("2d-grid", "multi-kernel", "sfu-heavy", "memory-bound"))
def run(size, rng):
    rows, cols, iterations = SIZES[size]
    J0 = make_image(rows, cols, rng)
    region = roi(rows, cols)
    mod = cp.RawModule(code=kernel_source("srad.cu"))
    coeff, update = mod.get_function("srad_coeff"), mod.get_function("srad_update")
    d_J = cp.asarray(J0)
    dN, dS, dW, dE, C = (cp.zeros((rows, cols), np.float32) for _ in range(5))
    grid = (-(-cols // BX), -(-rows // BY))
    for _ in range(iterations):
        q0 = q0_squared(d_J.get(), region)   # region-of-interest statistics on the host
        coeff(grid, (BX, BY), (d_J, dN, dS, dW, dE, C, np.int32(rows), np.int32(cols), np.float32(q0)))
        update(grid, (BX, BY), (d_J, dN, dS, dW, dE, C, np.int32(rows), np.int32(cols), np.float32(LAMBDA)))
    # float32 with 2-ulp fast divisions, a few iterations of a contracting diffusion: 1e-4.
    return [compare("J", d_J.get(), reference(J0, iterations, region), rtol=1e-4, atol=1e-5)]
