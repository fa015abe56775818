"""Per-structure power split of a few workloads, ours against GPUWattch's GTX 480 model
(issue 26 §3; docs/energy.md "Power split against GPUWattch").

    .venv/bin/python benchmarks/power_split.py [--size small] [--config gtx480]
        [--workloads a,b,...] [--save-inputs runs.pkl | --inputs runs.pkl] [--json out.json]

Each workload runs once in timing mode. The energy model's inputs of every launch (the
activity counters, which the timing model fixes) are kept, and two energy models are
applied to them: ours (the config's table, `tlpsim.power.model`) and GPUWattch's GTX 480
model (`tlpsim.power.gpuwattch`). Shares are per workload (structure energy / workload
energy), then averaged over the workloads with equal weight, as GPUWattch reports an
average breakdown over its benchmarks. `--save-inputs` stores the recorded inputs;
`--inputs` re-evaluates them without simulating (energy never feeds back into timing).
"""

from __future__ import annotations

import argparse
import json
import pickle
import time

import tlpsim
import tlpsim.power.model as power_model
from tlpsim.config.loader import load_config
from tlpsim.timing.stats import EnergyStats
from tlpsim.workloads.registry import load_workloads

DEFAULT = "sgemm,hotspot,blackscholes,kmeans,lbm,bfs,cutcp"
# the structures the papers' claims rest on (docs/energy.md)
RF_SMEM = ("rf_bank", "smem")


def simulate(names: list[str], size: str, cfg) -> dict:
    """workload -> list of EnergyInputs (one per launch)."""
    out = {}
    for name in names:
        t0 = time.perf_counter()
        with power_model.record_inputs() as launches, tlpsim.Device(mode="timing", config=cfg):
            res = load_workloads()[name].execute(size)
        if not res.verified:
            raise SystemExit(f"{name}: output does not verify at size {size}")
        out[name] = launches
        print(f"# {name}: {len(launches)} launches, {time.perf_counter() - t0:.0f} s", flush=True)
    return out


def split(records: dict, cfg) -> dict:
    """model -> workload -> combined EnergyStats."""
    from tlpsim.power.gpuwattch import gpuwattch_energy

    ours = power_model.EnergyModel(cfg)
    return {"ours": {w: EnergyStats.combine([ours(i) for i in ins]) for w, ins in records.items()},
            "gpuwattch": {w: EnergyStats.combine([gpuwattch_energy(cfg, i) for i in ins])
                          for w, ins in records.items()}}


def shares(by_workload: dict) -> dict:
    """structure -> (dynamic share, static share), averaged over workloads."""
    structs = sorted({s for e in by_workload.values() for s in set(e.dynamic_j) | set(e.static_j)})
    n = len(by_workload)
    return {s: (sum(e.dynamic_j.get(s, 0.0) / e.total_j for e in by_workload.values()) / n,
                sum(e.static_j.get(s, 0.0) / e.total_j for e in by_workload.values()) / n) for s in structs}


def rf_smem_static(e: EnergyStats) -> float:
    return sum(e.static_j.get(s, 0.0) for s in RF_SMEM) / e.total_j


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="small")
    ap.add_argument("--config", default="gtx480")
    ap.add_argument("--workloads", default=DEFAULT, help=f"comma-separated (default: {DEFAULT})")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--save-inputs", default=None, help="store the recorded energy inputs (pickle)")
    ap.add_argument("--inputs", default=None, help="re-evaluate stored inputs instead of simulating")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    cfg = load_config(args.config, args.overrides)
    if args.inputs:
        with open(args.inputs, "rb") as f:
            records = pickle.load(f)
    else:
        records = simulate(args.workloads.split(","), args.size, cfg)
        if args.save_inputs:
            with open(args.save_inputs, "wb") as f:
                pickle.dump(records, f)
    res = split(records, cfg)
    avg = {m: shares(res[m]) for m in res}
    print(f"\n{'structure':18s} {'GPUWattch dyn':>13s} {'static':>7s} {'ours dyn':>9s} {'static':>7s}")
    for s in sorted(set(avg["ours"]) | set(avg["gpuwattch"])):
        g, o = avg["gpuwattch"].get(s, (0.0, 0.0)), avg["ours"].get(s, (0.0, 0.0))
        print(f"{s:18s} {g[0]:13.1%} {g[1]:7.1%} {o[0]:9.1%} {o[1]:7.1%}")
    print(f"\n{'workload':14s} {'GW power W':>10s} {'GW RF+SMEM static':>18s} {'ours power W':>12s} "
          f"{'ours RF+SMEM static':>20s} {'ours static':>11s}")
    for w in records:
        g, o = res["gpuwattch"][w], res["ours"][w]
        print(f"{w:14s} {g.avg_power_w:10.1f} {rf_smem_static(g):18.1%} {o.avg_power_w:12.1f} "
              f"{rf_smem_static(o):20.1%} {o.total_static_j / o.total_j:11.1%}")
    n = len(records)
    for m in ("gpuwattch", "ours"):
        vals = [rf_smem_static(e) for e in res[m].values()]
        print(f"{m}: RF+SMEM static {sum(vals) / n:.1%} (range {min(vals):.1%}-{max(vals):.1%}), "
              f"average power {sum(e.avg_power_w for e in res[m].values()) / n:.1f} W")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({m: {"average_shares": avg[m],
                           "workloads": {w: {"avg_power_w": e.avg_power_w, "rf_smem_static": rf_smem_static(e),
                                             "dynamic_j": e.dynamic_j, "static_j": e.static_j}
                                         for w, e in res[m].items()}} for m in res}, f, indent=1)


if __name__ == "__main__":
    main()
