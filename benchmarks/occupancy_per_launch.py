"""Full-occupancy share per launch of one workload (docs/workloads.md, the bfs note).

    .venv/bin/python benchmarks/occupancy_per_launch.py bfs study maxwell_gpuduet
    .venv/bin/python benchmarks/occupancy_per_launch.py bfs study maxwell_gpuduet --input "(344064, 256)"

Prints one JSON object: per launch (kernel, cycles, share of the cycles the least-occupied
SM held its maximum resident CTAs, warp instructions) and the cycle-weighted share per
kernel. `--input` replaces the size's entry in the workload module's SIZES (a Python
literal) to try a deeper input without editing the workload.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import time

import tlpsim
from tlpsim.workloads.registry import get_workload


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("size")
    ap.add_argument("preset")
    ap.add_argument("--input", help="a literal for SIZES[size] of the workload's module")
    a = ap.parse_args()
    if a.input:
        mod = importlib.import_module(f"tlpsim.workloads.{a.workload}")
        if not hasattr(mod, "SIZES") or a.size not in mod.SIZES:
            raise SystemExit(f"--input: tlpsim.workloads.{a.workload} has no SIZES[{a.size!r}]")
        mod.SIZES[a.size] = ast.literal_eval(a.input)
    t0 = time.process_time()
    with tlpsim.Device(mode="timing", config=a.preset):
        r = get_workload(a.workload).execute(a.size)
    rows = [(x.kernel, x.stats.cycles, round(x.stats.full_occupancy_share_min, 3), x.stats.warp_insts)
            for x in r.launches]
    per: dict[str, list] = {}
    for k, c, s, w in rows:
        acc = per.setdefault(k, [0, 0.0, 0])
        acc[0] += c
        acc[1] += s * c
        acc[2] += w
    print(json.dumps({"workload": a.workload, "size": a.size, "preset": a.preset, "input": a.input,
                      "verified": r.verified, "cpu_s": round(time.process_time() - t0, 1),
                      "kernels": {k: {"cycles": v[0], "full_occupancy_min": round(v[1] / v[0], 3),
                                      "warp_insts": v[2]} for k, v in per.items()},
                      "launches": rows}))


if __name__ == "__main__":
    main()
