"""Stacked-bar figure of energy records: one bar per launch / workload, one segment
per structure, dynamic (solid) and static (hatched) stacked separately."""

from __future__ import annotations

from pathlib import Path

__all__ = ["energy_bars", "launch_figure", "stack_order"]


def stack_order(records: dict) -> list[str]:
    """Structures by total energy over all records, largest first (the stacking order)."""
    total: dict[str, float] = {}
    for e in records.values():
        for k in set(e.dynamic_j) | set(e.static_j):
            total[k] = total.get(k, 0.0) + e.structure_j(k)
    return sorted((k for k, v in total.items() if v > 0), key=lambda k: -total[k])


def energy_bars(records: dict, path: str | Path, title: str = "Energy breakdown", normalise: bool = False) -> Path:
    """Write a PNG of `records` ({label: EnergyStats}); with `normalise` each bar is
    100% (shares), otherwise microjoules."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(records)
    order = stack_order(records)
    cmap = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(labels) + 3), 4.5))
    bottom = [0.0] * len(labels)
    for i, struct in enumerate(order):
        for part, hatch in (("dynamic_j", None), ("static_j", "//")):
            vals = []
            for k, lab in enumerate(labels):
                e = records[lab]
                v = getattr(e, part).get(struct, 0.0)
                vals.append((v / e.total_j if e.total_j else 0.0) if normalise else v * 1e6)
            if not any(vals):
                continue
            ax.bar(labels, vals, bottom=bottom, color=cmap(i % 20), hatch=hatch, edgecolor="white", linewidth=0.3,
                   label=f"{struct} ({'dyn' if hatch is None else 'static'})")
            bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel("share of energy" if normalise else "energy (µJ)")
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=60)
    ax.legend(fontsize=6, ncol=2, bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def launch_figure(stats: list, path: str | Path) -> str:
    """Figure of a run's launches (LaunchStats with energy records); returns a summary
    line of the run's energy for the console."""
    from tlpsim.errors import TlpsimError
    from tlpsim.timing.stats import EnergyStats

    recs = [s.energy for s in stats if s.energy is not None]
    if not recs:
        raise TlpsimError("--energy-plot: no energy records (the run has power.enabled = false or no timing launch)")
    labels = {f"{k}:{s.kernel}": s.energy for k, s in enumerate(stats) if s.energy is not None}
    out = energy_bars(labels, path, title="Energy per launch")
    e = EnergyStats.combine(recs)
    top = ", ".join(f"{k} {e.share(k):.1%}" for k in stack_order({"run": e})[:4])
    return (f"energy {e.total_j * 1e6:.2f} uJ ({e.total_static_j / e.total_j:.0%} static), average power "
            f"{e.avg_power_w:.1f} W, register file {e.share('rf_bank', 'operand_collector'):.1%}; largest: {top}; "
            f"figure written to {out}")
