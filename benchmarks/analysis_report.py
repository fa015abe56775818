"""Compiler-analysis figures over the built-in workloads: our register allocation
against ptxas (sm_80, no register cap) and RegLess region statistics per kernel.

    .venv/bin/python benchmarks/analysis_report.py [--markdown]
"""

from __future__ import annotations

import argparse
import statistics

from tlpsim.analysis.analyzed import analyze
from tlpsim.frontend.loader import load_program
from tlpsim.workloads.registry import load_workloads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, wl in sorted(load_workloads().items()):
        prog = load_program(wl.source_path)
        for kname, k in prog.kernels.items():
            ak = analyze(prog.module, k)
            ours = ak.allocation.n_regs
            ptxas = prog.resources[kname].registers
            s = ak.regions.summary()
            rows.append((name, k.name if len(k.name) < 30 else k.name[:27] + "...", ours, ptxas,
                         s.get("regions", len(ak.regions)), s.get("avg_instructions", 0.0),
                         s.get("avg_live", 0.0), s.get("avg_inputs", 0.0)))
    ratios = [r[2] / r[3] for r in rows if r[3]]
    if args.markdown:
        print("| workload | kernel | regs ours | regs ptxas | regions | instr/region | avg live | avg inputs |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.1f} | {r[6]:.1f} | {r[7]:.1f} |")
    else:
        for r in rows:
            print(f"{r[0]:14s} {r[1]:30s} ours {r[2]:3d} ptxas {r[3]:3d}  regions {r[4]:4d} "
                  f"{r[5]:5.1f} instr/region  live {r[6]:4.1f}  inputs {r[7]:4.1f}")
    print(f"\n{len(rows)} kernels: ours/ptxas mean {statistics.mean(ratios):.2f}, "
          f"geomean {statistics.geometric_mean(ratios):.2f}, worst {max(ratios):.2f}, best {min(ratios):.2f}; "
          f"instr/region mean {statistics.mean(r[5] for r in rows):.1f} "
          f"(range {min(r[5] for r in rows):.1f}-{max(r[5] for r in rows):.1f}; RegLess Table 2: 3.3-16.0)")


if __name__ == "__main__":
    main()
