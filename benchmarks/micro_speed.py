"""Speed of the timing model on GPGPU-Sim's four calibration microbenchmarks
(../shared/reference/kernels/micro), against GPGPU-Sim's recorded wall time on the
same machine class. Each program runs whole (all its launches) on a fresh timing
device with the trace cache off, one at a time, `--repeat` times; the table shows
the median. Both simulators execute the same PTX and the same thread instructions,
so the speed ratio is GPGPU-Sim's wall time over ours:

    .venv/bin/python benchmarks/micro_speed.py [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from tlpsim.validate.jobs import execute
from tlpsim.validate.reference import load_reference


def run_once(name: str, ref_dir: str) -> dict:
    job = {"kind": "micro", "name": name, "preset": "gtx480", "overrides": {}, "ref_dir": ref_dir,
           "time_limit": 0, "trace_cache": False, "only": None}
    out = execute(job)
    if out["error"] is not None:
        raise SystemExit(f"{name}: {out['error']}")
    p = out["program"]
    return {"timing_s": p["timing_wall_s"], "wall_s": out["wall_s"], "thread_insn": p["thread_insn_executed"],
            "cycles": p["cycles"], "verified": out["verified"], "peak_rss_mb": out["peak_rss_mb"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ref-dir", default=None)
    args = ap.parse_args(argv)
    ref = load_reference(args.ref_dir)
    rows = []
    for name in sorted(ref.micro):
        runs = [run_once(name, str(ref.dir)) for _ in range(args.repeat)]
        gs_wall = float(ref.micro[name]["run"]["wall_s"])
        t = statistics.median(r["timing_s"] for r in runs)
        w = statistics.median(r["wall_s"] for r in runs)
        rows.append({"program": name, "launches": len(ref.micro[name]["launches"]), "thread_insn": runs[0]["thread_insn"],
                     "verified": all(r["verified"] for r in runs), "timing_s": t, "wall_s": w, "gs_wall_s": gs_wall,
                     "timing_speedup": gs_wall / t if t else None, "e2e_speedup": gs_wall / w if w else None,
                     "timing_runs": [round(r["timing_s"], 3) for r in runs],
                     "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("| program | launches | thread insts | timing alone (median) | × GPGPU-Sim | whole program | × GPGPU-Sim |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['program']} | {r['launches']} | {r['thread_insn'] / 1e6:.2f} M | {r['timing_s']:.2f} s | "
              f"**{r['timing_speedup']:.1f}×** | {r['wall_s']:.2f} s | {r['e2e_speedup']:.1f}× |")
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
