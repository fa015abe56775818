"""Lee et al. (HPCA 2014) Fig. 4 style sweep: IPC as the per-SM CTA limit goes from 1
to the occupancy maximum, for a cache-sensitive and a compute-bound workload.

    .venv/bin/python benchmarks/cta_limit_sweep.py [--size small] [--plot fig4.png]
        [--workloads sgemm_naive,blackscholes]

Each point is a timing run on the gtx480 preset with `gpu.max_ctas_per_sm=N`; the
functional work is done once (trace cache). IPC is normalised to the N=1 run.
"""

from __future__ import annotations

import argparse
import json

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.workloads.registry import get_workload


def sweep(name: str, size: str) -> list[dict]:
    out = []
    limit = None
    n = 1
    while limit is None or n <= limit:
        cfg = load_config("gtx480", [f"gpu.max_ctas_per_sm={n}"])
        with tlpsim.Device(mode="timing", config=cfg):
            res = get_workload(name).execute(size)
        stats = [r.stats for r in res.launches]
        cycles = sum(s.cycles for s in stats)
        thr = sum(s.thread_insts for s in stats)
        limit = limit or max(s.ctas_per_sm_limit for s in
                             [r.stats for r in _unlimited(name, size)]) if limit is None else limit
        out.append({"workload": name, "ctas": n, "cycles": cycles, "ipc": thr / cycles,
                    "sm_cycles": {k: sum(s.sm_cycles[k] for s in stats) for k in stats[0].sm_cycles},
                    "l1d_hit": sum(s.l1d_hit_rate for s in stats) / len(stats), "verified": res.verified})
        print(f"{name:14s} CTAs/SM {n}: {cycles:9d} cycles  IPC {out[-1]['ipc']:7.1f}  L1D hit "
              f"{out[-1]['l1d_hit']:.2f}", flush=True)
        n += 1
    return out


_UNLIMITED: dict = {}


def _unlimited(name: str, size: str):
    key = (name, size)
    if key not in _UNLIMITED:
        with tlpsim.Device(mode="timing", config=load_config("gtx480")):
            _UNLIMITED[key] = get_workload(name).execute(size).launches
    return _UNLIMITED[key]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="small")
    ap.add_argument("--workloads", default="sgemm_naive,blackscholes")
    ap.add_argument("--plot", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    results = {w: sweep(w, args.size) for w in args.workloads.split(",")}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        for w, pts in results.items():
            base = pts[0]["ipc"]
            ax.plot([p["ctas"] for p in pts], [p["ipc"] / base for p in pts], marker="o", label=w)
        ax.set_xlabel("CTAs per SM (limit)")
        ax.set_ylabel("IPC normalised to 1 CTA")
        ax.set_title("CTA-limit sweep (gtx480), cf. Lee et al. Fig. 4")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"figure written to {args.plot}")


if __name__ == "__main__":
    main()
