"""Every built-in workload under both toolchains: per kernel, registers, the CTAs per
SM and the resource that limits them, and the warp instructions executed, on
`gtx480` (cuda11 = NVRTC/ptxas 11.8 for sm_35 with -maxrregcount 63, the preset's
default; cuda13 = nvcc/ptxas 13.5 for sm_80 with the same cap) and registers and
limiter on `maxwell_gpuduet` (cuda11 for sm_52; cuda13 for sm_80; no cap).

    .venv/bin/python benchmarks/toolchains.py [--size tiny] [--workloads sgemm,hotspot] [--json]

Prints the Markdown table of docs/toolchains.md. Each workload runs functionally
(no timing simulation) once per preset and toolchain; launch shapes and dynamic
shared memory come from those runs and occupancy from tlpsim.timing.occupancy, as
`tlpsim workloads` computes it. Warp instructions are summed over a kernel's
launches; a kernel's shape is its first launch's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import tlpsim
from tlpsim.config import load_config
from tlpsim.timing.builder import sm_limits
from tlpsim.timing.occupancy import occupancy
from tlpsim.workloads.registry import load_workloads

PRESETS = ("gtx480", "maxwell_gpuduet")
TOOLCHAINS = ("cuda13", "cuda11")


def kernels(workload, size: str, preset: str, toolchain: str) -> dict[str, dict]:
    """{kernel: registers, CTAs/SM, limiter, warp instructions} of one compilation."""
    cfg = load_config(preset, [f"gpu.toolchain={toolchain}"])
    limits = sm_limits(cfg)
    with tlpsim.Device(trace=False, **cfg.gpu.compile_options):
        result = workload.execute(size)
    if not result.verified:
        raise SystemExit(f"{workload.name} ({size}, {preset}, {toolchain}) did not verify: "
                         f"{[c for c in result.checks if not c.ok]}")
    out: dict[str, dict] = {}
    for rec in result.launches:
        row = out.get(rec.kernel)
        if row is None:
            regs = rec.resources.registers if rec.resources else 0
            smem = (rec.resources.shared_bytes if rec.resources else 0) + rec.shared_mem
            occ = occupancy(limits, regs, smem, rec.block[0] * rec.block[1] * rec.block[2])
            row = out[rec.kernel] = {"registers": regs, "spills": bool(rec.resources and rec.resources.has_spills),
                                     "ctas": occ.ctas, "limiter": occ.limiter, "warp_insts": 0}
        row["warp_insts"] += rec.warp_instructions
    return out


def collect(names: list[str], size: str) -> list[dict]:
    table = load_workloads()
    rows = []
    for name in names:
        t0 = time.perf_counter()
        got = {(p, tc): kernels(table[name], size, p, tc) for p in PRESETS for tc in TOOLCHAINS}
        for kernel in got[("gtx480", "cuda13")]:
            rows.append({"workload": name, "kernel": kernel,
                         **{f"{p}.{tc}": got[(p, tc)][kernel] for p in PRESETS for tc in TOOLCHAINS}})
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return rows


def _occ(d: dict) -> str:
    return f"{d['ctas']} ({d['limiter']})"


def _regs(d: dict) -> str:
    return f"{d['registers']}{'*' if d['spills'] else ''}"


def markdown(rows: list[dict], size: str) -> str:
    lines = [
        "| workload | kernel | gtx480 regs 13 → 11 | CTAs/SM (limiter) cuda13 | cuda11 | warp insts cuda13 | "
        "cuda11 | Δ insts | gpuduet regs 13 → 11 | CTAs/SM (limiter) cuda13 | cuda11 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, b = r["gtx480.cuda13"], r["gtx480.cuda11"]
        c, d = r["maxwell_gpuduet.cuda13"], r["maxwell_gpuduet.cuda11"]
        delta = (b["warp_insts"] - a["warp_insts"]) / a["warp_insts"] * 100 if a["warp_insts"] else 0.0
        mark = lambda x, y: f"**{y}**" if x != y else y  # noqa: E731 - a changed CTA count stands out
        lines.append(f"| {r['workload']} | {r['kernel']} | {_regs(a)} → {_regs(b)} | {_occ(a)} | "
                     f"{mark(_occ(a), _occ(b))} | {a['warp_insts']} | {b['warp_insts']} | {delta:+.1f}% | "
                     f"{_regs(c)} → {_regs(d)} | {_occ(c)} | {mark(_occ(c), _occ(d))} |")
    return "\n".join(lines) + "\n\n" + summary(rows, size) + "\n"


def summary(rows: list[dict], size: str) -> str:
    n = len(rows)
    fewer = sum(r["gtx480.cuda11"]["registers"] < r["gtx480.cuda13"]["registers"] for r in rows)
    more = sum(r["gtx480.cuda11"]["registers"] > r["gtx480.cuda13"]["registers"] for r in rows)
    occ480 = sum(r["gtx480.cuda11"]["ctas"] != r["gtx480.cuda13"]["ctas"] for r in rows)
    occmax = sum(r["maxwell_gpuduet.cuda11"]["ctas"] != r["maxwell_gpuduet.cuda13"]["ctas"] for r in rows)
    lim480 = sum(r["gtx480.cuda11"]["limiter"] != r["gtx480.cuda13"]["limiter"] for r in rows)
    w13 = sum(r["gtx480.cuda13"]["warp_insts"] for r in rows)
    w11 = sum(r["gtx480.cuda11"]["warp_insts"] for r in rows)
    fewer_m = sum(r["maxwell_gpuduet.cuda11"]["registers"] < r["maxwell_gpuduet.cuda13"]["registers"] for r in rows)
    more_m = sum(r["maxwell_gpuduet.cuda11"]["registers"] > r["maxwell_gpuduet.cuda13"]["registers"] for r in rows)
    return (f"{n} kernels of {len({r['workload'] for r in rows})} workloads at `{size}`. On `gtx480` cuda11 needs "
            f"fewer registers for {fewer} kernels and more for {more}; the CTAs per SM change for {occ480} "
            f"(the limiting resource for {lim480}); warp instructions {w13} → {w11} "
            f"({(w11 - w13) / w13 * 100:+.1f}% in all). On `maxwell_gpuduet`: fewer registers for {fewer_m}, more "
            f"for {more_m}, CTAs per SM change for {occmax}. `*`: the kernel spills to local memory.")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="tiny", help="input size of every workload (default tiny)")
    ap.add_argument("--workloads", default="", help="comma-separated workloads (default: all)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of Markdown")
    args = ap.parse_args(argv)
    names = [n for n in args.workloads.split(",") if n] or sorted(load_workloads())
    rows = collect(names, args.size)
    print(json.dumps(rows, indent=1) if args.json else markdown(rows, args.size))


if __name__ == "__main__":
    main()
