"""How far apart the CTAs an SM starts together finish, in tlpsim and (optionally) in
GPGPU-Sim: a measure of how unevenly the warp scheduler advances co-resident CTAs,
which decides how much of a thrashing kernel's working set the L2 keeps
(docs/validation.md, "spmv_csr's sweep: what differs"):

    .venv/bin/python benchmarks/gpgpusim/cta_spread.py PROGRAM N [--set KEY=VALUE ...] [--gpgpusim LOG]

PROGRAM is a reference program (`../shared/reference/kernels`), N the CTAs per SM
(`gpu.max_ctas_per_sm`; GPGPU-Sim's `-gpgpu_shader_cta N`). LOG is a GPGPU-Sim log of
the same program and cap run with `-trace_enabled 1 -trace_components LIVENESS
-trace_sampling_core -1` appended (run.sh's extra options), which prints each CTA's
start ("cta: S, ... initialized") and finish ("Finished CTA #S") per core; S is the
core's CTA slot. Prints, for the CTAs each SM starts at the launch, the first and last
finish and the mean spread within an SM, plus DRAM read sectors for tlpsim.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys

import tlpsim as cp
from tlpsim.config.loader import load_config
from tlpsim.policies.monitor.base import Monitor
from tlpsim.policies.registry import register
from tlpsim.validate.programs import PROGRAMS
from tlpsim.validate.reference import find_reference_dir, load_reference

_LOG: list[tuple[str, int, int, int]] = []


@register("monitor", "cta_lifetimes")
class CtaLifetimes(Monitor):
    """Records (admitted/retired, SM, CTA index, cycle) for every CTA."""

    events = ("cta_admitted", "cta_retired")

    def on_cta_admitted(self, cta, now):
        _LOG.append(("A", cta.sm, cta.index, now))

    def on_cta_retired(self, cta, now):
        _LOG.append(("R", cta.sm, cta.index, now))


def first_wave_spread(events: list[tuple[str, int, int, int]], start_by: int) -> dict:
    """From (kind, sm, key, cycle) events, kind "A" (start) or "R" (finish) with a key
    unique among an SM's live CTAs: the CTAs started by cycle `start_by`, their first
    and last finish and the mean over SMs of (last - first finish) within the SM."""
    live: dict[tuple[int, int], int] = {}
    finish: dict[int, list[int]] = {}
    for kind, sm, key, t in sorted(events, key=lambda e: (e[3], e[0] == "A")):
        if kind == "A":
            live[(sm, key)] = t
        elif (sm, key) in live and live.pop((sm, key)) <= start_by:
            finish.setdefault(sm, []).append(t)
    if not finish:
        raise SystemExit("no CTA started by cycle %d finished" % start_by)
    ends = [t for ts in finish.values() for t in ts]
    return {"ctas": len(ends), "first_finish": min(ends), "last_finish": max(ends),
            "mean_spread": statistics.fmean(max(ts) - min(ts) for ts in finish.values())}


def gpgpusim_events(path: str) -> list[tuple[str, int, int, int]]:
    start = re.compile(r"Cycle (\d+): LIVENESS - Core (\d+) - GPGPU-Sim uArch: cta:\s*(\d+),")
    end = re.compile(r"Cycle (\d+): LIVENESS - Core (\d+) - GPGPU-Sim uArch: Finished CTA #(\d+)")
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            for kind, rx in (("A", start), ("R", end)):
                m = rx.search(line)
                if m:
                    out.append((kind, int(m[2]), int(m[3]), int(m[1])))
    if not out:
        raise SystemExit(f"{path}: no LIVENESS CTA lines (run GPGPU-Sim with -trace_enabled 1 "
                         f"-trace_components LIVENESS -trace_sampling_core -1)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("program")
    ap.add_argument("n", type=int, help="CTAs per SM")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (JSON value)")
    ap.add_argument("--gpgpusim", metavar="LOG", help="a LIVENESS-traced GPGPU-Sim log of the same run")
    ap.add_argument("--preset", default="gtx480")
    args = ap.parse_args(argv)
    refs = load_reference(None).programs
    if args.program not in PROGRAMS or args.program not in refs:
        raise SystemExit(f"unknown reference program {args.program!r}; choose one of {sorted(PROGRAMS)}")
    over: dict = {"gpu.max_ctas_per_sm": args.n, "monitor.policy": "cta_lifetimes"}
    for kv in args.set:
        k, _, v = kv.partition("=")
        try:
            over[k] = json.loads(v)
        except json.JSONDecodeError:
            over[k] = v
    cfg = load_config(args.preset, over)
    with cp.Device(mode="timing", config=cfg) as dev:
        PROGRAMS[args.program](refs[args.program], find_reference_dir(None))
        stats = [r.stats for r in dev.launches if r.stats is not None]
    if len(stats) != 1:
        raise SystemExit(f"{args.program}: {len(stats)} timed launches; this measure is for one-launch programs")
    s = stats[0]
    dram = sum(sl["dram_read_sectors"] for sl in s.components["l2_slices"])
    row = first_wave_spread(_LOG, 10)
    print(f"tlpsim   {args.program} N={args.n}: {s.cycles:,} cycles, DRAM reads {dram:,} sectors; "
          f"first wave {row['ctas']} CTAs finish {row['first_finish']:,}..{row['last_finish']:,}, "
          f"mean spread within an SM {row['mean_spread']:,.0f} cycles")
    if args.gpgpusim:
        g = first_wave_spread(gpgpusim_events(args.gpgpusim), 10)
        print(f"GPGPU-Sim {args.program} N={args.n}: first wave {g['ctas']} CTAs finish "
              f"{g['first_finish']:,}..{g['last_finish']:,}, mean spread within an SM {g['mean_spread']:,.0f} cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
