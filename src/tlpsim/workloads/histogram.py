"""histogram: 256-bin byte histogram with shared-memory privatisation and global atomics
(SDK histogram256 / Parboil histo). Two variants run on the same input: one 1 KiB
histogram per CTA, and 16 half-warp sub-histograms (16 KiB per CTA, shared-memory-limited
occupancy on Fermi).

Stands in for: Parboil histo / SDK histogram256.
Trait that matters: shared and global atomics; histo_subhist shared-memory-limited."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

# (bytes, CTAs); each thread walks about nbytes / 4 / (CTAs * 256) words.
SIZE = {"tiny": (40_000, 4), "small": (2_000_000, 60), "study": (13_440_000, 840), "paper": (1 << 26, 480)}
BLOCK = 256


def _image_bytes(rng, nbytes):
    """Skewed byte data: mostly a narrow normal bump (hot bins, atomic contention), some
    uniform noise, and runs of one value (like flat image regions)."""
    v = np.clip(rng.normal(100, 12, nbytes), 0, 255).astype(np.uint8)
    noise = rng.random(nbytes) < 0.25
    v[noise] = rng.integers(0, 256, int(noise.sum()), dtype=np.uint8)
    run = 256
    flat = np.repeat(rng.random((nbytes + run - 1) // run) < 0.1, run)[:nbytes]
    v[flat] = 200
    return v


@register("histogram", "256-bin histogram: per-CTA and per-half-warp shared sub-histograms, global atomic merge",
          "histogram.cu", stands_for=("HISTO", "histo", "histogram256", "SDK histogram"),
          traits=("atomics", "shared-memory", "multi-kernel", "irregular"))
def run(size, rng):
    nbytes, grid = SIZE[size]
    assert nbytes % 4 == 0
    data = _image_bytes(rng, nbytes)
    words = data.view(np.uint32)  # little-endian: byte j of a word is bits 8j..8j+7
    mod = cp.RawModule(code=kernel_source("histogram.cu"))
    kc, ks = mod.get_function("histo_cta"), mod.get_function("histo_subhist")
    dw = cp.asarray(words)
    h1 = cp.zeros(256, np.uint32)
    h2 = cp.zeros(256, np.uint32)
    kc((grid,), (BLOCK,), (dw, np.int32(words.size), h1))
    ks((grid,), (BLOCK,), (dw, np.int32(words.size), h2))
    ref = np.bincount(data, minlength=256).astype(np.uint32)
    return [compare("histo_cta", h1.get(), ref), compare("histo_subhist", h2.get(), ref)]
