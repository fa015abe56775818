"""Where LCS's T_new lands on a thrashing kernel whose sweep is best at 2 CTAs per SM.

Eq. 1 reads only the warp instructions each resident CTA has issued when the first
one retires; it does not see the cache. On a kernel that thrashes past 2 CTAs per
SM it lands on OPT only if, by then, the greedy warp scheduler has starved the
later CTAs to about one CTA's worth of instructions in all. This module picks that
kernel from the sweeps (`pick`), reduces an in-process LCS run that recorded SM 0's
Phase 1 to the counts Eq. 1 used (`record`), and states the outcome from those
counts (`verdict`). Nothing here changes Eq. 1.
"""

from __future__ import annotations

from typing import Any

from tlpsim.policies.cta.lazy import eq1

__all__ = ["pick", "record", "verdict"]

THRASH_TYPES = ("III", "IV")


def pick(kernels: list[dict], curves: dict[str, Any], study: list[str]) -> dict | None:
    """The kernel row (Fig. 13's) to check: OPT 2 with a sweep reaching 3 or more CTAs
    per SM, fewer cycles at 2 than at the sweep's top (it loses past OPT) and an L1
    miss rate that rises from 2 to the top (the loss is thrashing). The paper's
    stand-ins come first, then the largest loss; None when no kernel qualifies."""
    best: tuple[tuple[bool, float], dict] | None = None
    for row in kernels:
        curve = curves.get(row["workload"])
        top = row.get("top") or 0
        if row.get("opt") != 2 or top < 3 or curve is None or row.get("type") not in THRASH_TYPES:
            continue
        cyc = [kc.get(row["kernel"]) for kc in curve.kernel_cycles[:top]]
        if not all(cyc) or len(cyc) < top:
            continue
        loss = cyc[top - 1] / cyc[1]
        if loss <= 1.0 or curve.l1_miss[top - 1] <= curve.l1_miss[1]:
            continue
        rank = (row["workload"] in study, loss)
        if best is None or rank > best[0]:
            best = (rank, {**row, "cycles": cyc, "l1_miss": list(curve.l1_miss[:top]), "loss": loss})
    return best[1] if best else None


def record(row: dict, samples: list[tuple[int, int, dict[int, int]]], history: list[tuple[int, int, int, int]],
           launches: list[tuple[int, str]]) -> dict:
    """What the page shows for `row`: SM 0's per-CTA instructions at its decision in
    the kernel's first launch (the last Phase-1 sample, which includes the retired
    CTA) and every SM's decision over the kernel's launches. `launches` are the run's
    (kid, kernel name) in launch order; `history` the scheduler's (kid, sm, CTAs
    resident, T_new)."""
    kids = [kid for kid, name in launches if name == row["kernel"]]
    out = {k: row.get(k) for k in ("workload", "kernel", "t_max", "top", "opt", "type", "cycles", "l1_miss",
                                   "loss", "t_new")}
    out["t_new_mean_lcs_run"] = out.pop("t_new")
    if not kids:
        return {**out, "counts": {}, "decisions": []}
    first = kids[0]
    mine = [s for s in samples if s[1] == first]
    counts = {int(i): int(n) for i, n in (mine[-1][2].items() if mine else ())}
    decisions = [(sm, n, t) for kid, sm, n, t in history if kid in kids]
    sm0 = next(((n, t) for kid, sm, n, t in history if kid == first and sm == 0), (None, None))
    return {**out, "counts": counts, "resident": sm0[0], "t_new_sm0": sm0[1],
            "decisions": [list(d) for d in decisions], "launches": len(kids)}


def verdict(rec: dict) -> str:
    """One sentence from the counts: where Eq. 1 put T_new against OPT, and why."""
    counts = list(rec.get("counts", {}).values())
    if not counts:
        return "no Phase-1 record of SM 0 for this kernel"
    top, total = max(counts), sum(counts)
    t = eq1(counts)
    share = min(counts) / top if top else 0.0
    opt = rec.get("opt")
    ts = [d[2] for d in rec.get("decisions", [])]
    spread = f"T_new over {len(ts)} decisions (SMs x launches): {min(ts)}..{max(ts)}, mean {sum(ts) / len(ts):.2f}" \
        if ts else "no decisions"
    head = (f"at the first retirement SM 0's {len(counts)} CTAs had issued {total:,} warp instructions, "
            f"the most {top:,}: Eq. 1 = floor({total:,} / {top:,}) = floor({total / top:.2f}) = {t}; {spread}")
    if opt is None:
        return head
    if t > opt:
        return (head + f". T_new lands above OPT {opt}: the least-advanced CTA had issued {share:.0%} of the "
                f"leader's instructions, so the greedy scheduler had not starved the later CTAs; Eq. 1 measures how "
                f"unevenly issue was shared, and the cost of the extra CTAs ({rec.get('loss', 1.0) - 1:.1%} more "
                f"cycles at {rec.get('top')} than at 2 CTAs/SM, L1 misses rising) is in the cache, which it cannot see")
    if t == opt:
        return head + f". T_new lands on OPT {opt}"
    return head + (f". T_new lands below OPT {opt}: the later CTAs had issued only {share:.0%} of the leader's "
                   f"instructions, so Eq. 1 counts them as idle")
