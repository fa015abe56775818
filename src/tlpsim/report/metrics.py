"""Whole-run metrics from a run's stats record (one LaunchStats per launch):
totals over launches, rates recomputed from the summed counters, and
cycle-weighted averages of per-launch ratios. These are what `tlpsim results`
lists and `tlpsim plot --metric` draws."""

from __future__ import annotations

import math

# LaunchStats ratios averaged over launches weighted by their cycles
_WEIGHTED = ("avg_resident_warps", "avg_resident_ctas", "dram_row_hit_rate", "ctas_per_sm_limit")


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
    for unit in (stats[0]["utilisation"] if stats else {}):
        m[f"util_{unit}"] = _ratio(sum(s["utilisation"][unit] * s["cycles"] for s in stats), cycles)
    sm_cycles: dict[str, float] = {}
    for s in stats:
        for c, v in s["sm_cycles"].items():
            sm_cycles[c] = sm_cycles.get(c, 0) + v
    total = sum(sm_cycles.values())
    for c, v in sm_cycles.items():
        m[f"frac_{c}"] = _ratio(v, total)
    energy = [s["energy"] for s in stats if isinstance(s.get("energy"), dict)]
    if energy:  # the power model's record, when enabled: sum its numeric totals
        for k in energy[0]:
            if all(isinstance(e.get(k), (int, float)) for e in energy):
                m[f"energy_{k}"] = sum(e[k] for e in energy)
    return m


def geomean(values: list[float]) -> float:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return float("nan")
    return math.exp(sum(math.log(v) for v in vals) / len(vals))
