"""nn: nearest neighbour of a query among many (latitude, longitude) records (Rodinia NN).

A streaming distance kernel (4 records per thread, grid-stride, coalesced float2
loads, one sqrt each) with a per-CTA argmin in shared memory, then a one-CTA
kernel that reduces the per-CTA candidates. Memory-bound: 12 bytes moved per
record for a handful of instructions.

Stands in for: nn (RegLess: all of Rodinia).
Trait that matters: streaming distance kernel, register-limited, then a one-CTA reduction."""

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import compare, kernel_source, register

BLOCK = 256         # NN_BLOCK in nn.cu
PER_THREAD = 4
# records; paper ~ Rodinia NN with a large generated record set
SIZES = {"tiny": 8192, "small": 524288, "study": 786432, "paper": 4194304}


@register("nn", "nearest neighbour: distances from a query to all records, per-CTA argmin, final argmin",
          "nn.cu", stands_for=("NN", "nn"), traits=("memory-bound", "shared-memory", "multi-kernel"))
def run(size, rng):
    n = SIZES[size]
    # Rodinia's generator: latitude in [0, 90), longitude in [0, 180)
    recs = np.stack([rng.uniform(0, 90, n), rng.uniform(0, 180, n)], axis=1).astype(np.float32)
    qlat, qlng = np.float32(30.0), np.float32(90.0)

    mod = cp.RawModule(code=kernel_source("nn.cu"))
    blocks = max(1, (n + BLOCK * PER_THREAD - 1) // (BLOCK * PER_THREAD))
    d_recs = cp.asarray(recs)
    dist = cp.zeros(n, np.float32)
    bdist, bidx = cp.zeros(blocks, np.float32), cp.zeros(blocks, np.int32)
    out_d, out_i = cp.zeros(1, np.float32), cp.zeros(1, np.int32)
    mod.get_function("nn_distances")((blocks,), (BLOCK,), (d_recs, dist, bdist, bidx, np.int32(n), qlat, qlng))
    mod.get_function("nn_final")((1,), (BLOCK,), (bdist, bidx, out_d, out_i, np.int32(blocks)))

    ref = np.hypot(recs[:, 0].astype(np.float64) - qlat, recs[:, 1].astype(np.float64) - qlng)
    got = dist.get()
    # float32 differences are exact-ish (inputs < 2^8, 2^-16 spacing), the sum of
    # squares (maybe fused) and the rounded sqrt add <= ~4 ulp: 5e-7 relative.
    checks = [compare("distances", got, ref, rtol=5e-7, atol=1e-6)]
    # The device argmin is exact on its own distances: check it against them
    # (index exactly, ties -> smallest index), and that it is the true nearest
    # record up to the distance rounding.
    i_got, d_got = int(out_i.get()[0]), float(out_d.get()[0])
    i_exp = int(np.argmin(got))
    checks.append(compare("argmin index (of device distances)", np.array([i_got]), np.array([i_exp])))
    checks.append(compare("min distance", np.array([d_got]), np.array([ref.min()]), rtol=5e-7))
    # per-CTA candidates: CTA b owns records i with (i // BLOCK) % blocks == b
    cta = (np.arange(n) // BLOCK) % blocks
    order = np.lexsort((np.arange(n), got, cta))
    first = order[np.searchsorted(cta[order], np.arange(blocks))]
    checks.append(compare("per-CTA argmin index", bidx.get(), first.astype(np.int32)))
    checks.append(compare("per-CTA min distance", bdist.get(), got[first]))
    return checks
