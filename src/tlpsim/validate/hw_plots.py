"""Figures of a validation against real-GPU measurements (PNG, matplotlib): kernel time
per launch, tlpsim against the GPU on log-log axes, and each occupancy sweep's two
curves."""

from __future__ import annotations

import math
from pathlib import Path

from tlpsim.validate.plots import _plt, log_diagonal, panel_grid

__all__ = ["scatter", "sweep_curves"]


def scatter(v: dict, path: str | Path) -> Path | None:
    """µs per launch, tlpsim (y) against the GPU (x); None when no launch was compared."""
    rows = [r for r in v["launches"] if r["tlpsim_us"] is not None]
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.8, 6.0))
    styles = {"small": ("o", "tab:blue"), "paper": ("s", "tab:orange")}
    for size, (marker, color) in styles.items():
        pts = [r for r in rows if r["size"] == size]
        if pts:
            ax.scatter([r["gpu_us"] for r in pts], [r["tlpsim_us"] for r in pts], marker=marker, color=color,
                       label=f"{size} ({len(pts)} launches)", s=26, zorder=3)
    for r in rows:
        if abs(r["rel_err"]) > 0.5:
            ax.annotate(r["workload"], (r["gpu_us"], r["tlpsim_us"]), fontsize=6, xytext=(3, -7),
                        textcoords="offset points")
    log_diagonal(ax, [r["gpu_us"] for r in rows] + [r["tlpsim_us"] for r in rows], 0.25)
    ax.set_xlabel(f"{v['hardware']['device']} kernel time (µs, CUDA events)")
    ax.set_ylabel(f"tlpsim {v['options']['config']} (cycles / {v['options']['core_clock_mhz']:.0f} MHz, µs)")
    s = v["summary"]["all"]
    ax.set_title(f"Kernel time per launch: MAE {100 * s['mae']:.1f}%, r {s['pearson_r']:.3f} "
                 f"({s['launches']} launches)", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def sweep_curves(v: dict, path: str | Path) -> Path | None:
    """One panel per sweep: µs against CTAs per SM, GPU and tlpsim, at the largest carveout
    (the natural point, the driver's carveout, hollow at the last N); None without sweeps."""
    sweeps = [s for s in v["sweeps"] if s["n"]]
    if not sweeps:
        return None
    plt = _plt()
    fig, panels = panel_grid(plt, len(sweeps))
    for ax, sw in zip(panels, sweeps):
        ns = sw["n"]
        ax.plot(ns, sw["gpu_us"], marker="s", color="tab:gray", label=v["hardware"]["device"])
        ax.plot(ns, [math.nan if c is None else c for c in sw["tlpsim_us"]], marker="o", color="tab:blue",
                label="tlpsim")
        nat = sw.get("natural") or {}
        for us, color, who in ((nat.get("gpu_us"), "tab:gray", "GPU"), (nat.get("tlpsim_us"), "tab:blue", "tlpsim")):
            if us is not None:   # the natural point: the driver's carveout, hollow
                ax.plot([ns[-1]], [us], marker="D", mfc="none", color=color, linestyle="none",
                        label=f"{who}, driver's carveout")
        g, o = sw["gpu"], sw["ours"]
        sub = f"GPU: {g['shape']}, best {g['best_n']}"
        sub += f"\ntlpsim: {o['shape']}, best {o['best_n']} — {'match' if sw['match'] else 'MISMATCH'}" if o \
            else "\ntlpsim: incomplete"
        ax.set_title(f"{sw['program']}\n{sub}", fontsize=8)
        ax.set_xticks(ns)
        ax.set_xlabel("CTAs per SM", fontsize=8)
        ax.set_ylabel("µs", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
