"""Register-file share of GPU energy over the built-in workloads (issue 7 check).

    .venv/bin/python benchmarks/energy_suite.py [--size tiny] [--config gtx480]
        [--workloads a,b,...] [--json out.json] [--plot out.png] [--set KEY=VALUE ...]

Runs every workload in timing mode and prints, per workload, the run's energy, average
power, IPC, and the share of energy in the register file: `RF` = the banks (dynamic +
static), `RF+OC` = banks plus the operand-collector crossbar (RegLess's "register
structures"). The papers report roughly 10-15% (Jeon thesis §2.7: 15%; RegLess: up to 13%
on a GTX 980-like GPU; its "No RF" bound: 16.7% of GPU energy).
"""

from __future__ import annotations

import argparse
import json
import time

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.timing.stats import EnergyStats
from tlpsim.workloads.registry import load_workloads

RF = ("rf_bank",)
RF_OC = ("rf_bank", "operand_collector")


def run_one(name: str, size: str, cfg) -> dict:
    t0 = time.perf_counter()
    with tlpsim.Device(mode="timing", config=cfg):
        res = load_workloads()[name].execute(size)
    stats = [r.stats for r in res.launches if r.stats is not None]
    e = EnergyStats.combine([s.energy for s in stats])
    cycles = sum(s.cycles for s in stats)
    return {"workload": name, "verified": res.verified, "cycles": cycles,
            "ipc": sum(s.thread_insts for s in stats) / cycles if cycles else 0.0,
            "energy_j": e.total_j, "avg_power_w": e.avg_power_w, "static_share": e.total_static_j / e.total_j,
            "rf_share": e.share(*RF), "rf_oc_share": e.share(*RF_OC),
            "by_structure": {k: e.structure_j(k) for k in sorted(set(e.dynamic_j) | set(e.static_j))},
            "wall_s": time.perf_counter() - t0, "energy": e}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--config", default="gtx480")
    ap.add_argument("--workloads", default=None, help="comma-separated subset (default: all)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--json", default=None)
    ap.add_argument("--plot", default=None, help="stacked-bar energy breakdown per workload (PNG)")
    args = ap.parse_args()
    cfg = load_config(args.config, args.overrides)
    names = args.workloads.split(",") if args.workloads else sorted(load_workloads())
    rows = []
    print(f"{'workload':16s} {'cycles':>9s} {'IPC':>7s} {'energy uJ':>10s} {'power W':>8s} {'static':>7s} "
          f"{'RF':>6s} {'RF+OC':>6s} {'wall s':>7s}")
    for name in names:
        r = run_one(name, args.size, cfg)
        rows.append(r)
        print(f"{name:16s} {r['cycles']:9d} {r['ipc']:7.1f} {r['energy_j'] * 1e6:10.2f} {r['avg_power_w']:8.1f} "
              f"{r['static_share']:7.1%} {r['rf_share']:6.1%} {r['rf_oc_share']:6.1%} {r['wall_s']:7.1f}", flush=True)
    n = len(rows) or 1
    print(f"{'average':16s} {'':9s} {'':7s} {'':10s} {sum(r['avg_power_w'] for r in rows) / n:8.1f} "
          f"{sum(r['static_share'] for r in rows) / n:7.1%} {sum(r['rf_share'] for r in rows) / n:6.1%} "
          f"{sum(r['rf_oc_share'] for r in rows) / n:6.1%}")
    if args.plot:
        from tlpsim.report.energy_plot import energy_bars

        energy_bars({r["workload"]: r["energy"] for r in rows}, args.plot,
                    title=f"Energy breakdown, {args.config}, size {args.size}", normalise=True)
        print(f"figure written to {args.plot}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{k: v for k, v in r.items() if k != "energy"} for r in rows], f, indent=1)


if __name__ == "__main__":
    main()
