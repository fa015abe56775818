"""The full register-numbering check of issue 25 (gap 1), over every built-in workload and
every preset (tests/timing/test_register_numbering.py checks a subset):

* in the default mode (`sm.register_count = "ptxas"`), the highest register any
  instruction names + 1 equals the RF's per-thread count; under "ptxas_exact" (h200,
  h100) it equals the numbering's `named_regs` and the RF reserves ptxas's count;
* CTAs/SM equal today's (occupancy from ptxas's count) except where the packed
  allocation needs more registers than ptxas reports: those kernels are listed.

Compile-only plus one functional `tiny` run per workload and compile setting (for the
launch shapes); no timing runs. Exits 1 if the first property fails anywhere.

    .venv/bin/python benchmarks/register_numbering.py [--presets gtx480,gtx980] [--workloads spmv,...]
"""

from __future__ import annotations

import argparse
import sys
import time

import tlpsim
from tlpsim.config.loader import list_presets, load_config
from tlpsim.session import register_numbering
from tlpsim.timing.builder import latency_tables, sm_limits
from tlpsim.timing.occupancy import occupancy
from tlpsim.timing.static import StaticKernel
from tlpsim.workloads.registry import load_workloads


def launches(cfg, names):
    """(workload, launch record, analyzed kernel) of each distinct kernel, compiled as `cfg` says."""
    out = []
    with tlpsim.Device(cfg, trace=False) as dev:
        for name in names:
            seen = set()
            for rec in load_workloads()[name].execute("tiny").launches:
                if rec.mangled not in seen:
                    seen.add(rec.mangled)
                    out.append((name, rec, dev.analyzed_kernel(rec.mangled)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", default=",".join(list_presets()))
    ap.add_argument("--workloads", default=",".join(sorted(load_workloads())))
    args = ap.parse_args()
    names = args.workloads.split(",")
    t0 = time.perf_counter()
    by_compile: dict = {}
    bad, exceptions, checked = [], [], 0
    slowest = (0.0, "")
    for preset in args.presets.split(","):
        cfg = load_config(preset)
        key = repr(sorted(tlpsim.Device(cfg, trace=False).compile_options.items()))
        if key not in by_compile:
            by_compile[key] = launches(cfg, names)
        for wl, rec, ak in by_compile[key]:
            if ak is None:
                continue
            ptxas = rec.resources.registers
            t = time.perf_counter()
            num = register_numbering(cfg, ak.fn, ptxas, ak)
            slowest = max(slowest, (time.perf_counter() - t, f"{rec.kernel} ({len(ak.fn.instructions)} instructions)"))
            sk = StaticKernel(ak.fn, latency_tables(cfg), analyzed=num.analyzed, allocation=num.allocation)
            top = max(r for ins in sk.instrs for r in ins.src_regs + ins.dst_regs) + 1
            checked += 1
            if top != num.named_regs or (num.rf_regs != ptxas if cfg.sm.register_count == "ptxas_exact"
                                         else top != num.rf_regs):
                bad.append(f"{preset} {wl}/{rec.kernel}: highest named + 1 = {top} (numbering: {num.named_regs}), "
                           f"RF per thread {num.rf_regs}, ptxas {ptxas} ({cfg.sm.register_count})")
            threads = rec.block[0] * rec.block[1] * rec.block[2]
            smem = rec.resources.shared_bytes + rec.shared_mem
            before = occupancy(sm_limits(cfg), ptxas, smem, threads).ctas
            after = occupancy(sm_limits(cfg), num.rf_regs, smem, threads)
            if num.rf_regs != ptxas:
                exceptions.append((preset, wl, rec.kernel, ptxas, num.rf_regs, before, after.ctas, after.limiter))
    print(f"{checked} kernel x preset pairs checked in {time.perf_counter() - t0:.0f} s "
          f"(slowest numbering: {slowest[0] * 1000:.0f} ms, {slowest[1]})")
    print(f"highest named register + 1 != RF per-thread count: {len(bad)}")
    for line in bad:
        print("  " + line)
    changed = [e for e in exceptions if e[5] != e[6]]
    print(f"packed allocation above ptxas's count (the RF is sized by the allocation): {len(exceptions)}, "
          f"CTAs/SM changed for {len(changed)}")
    print("| preset | workload | kernel | ptxas regs | RF regs | CTAs/SM before | after | limited by |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for e in exceptions:
        print("| " + " | ".join(map(str, e)) + " |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
