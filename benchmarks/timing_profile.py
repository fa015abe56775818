"""One timing-mode kernel of a chosen size, for profiling the timing core under
callgrind (instruction counts do not depend on the host's load):

    valgrind --tool=callgrind --toggle-collect='CPyDef_engine___Engine___run*' \
        .venv/bin/python benchmarks/timing_profile.py vecadd 131072
    callgrind_annotate --inclusive=no callgrind.out.<pid> | head -60

Kernels: `vecadd N` (memory-bound streaming, N floats), `sgemm N` (compute-bound
shared-memory tiled GEMM, N x N output, K = 64), both on `gtx480`, and `mummer N Q` (the
LCS stand-in's kernel, an N-base reference and Q queries, on `tesla_m2050`: at N = 2**20,
Q = 139,264 it is `tlpsim run mummer --size study --config tesla_m2050`). Prints cycles,
the statistics' digest (to compare builds) and the timing wall time.
"""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np

import tlpsim as cp
from tlpsim.workloads.registry import kernel_source


def vecadd(n: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    k = cp.RawKernel(kernel_source("vecadd.cu"), "vecadd")
    da, db, dc = cp.asarray(a), cp.asarray(b), cp.zeros(n, np.float32)
    k(((n + 255) // 256,), (256,), (da, db, dc, np.int32(n)))
    assert np.array_equal(dc.get(), a + b)


def sgemm(n: int) -> None:
    m, kdim = n, 64  # n x n output in 64 x 64 CTA tiles, K = 64
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, kdim)).astype(np.float32)
    b = rng.uniform(-1, 1, (kdim, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    k = cp.RawKernel(kernel_source("sgemm.cu"), "sgemm_tiled")
    da, db, dc = cp.asarray(a), cp.asarray(b), cp.asarray(c)
    k((n // 64, m // 64), (16, 16), (da, db, dc, np.int32(m), np.int32(n), np.int32(kdim),
                                     np.float32(1.0), np.float32(0.0)))
    assert np.allclose(dc.get(), a @ b, rtol=1e-4, atol=1e-3)


def mummer(n: int, queries: int) -> None:
    from tlpsim.workloads import mummer as mum
    from tlpsim.workloads.registry import get_workload

    saved = mum.SIZES["tiny"]
    mum.SIZES["tiny"] = (n, queries)  # the workload's own inputs, at this size
    try:
        res = get_workload("mummer").execute("tiny")
    finally:
        mum.SIZES["tiny"] = saved
    assert res.verified, "mummer's output differs from the NumPy reference"


KERNELS = {"vecadd": vecadd, "sgemm": sgemm, "mummer": mummer}
CONFIGS = {"mummer": "tesla_m2050"}  # (the others: gtx480)


def main() -> None:
    name, n = sys.argv[1], int(sys.argv[2])
    with cp.Device(mode="timing", config=CONFIGS.get(name, "gtx480")) as dev:
        if name == "mummer":
            mummer(n, int(sys.argv[3]) if len(sys.argv) > 3 else 1024)
        else:
            KERNELS[name](n)
        recs = list(dev.launches)
    stats = [r.stats.to_dict() if hasattr(r.stats, "to_dict") else vars(r.stats) for r in recs]
    wall = sum(s.pop("wall_seconds", 0.0) for s in stats)  # the timing model's own
    digest = hashlib.sha256(json.dumps(stats, sort_keys=True, default=str).encode()).hexdigest()[:16]
    print(f"{name} {n}: cycles {[s['cycles'] for s in stats]} digest {digest} "
          f"timing core {cp._core.status().compiled and 'compiled' or 'pure'} wall {wall:.2f} s")


if __name__ == "__main__":
    main()
