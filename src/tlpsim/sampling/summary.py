"""A sampled run's figures: its launches' sampling records summed into the run's
projected cycles, interval and detail share (the stats JSON's "sampling" record)."""

from __future__ import annotations

from typing import Any


def run_summary(spec: Any, records: list[dict | None]) -> dict:
    """{"spec", "cycles", "interval", "detail_fraction", "launches": {method: n}}. The
    launches' intervals add up end to end (kernel projections share representatives,
    so their errors are not independent: the sum is the honest bound)."""
    recs = [r for r in records if r is not None]
    cycles = sum(int(r["cycles"]) for r in recs)
    low = sum(int(r["interval"][0]) for r in recs)
    high = sum(int(r["interval"][1]) for r in recs)
    insts = sum(int(r["warp_insts"]) for r in recs)
    detail = sum(int(r["detail_warp_insts"]) for r in recs)
    methods: dict[str, int] = {}
    for r in recs:
        methods[r["method"]] = methods.get(r["method"], 0) + 1
    return {"spec": spec.to_dict(), "sampled": any(r["method"] != "detail" for r in recs), "cycles": cycles,
            "interval": [low, high], "confidence": spec.confidence,
            "detail_fraction": detail / insts if insts else 1.0, "warp_insts": insts, "detail_warp_insts": detail,
            "launches": methods}


def describe(summary: dict) -> str:
    """One line for the console and reports."""
    lo, hi = summary["interval"]
    c = summary["cycles"]
    s = summary["spec"]
    return (f"sampled ({s['mode']}, tolerance {s['tolerance']:g}): {c} cycles, {int(summary['confidence'] * 100)} % "
            f"interval [{lo}, {hi}] (±{(hi - lo) / 2 / c * 100 if c else 0:.2f} %); "
            f"{summary['detail_fraction'] * 100:.1f} % of warp instructions simulated in detail")
