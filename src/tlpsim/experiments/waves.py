"""CTA waves of an experiment's stand-ins at its size on its preset, for its pages:
whether a stand-in runs enough CTAs for an occupancy mechanism to act on (waves =
CTAs / (SMs x resident CTAs per SM), from the workload catalogue's shape-only pass;
nothing is simulated)."""

from __future__ import annotations

from pathlib import Path

from tlpsim.experiments.base import Experiment

__all__ = ["WAVES_HEADS", "fewest_waves", "waves_rows", "write_waves"]

WAVES_HEADS = ("stand-in", "kernel", "CTAs", "max CTAs/SM", "limited by", "waves", "note")


def waves_rows(exp: Experiment) -> list[list]:
    """One row per kernel of each stand-in (its smallest launch)."""
    from tlpsim.workloads.catalog import catalog
    from tlpsim.workloads.study import EXEMPT, MIN_WAVES

    rows = []
    for w in dict.fromkeys(exp.stand_ins()):
        for r in catalog(exp.preset, [w], exp.size):
            note = EXEMPT.get((r.workload, r.kernel), "")
            if not note and r.waves < MIN_WAVES:
                note = f"below {MIN_WAVES:g} waves"
            rows.append([w, r.kernel, r.ctas, r.ctas_per_sm, r.limited_by, round(r.waves, 2), note])
    return rows


def fewest_waves(rows: list[list]) -> dict[str, float]:
    """Per stand-in, the fewest waves of its kernels that the waves rule binds (all of
    them when every kernel is exempt)."""
    from tlpsim.workloads.study import EXEMPT

    out: dict[str, float] = {}
    for w in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == w]
        bound = [r[5] for r in mine if (w, r[1]) not in EXEMPT] or [r[5] for r in mine]
        out[w] = min(bound)
    return out


def write_waves(exp: Experiment, stem: Path) -> list[Path]:
    """stem.csv and stem.md: the waves table (nothing when the experiment names no stand-ins)."""
    from tlpsim.experiments.outputs import write_table

    if not exp.stand_ins():
        return []
    return write_table(stem, WAVES_HEADS, waves_rows(exp),
                       f"CTA waves of the stand-ins at size {exp.size} on {exp.preset} (smallest launch per kernel)")
