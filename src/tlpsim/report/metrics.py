"""Whole-run metrics from a run's stats record (one LaunchStats per launch):
totals over launches, rates recomputed from the summed counters, and
cycle-weighted averages of per-launch ratios. These are what `tlpsim results`
lists and `tlpsim plot --metric` draws. Plug-in counters appear as
`plugin.<point>.<name>.<counter>`, over the run's launches as each counter
aggregates (summed, peak or cycle-weighted mean: `Counter.agg`)."""

from __future__ import annotations

import math

# LaunchStats ratios averaged over launches weighted by their cycles
_WEIGHTED = ("avg_resident_warps", "avg_resident_ctas", "dram_row_hit_rate", "ctas_per_sm_limit")
_WEIGHTED_SINCE_STUDY = ("full_occupancy_share_min", "full_occupancy_share_mean")


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def run_metrics(record: dict) -> dict[str, float]:
    """Scalar metrics of a run record (see job.execute)."""
    stats = record.get("stats") or []
    cycles = sum(s["cycles"] for s in stats)
    thr = sum(s["thread_insts"] for s in stats)
    warp = sum(s["warp_insts"] for s in stats)
    m: dict[str, float] = {"cycles": cycles, "thread_insts": thr, "warp_insts": warp, "ipc": _ratio(thr, cycles),
                           "warp_ipc": _ratio(warp, cycles), "launches": len(stats)}
    l1_acc = sum(sm["l1d_accesses"] for s in stats for sm in s["per_sm"])
    l1_hit = sum(sm["l1d_hits"] for s in stats for sm in s["per_sm"])
    l2_acc = sum(s["components"].get("l2_accesses", 0) for s in stats)
    l2_hit = sum(s["components"].get("l2_hits", 0) for s in stats)
    m["l1d_hit_rate"] = _ratio(l1_hit, l1_acc)
    m["l2_hit_rate"] = _ratio(l2_hit, l2_acc)
    m["dram_reads"] = sum(s["dram_reads"] for s in stats)
    m["dram_writes"] = sum(s["dram_writes"] for s in stats)
    m["mshr_reservation_fails"] = sum(s["mshr_reservation_fails"] for s in stats)
    for key in _WEIGHTED:
        m[key] = _ratio(sum(s[key] * s["cycles"] for s in stats), cycles)
    for key in _WEIGHTED_SINCE_STUDY:  # absent from records made before the statistic existed
        m[key] = _ratio(sum(s.get(key, 0.0) * s["cycles"] for s in stats), cycles)
    for unit in (stats[0]["utilisation"] if stats else {}):
        m[f"util_{unit}"] = _ratio(sum(s["utilisation"][unit] * s["cycles"] for s in stats), cycles)
    sm_cycles: dict[str, float] = {}
    for s in stats:
        for c, v in s["sm_cycles"].items():
            sm_cycles[c] = sm_cycles.get(c, 0) + v
    total = sum(sm_cycles.values())
    for c, v in sm_cycles.items():
        m[f"frac_{c}"] = _ratio(v, total)
    for key, counters in plugin_totals(stats)[0].items():
        for name, v in counters.items():
            m[f"plugin.{key}.{name}"] = v
    energy = [s["energy"] for s in stats if isinstance(s.get("energy"), dict)]
    if energy:  # the power model's record, when enabled: sum its numeric totals
        for k in energy[0]:
            if all(isinstance(e.get(k), (int, float)) for e in energy):
                m[f"energy_{k}"] = sum(e[k] for e in energy)
    return m


def plugin_totals(stats: list[dict]) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    """Plug-in counters over launches, {"point.name": {counter: value}}, and their
    units, from LaunchStats dicts (`plugins`, `plugin_units`, `plugin_aggs`): sums add
    up, peaks ("max" counters) take the highest launch, means ("mean") weight each
    launch by its cycles. A level's unit says which it is ("... (peak)", "... (mean)")."""
    totals: dict[str, dict[str, float]] = {}
    units: dict[str, dict[str, str]] = {}
    aggs: dict[str, dict[str, str]] = {}
    cycles = 0
    for s in stats:
        cycles += s.get("cycles", 0)
        levels = s.get("plugin_aggs") or {}
        for key, counters in (s.get("plugins") or {}).items():
            mine = totals.setdefault(key, {})
            for name, v in counters.items():
                agg = (levels.get(key) or {}).get(name, "sum")
                if agg != "sum":
                    aggs.setdefault(key, {})[name] = agg
                if agg == "max":
                    mine[name] = max(mine.get(name, v), v)
                elif agg == "mean":
                    mine[name] = mine.get(name, 0) + v * s.get("cycles", 0)
                else:
                    mine[name] = mine.get(name, 0) + v
        for key, u in (s.get("plugin_units") or {}).items():
            units.setdefault(key, {}).update(u)
    for key, levels in aggs.items():
        for name, agg in levels.items():
            if agg == "mean":
                totals[key][name] = _ratio(totals[key][name], cycles)
            unit = units.setdefault(key, {}).get(name, "")
            units[key][name] = f"{unit} ({'peak' if agg == 'max' else 'mean'})".strip()
    return totals, units


def plugin_energy(stats: list[dict], plugins: dict | None) -> list[tuple[str, str, float, float, float, str]]:
    """The energy structures the run's plug-ins declare, over its launches:
    (structure, plug-in key, accesses, dynamic J, static J, source of the numbers)."""
    rows = []
    for key, info in ((plugins or {}).get("selected") or {}).items():
        for name, decl in (info.get("energy") or {}).items():
            acc = dyn = sta = 0.0
            for s in stats:
                e = s.get("energy") or {}
                acc += (e.get("events", {}).get(name) or {}).get("access", 0)
                dyn += e.get("dynamic_j", {}).get(name, 0.0)
                sta += e.get("static_j", {}).get(name, 0.0)
            rows.append((name, key, acc, dyn, sta, decl.get("source", "")))
    return rows


def residency(limit: int, limited_by: str, peak_ctas: int = 0, peak_warps: int = 0) -> str:
    """A launch's "CTAs/SM (limit)" cell: the occupancy limit and its limiter, or —
    when a resource allocator kept more CTAs resident on an SM than that limit
    allows — the peak CTAs and warps per SM, then the limit."""
    if peak_ctas > limit:
        return f"{peak_ctas} peak, {peak_warps} warps ({limit} {limited_by})"
    return f"{limit} ({limited_by})"


def geomean(values: list[float]) -> float:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return float("nan")
    return math.exp(sum(math.log(v) for v in vals) / len(vals))
