"""scan: exclusive prefix sum of a uint32 array in three launches (SDK scan / Parboil-style).

Stands in for: SDK scan / Parboil-style prefix sum.
Trait that matters: three launches, the middle one a single CTA."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

N = {"tiny": 5_000, "small": 262_147, "study": 524_291, "paper": 1 << 24}
BLOCK = 256
SEG = 2 * BLOCK


@register("scan", "exclusive prefix sum: per-CTA work-efficient scan, scan of segment totals, add-back",
          "scan.cu", stands_for=("SCAN", "scan", "SDK scan", "prefix sum"),
          traits=("shared-memory", "barrier-heavy", "multi-kernel"))
def run(size, rng):
    n = N[size]
    x = rng.integers(0, 16, n, dtype=np.uint32)
    mod = cp.RawModule(code=kernel_source("scan.cu"))
    kb, ks, ka = (mod.get_function(f) for f in ("scan_blocks", "scan_sums", "scan_add"))
    segs = (n + SEG - 1) // SEG
    dx = cp.asarray(x)
    dout = cp.zeros(n, np.uint32)
    dsums = cp.zeros(segs, np.uint32)
    kb((segs,), (BLOCK,), (dx, dout, dsums, np.int32(n)))
    ks((1,), (BLOCK,), (dsums, np.int32(segs)))
    ka((segs,), (BLOCK,), (dout, dsums, np.int32(n)))
    inclusive = np.cumsum(x, dtype=np.uint32)           # wraps modulo 2**32 like the device
    ref = np.concatenate(([0], inclusive[:-1])).astype(np.uint32)
    seg_tot = np.add.reduceat(x.astype(np.uint64), np.arange(0, n, SEG)).astype(np.uint32)
    seg_ref = (np.cumsum(seg_tot, dtype=np.uint32) - seg_tot).astype(np.uint32)
    return [compare("segment offsets", dsums.get(), seg_ref), compare("scan", dout.get(), ref)]
