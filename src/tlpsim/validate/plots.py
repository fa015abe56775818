"""The validation's figures (PNG, matplotlib): cycles of every launch, tlpsim
against GPGPU-Sim on log-log axes with the y = x line, and each CTA-limit sweep's
two curves side by side."""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["scatter", "sweep_curves"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def log_diagonal(ax, vals: list[float], band: float) -> None:
    """Log-log axes spanning `vals` by whole decades, the y = x line and a ±`band` region."""
    lo, hi = 10 ** math.floor(math.log10(min(vals))), 10 ** math.ceil(math.log10(max(vals)))
    ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="y = x")
    ax.fill_between([lo, hi], [lo * (1 - band), hi * (1 - band)], [lo * (1 + band), hi * (1 + band)], color="grey",
                    alpha=0.15, label=f"±{100 * band:.0f}%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)


def panel_grid(plt, n: int):
    """A figure of `n` panels, at most 3 a row, the unused ones hidden; (fig, panels)."""
    cols = min(3, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def scatter(v: dict, path: str | Path) -> Path | None:
    """Cycles per launch, tlpsim (y) against GPGPU-Sim (x); None when no launch ran."""
    rows = [r for r in v["launches"] if r["cycles_rel_err"] is not None]
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    styles = {"reference": ("o", "tab:blue", "reference programs"), "micro": ("^", "tab:orange", "microbenchmarks")}
    for group, (marker, color, label) in styles.items():
        pts = [(r["gpgpusim"]["cycles"], r["ours"]["cycles"]) for r in rows if r["group"] == group]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color, label=label, s=28,
                       zorder=3)
    for r in rows:
        if r["group"] == "reference":
            ax.annotate(r["launch"], (r["gpgpusim"]["cycles"], r["ours"]["cycles"]), fontsize=7,
                        xytext=(4, -8), textcoords="offset points")
    log_diagonal(ax, [r["gpgpusim"]["cycles"] for r in rows] + [r["ours"]["cycles"] for r in rows], 0.1)
    ax.set_xlabel("GPGPU-Sim cycles")
    ax.set_ylabel("tlpsim cycles")
    s = v["summary"]["all"]
    ax.set_title(f"Cycles per launch ({s['launches']} launches): MAE {100 * s['mae']:.1f}%, r {s['pearson_r']:.3f}",
                 fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def sweep_curves(v: dict, path: str | Path) -> Path | None:
    """One panel per program: cycles against the CTA cap, both simulators; None without sweeps."""
    sweeps = v["sweeps"]
    if not sweeps:
        return None
    plt = _plt()
    fig, panels = panel_grid(plt, len(sweeps))
    for ax, sw in zip(panels, sweeps):
        ns = sw["n"]
        ax.plot(ns, sw["gpgpusim_cycles"], marker="s", color="tab:gray", label="GPGPU-Sim")
        if any(c is not None for c in sw["ours_cycles"]):   # a failed point leaves a gap in the line
            ax.plot(ns, [math.nan if c is None else c for c in sw["ours_cycles"]], marker="o", color="tab:blue",
                    label="tlpsim")
        g = sw["gpgpusim"]
        ax.axvline(g["best_n"], color="tab:gray", ls=":", lw=1)
        if sw["ours"]:
            ax.axvline(sw["ours"]["best_n"], color="tab:blue", ls="--", lw=1)
            verdict = "match" if sw["match"] else "MISMATCH"
            sub = f"tlpsim: {sw['ours']['shape']}, best {sw['ours']['best_n']}\nGPGPU-Sim: {g['shape']}, best " \
                  f"{g['best_n']} — {verdict}"
        else:
            sub = f"GPGPU-Sim: {g['shape']}, best {g['best_n']} — tlpsim incomplete"
        ax.set_title(f"{sw['program']}\n{sub}", fontsize=8)
        ax.set_xticks(ns)
        ax.set_xlabel("CTAs per SM (cap)", fontsize=8)
        ax.set_ylabel("cycles", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
