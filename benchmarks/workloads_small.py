"""Run every built-in workload at a size (default `small`) in functional mode and
report verification, warp/thread instructions and wall time per workload.

    .venv/bin/python benchmarks/workloads_small.py [--size small] [--markdown]
"""

from __future__ import annotations

import argparse
import time

import tlpsim
from tlpsim.workloads.registry import load_workloads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="small")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    table = load_workloads()
    rows = []
    for name in args.names or sorted(table):
        with tlpsim.Device():
            t0 = time.perf_counter()
            res = table[name].execute(args.size)
            wall = time.perf_counter() - t0
        warp = sum(r.warp_instructions for r in res.launches)
        thr = sum(r.thread_instructions for r in res.launches)
        sim = sum(r.wall_seconds for r in res.launches)
        rows.append((name, len(res.launches), warp, thr, wall, thr / sim / 1e6 if sim else 0.0, res.verified))
        if not args.markdown:
            print(f"{name:16s} launches {len(res.launches):4d} warp-insts {warp:10d} thread-insts {thr:11d} "
                  f"wall {wall:6.2f} s  {rows[-1][5]:6.1f} M thr-inst/s  {'verified' if res.verified else 'FAILED'}",
                  flush=True)
    if args.markdown:
        print("| workload | launches | warp insts | thread insts | wall s | M thread-inst/s | verified |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]:,} | {r[3]:,} | {r[4]:.2f} | {r[5]:.1f} | {'yes' if r[6] else 'NO'} |")
    tw = sum(r[2] for r in rows)
    print(f"total: {len(rows)} workloads, {tw:,} warp instructions, {sum(r[4] for r in rows):.1f} s")


if __name__ == "__main__":
    main()
