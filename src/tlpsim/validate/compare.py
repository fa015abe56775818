"""Ours against GPGPU-Sim's: the per-launch rows, the microbenchmark figures, the
CTA sweeps, the summary statistics and issue 18's acceptance criteria, assembled
from job results (`tlpsim.validate.jobs`) and the reference data."""

from __future__ import annotations

import math
from typing import Any

from tlpsim.validate.measure import gs_launch_metrics, gs_program_metrics
from tlpsim.validate.micro import MICRO
from tlpsim.validate.reference import Reference, sweep_points
from tlpsim.validate.stats import classify_shape, mae, pearson, rel_err, sweeps_match

__all__ = ["CRITERIA", "criteria", "figure_rows", "launch_rows", "summary", "sweep_rows"]

#: issue 18, "Done when"
CRITERIA = {"mae_max": 0.10, "r_min": 0.98, "figure_err_max": 0.15, "best_n_slack": 1}
_METRICS = ("cycles", "ipc", "warp_insn", "thread_insn", "l1d_miss_rate", "l2_miss_rate", "dram_util",
            "avg_mem_latency", "occupancy_pct")


def _pick(m: dict | None) -> dict:
    m = m or {}
    out = {k: m.get(k) for k in _METRICS}
    if out["thread_insn"] is None:   # ours: executed lanes, GPGPU-Sim's convention
        out["thread_insn"] = m.get("thread_insn_executed")
    return out


def _row(group: str, program: str, launch: str, kernel: str, ours: dict | None, gs: dict, job: dict,
         error: str | None) -> dict:
    o = _pick(ours)
    row = {"group": group, "program": program, "launch": launch, "kernel": kernel, "ours": o, "gpgpusim": _pick(gs),
           "error": error, "verified": job.get("verified")}
    have = o["cycles"] is not None and gs.get("cycles") and error is None
    row["cycles_rel_err"] = rel_err(o["cycles"], gs["cycles"]) if have else None
    if ours:
        row["ours"].update(functional_wall_s=ours.get("functional_wall_s"), timing_wall_s=ours.get("timing_wall_s"))
    return row


def launch_rows(ref: Reference, program_results: dict[str, dict], micro_results: dict[str, dict],
                micro_ids: dict[str, list[str]]) -> list[dict]:
    """One row per launch: reference programs, then microbenchmark launches."""
    rows = []
    for name, res in program_results.items():
        entry = ref.programs[name]
        gs = gs_program_metrics(entry)
        launches = res.get("launches") or []
        if res.get("error") or not launches:
            rows.append(_row("reference", name, name, entry["kernel"], None, gs, res, res.get("error") or "no launch"))
            continue
        if len(launches) == 1:
            rows.append(_row("reference", name, launches[0]["id"], launches[0]["kernel"], res["program"], gs, res,
                             None))
            continue
        per = entry.get("per_launch", [])
        for k, la in enumerate(launches):   # several launches: GPGPU-Sim reports only cycles and IPC per launch
            g = {"cycles": per[k]["gpu_sim_cycle"], "ipc": per[k]["gpu_ipc"]} if k < len(per) else {"cycles": None}
            rows.append(_row("reference", name, la["id"], la["kernel"], la["metrics"], g, res, None))
    for name, res in micro_results.items():
        spec = ref.micro[name]
        by_id = {MICRO[name].launch_id(la): la for la in spec["launches"]}
        got = {la["id"]: la for la in res.get("launches") or []}
        for lid in micro_ids[name]:
            la = got.get(lid)
            err = res.get("error") or (None if la is not None else "launch did not run")
            rows.append(_row("micro", name, lid, by_id[lid]["kernel"], la["metrics"] if la else None,
                             gs_launch_metrics(by_id[lid]), res, err))
    return rows


def figure_rows(ref: Reference, micro_results: dict[str, dict], micro_ids: dict[str, list[str]]) -> list[dict]:
    """Each microbenchmark launch's derived figure, ours against GPGPU-Sim's."""
    out = []
    for name, res in micro_results.items():
        spec = ref.micro[name]
        bench = MICRO[name]
        by_id = {bench.launch_id(la): la for la in spec["launches"]}
        got = {la["id"]: la for la in res.get("launches") or []}
        for lid in micro_ids[name]:
            la = got.get(lid)
            if la is None:
                fig = bench.figure(by_id[lid], {}, {})
                fig.update(ours=None, error=res.get("error") or "launch did not run")
            else:
                clock = {int(k): int(v) for k, v in la["clock"].items()}
                fig = bench.figure(by_id[lid], la["metrics"], clock)
                fig.update(error=None, clock_reads=la["clock_reads"], cycles=la["metrics"]["cycles"],
                           gs_cycles=int(by_id[lid]["gpu_sim_cycle"]))
                if fig["ours"] is None:
                    fig["error"] = "no %clock interval measured (the probe saw no two %clock reads of warp 0)"
            fig["program"], fig["launch"] = name, lid
            fig["rel_err"] = rel_err(fig["ours"], fig["gpgpusim"]) if fig["ours"] is not None else None
            fig["within"] = fig["rel_err"] is not None and abs(fig["rel_err"]) <= CRITERIA["figure_err_max"]
            out.append(fig)
    return out


def sweep_rows(ref: Reference, points: dict[str, dict[int, dict]]) -> list[dict]:
    """Per program with a reference sweep: both curves, best N, shape, match.
    `points[name][n]` is our job result for cap n (the natural-limit run included)."""
    out = []
    for name, mine in points.items():
        entry = ref.sweeps[name]
        ns, gs_cycles, complete = sweep_points(entry)
        theirs = classify_shape(ns, gs_cycles)
        ours_cycles: list[int | None] = []
        errors = []
        for n in ns:
            res = mine.get(n)
            if res is None or res.get("error") or not res.get("program"):
                ours_cycles.append(None)
                errors.append(f"N={n}: {res.get('error') if res else 'not run'}")
            elif res.get("verified") is False:
                ours_cycles.append(None)
                errors.append(f"N={n}: the program's output check failed ({res.get('output')})")
            else:
                ours_cycles.append(int(res["program"]["cycles"]))
        # the memory latency of each point that has its cycles (GPGPU-Sim's averagemflatency beside it)
        ours_latency = [None if c is None else mine[n]["program"].get("avg_mem_latency")
                        for n, c in zip(ns, ours_cycles)]
        # ... and the sectors each point read from DRAM: how much of the L2's traffic missed
        ours_dram = [None if c is None else mine[n]["program"].get("dram_read_sectors")
                     for n, c in zip(ns, ours_cycles)]
        by_n = {int(p["max_ctas_per_sm"]): p for p in entry["sweep"]}
        row: dict[str, Any] = {
            "program": name, "n": ns, "complete": complete, "gpgpusim_cycles": gs_cycles, "ours_cycles": ours_cycles,
            "ours_mem_latency": ours_latency,
            "gpgpusim_mem_latency": [by_n[n].get("averagemflatency") for n in ns],
            "ours_dram_read_sectors": ours_dram,
            "gpgpusim_dram_reads": [by_n[n].get("dram_reads") for n in ns],
            "natural_limit": int(entry.get("natural_cta_per_sm_limit", ns[-1])),
            "gpgpusim": {"shape": theirs.shape, "best_n": theirs.best_n,
                         "smallest_n_within_3pct": theirs.smallest_n_within_tol,
                         "shape_reported": entry.get("shape"), "best_n_reported": entry.get("best_n")},
            "ours_limit": {n: (mine[n]["program"] or {}).get("ctas_per_sm_limit") for n in ns
                           if mine.get(n) and mine[n].get("program")},
            "errors": errors, "ours": None, "match": None,
        }
        if not errors:
            o = classify_shape(ns, ours_cycles)  # type: ignore[arg-type]
            row["ours"] = {"shape": o.shape, "best_n": o.best_n, "smallest_n_within_3pct": o.smallest_n_within_tol}
            row["match"] = sweeps_match(o, theirs, CRITERIA["best_n_slack"])
            row["cycles_rel_err"] = [rel_err(a, b) for a, b in zip(ours_cycles, gs_cycles)]  # type: ignore[arg-type]
        out.append(row)
    return out


def _agreement(rows: list[dict]) -> dict:
    ok = [r for r in rows if r["cycles_rel_err"] is not None]
    x = [float(r["ours"]["cycles"]) for r in ok]
    y = [float(r["gpgpusim"]["cycles"]) for r in ok]
    logs = ([math.log10(v) for v in x], [math.log10(v) for v in y]) if all(v > 0 for v in x + y) else ([], [])
    same = sum(r["ours"]["warp_insn"] == r["gpgpusim"]["warp_insn"] for r in ok)
    return {"launches": len(ok), "failed": len(rows) - len(ok), "mae": mae(x, y), "pearson_r": pearson(x, y),
            "pearson_r_log": pearson(*logs), "warp_insn_equal": same}


def summary(rows: list[dict], figures: list[dict], sweeps: list[dict]) -> dict:
    ok_figs = [f for f in figures if f["rel_err"] is not None]
    complete = [s for s in sweeps if s["complete"]]
    return {
        "reference": _agreement([r for r in rows if r["group"] == "reference"]),
        "micro": _agreement([r for r in rows if r["group"] == "micro"]),
        "all": _agreement(rows),
        "figures": {"count": len(figures), "measured": len(ok_figs), "within": sum(f["within"] for f in figures),
                    "mae": mae([f["ours"] for f in ok_figs], [f["gpgpusim"] for f in ok_figs])},
        "sweeps": {"count": len(sweeps), "complete": len(complete),
                   "matched": sum(bool(s["match"]) for s in complete),
                   "compared": sum(s["match"] is not None for s in complete)},
    }


def criteria(summ: dict, rows: list[dict], figures: list[dict], sweeps: list[dict]) -> list[dict]:
    """Issue 18's acceptance criteria on what this run covered (a criterion whose
    subject was not run is reported as not evaluated)."""
    allv = summ["all"]
    out = []

    def add(what: str, value: Any, target: str, passed: bool | None) -> None:
        out.append({"criterion": what, "value": value, "target": target, "passed": passed})

    have = allv["launches"] > 0
    add("MAE of cycles, reference programs and microbenchmark launches", allv["mae"],
        f"<= {CRITERIA['mae_max']:.0%}", (allv["mae"] <= CRITERIA["mae_max"]) if have else None)
    r = allv["pearson_r"]
    add("Pearson r of cycles, reference programs and microbenchmark launches", r, f">= {CRITERIA['r_min']}",
        (r >= CRITERIA["r_min"]) if not math.isnan(r) else None)
    add("microbenchmark figures within 15% of GPGPU-Sim's", f"{summ['figures']['within']}/{len(figures)}",
        "all", (summ["figures"]["within"] == len(figures)) if figures else None)
    comp = [s for s in sweeps if s["complete"]]
    add("complete CTA sweeps with the same shape and best N within +-1",
        f"{summ['sweeps']['matched']}/{len(comp)}", "all",
        (all(s["match"] for s in comp)) if comp else None)
    return out
