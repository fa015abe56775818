"""Waves, full-occupancy share, run time and peak RSS of the built-in workloads at
`small` and `study` on `gtx480` and `maxwell_gpuduet` (issue 26): each run is a
separate `tlpsim run` process with a cold trace cache (its peak RSS and CPU seconds
from the kernel's rusage),
the waves are the catalogue's static numbers. Resumable: finished runs are kept in a
JSON state file and skipped; the Markdown table marks which rows were measured.

    .venv/bin/python benchmarks/workloads_study.py [NAMES...] [--presets gtx480 maxwell_gpuduet]
        [--sizes small study] [--state runs/workloads_study.json] [--markdown docs/workloads_study.md]
        [--table-only] [--timeout 900]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tlpsim.trace.cache import default_cache_dir
from tlpsim.workloads.catalog import catalog
from tlpsim.workloads.registry import load_workloads
from tlpsim.workloads.study import EXEMPT

TLPSIM = str(Path(sys.executable).with_name("tlpsim"))
PTX_CACHE = default_cache_dir().parent / "ptx"


@functools.cache
def fewest_waves(preset: str, name: str, size: str) -> float:
    """The fewest waves of the workload's kernels the waves rule binds (all when every one is exempt)."""
    rows = catalog(preset, [name], size)
    bound = [r.waves for r in rows if (name, r.kernel) not in EXEMPT] or [r.waves for r in rows]
    return min(bound)


def run_one(name: str, size: str, preset: str, timeout: float) -> dict:
    """One `tlpsim run` in a child process: wall and CPU seconds, peak RSS, the stats."""
    with tempfile.TemporaryDirectory(prefix="tlpsim-study-") as tmp:
        cmd = [TLPSIM, "run", name, "--size", size, "--config", preset, "--json", "--run-dir", f"{tmp}/run"]
        t0 = time.perf_counter()
        # a cold trace cache (a run of the same input would otherwise replay its traces),
        # the compiled-PTX cache shared
        (Path(tmp) / "cache").mkdir()
        (Path(tmp) / "cache" / "ptx").symlink_to(PTX_CACHE, target_is_directory=True)
        env = dict(os.environ, TLPSIM_CACHE_DIR=f"{tmp}/cache")
        with open(f"{tmp}/out", "w") as out, open(f"{tmp}/err", "w") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
            timer = threading.Timer(timeout, proc.kill)
            timer.start()
            _, status, usage = os.wait4(proc.pid, 0)  # its own rusage: CPU seconds and peak RSS
            timer.cancel()
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        text, errors = Path(f"{tmp}/out").read_text(), Path(f"{tmp}/err").read_text()
    if code < 0:
        return {"error": f"killed after {wall:.0f} s (timeout {timeout:.0f} s)"}
    if code not in (0, 1):
        return {"error": (errors.strip().splitlines() or ["failed"])[-1][:200], "wall_s": round(wall, 1)}
    stats = json.loads(text)["stats"]
    bound = [s for s in stats if (name, s["kernel"]) not in EXEMPT] or stats
    cycles = sum(s["cycles"] for s in bound)
    share = sum(s["full_occupancy_share_min"] * s["cycles"] for s in bound) / cycles if cycles else 0.0
    return {"wall_s": round(wall, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "rss_mb": round(usage.ru_maxrss / 1024), "verified": code == 0,
            "warp_insts": sum(s["warp_insts"] for s in stats), "cycles": sum(s["cycles"] for s in stats),
            "full_occupancy_min": round(share, 3), "load": round(os.getloadavg()[0], 1)}


def table(state: dict, names: list[str], presets: list[str], sizes: list[str]) -> str:
    heads = ["workload", "preset"]
    for what in ("waves", "full occ.", "wall s (CPU s)", "peak RSS MB"):
        heads += [f"{what} ({s})" for s in sizes]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for name in names:
        for p in presets:
            runs = [state.get(f"{name}/{p}/{s}", {}) for s in sizes]
            cells = [name, f"`{p}`"]
            cells += [f"{fewest_waves(p, name, s):.1f}" for s in sizes]
            cells += [f"{100 * r['full_occupancy_min']:.0f}%" if "cpu_s" in r else "-" for r in runs]
            cells += [f"{r['wall_s']:.0f} ({r['cpu_s']:.0f})" if "cpu_s" in r else r.get("error", "-") for r in runs]
            cells += [str(r["rss_mb"]) if "rss_mb" in r else "-" for r in runs]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--presets", nargs="+", default=["gtx480", "maxwell_gpuduet"])
    ap.add_argument("--sizes", nargs="+", default=["small", "study"])
    ap.add_argument("--state", default="runs/workloads_study.json")
    ap.add_argument("--also", nargs="*", default=[], metavar="STATE",
                    help="more state files (e.g. of runs made in parallel) whose runs the table includes")
    ap.add_argument("--markdown", default=None, help="write the table to this file (default: print it)")
    ap.add_argument("--table-only", action="store_true",
                    help="run nothing; tabulate what the state holds (static waves for every row)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    args = ap.parse_args()
    names = args.names or sorted(load_workloads())
    state_path = Path(args.state)
    state = json.loads(state_path.read_text()) if state_path.is_file() else {}
    if not args.table_only:
        for name in names:
            for p in args.presets:
                for s in args.sizes:
                    key = f"{name}/{p}/{s}"
                    if "cpu_s" in state.get(key, {}):
                        continue
                    state[key] = run_one(name, s, p, args.timeout)
                    print(key, state[key], flush=True)
                    state_path.parent.mkdir(parents=True, exist_ok=True)
                    state_path.write_text(json.dumps(state, indent=1, sort_keys=True))
    for name in names:  # the static waves first (the slow part), then the runs finished meanwhile
        for p in args.presets:
            for s in args.sizes:
                fewest_waves(p, name, s)
    if state_path.is_file():
        state = json.loads(state_path.read_text())
    for extra in args.also:
        state.update({k: v for k, v in json.loads(Path(extra).read_text()).items() if "cpu_s" in v})
    text = table(state, names, args.presets, args.sizes)
    if args.markdown:
        Path(args.markdown).write_text(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
