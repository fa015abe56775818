"""The papers' figure style for sweeps: one group of bars per workload, one bar per
configuration, each normalised to the run's baseline, and a geometric-mean group."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tlpsim.errors import TlpsimError
from tlpsim.report.metrics import geomean, run_metrics
from tlpsim.sweep.job import canonical
from tlpsim.sweep.store import params_key
from tlpsim.sweep.table import baseline_key, is_baseline


@dataclass
class BarData:
    groups: list[str]                      # x groups (workloads), the last one "GM" when normalised
    variants: list[str]                    # bar labels (configurations)
    values: dict[tuple[str, str], float]   # (group, variant) -> value
    ylabel: str
    missing: list[str]                     # runs left out (no baseline, failed)
    legend: str = ""                       # legend title (what the bars are normalised to)


def _metric(row: dict, metric: str) -> float | None:
    rec = row.get("stats")
    if not isinstance(rec, dict) or not rec.get("stats"):
        return None
    m = run_metrics(rec)
    if metric not in m:
        if metric.startswith("plugin."):  # a plug-in's counter: only runs that select the plug-in have it
            return None
        raise TlpsimError(f"unknown metric {metric!r}; choose from {', '.join(sorted(m))}")
    return float(m[metric])


def _short(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def _variant_labels(rows: list[dict]) -> dict[str, str]:
    """Label each row by the parameters that vary across the rows (besides the workload input)."""
    presets = {r["preset"] for r in rows}
    keys = sorted({k for r in rows for k in r["overrides"]})
    varying = [k for k in keys if len({canonical(r["overrides"].get(k)) for r in rows}) > 1]
    out = {}
    for r in rows:
        parts = [r["preset"]] if len(presets) > 1 else []
        for k in varying:
            v = r["overrides"].get(k)
            parts.append(f"{_short(k)}={v if isinstance(v, str) else canonical(v)}" if v is not None else f"{_short(k)}=-")
        out[r["key"]] = ", ".join(parts) or r["preset"]
    return out


def bar_data(db_rows: list[dict], metric: str, baseline: dict | None, order: list[str] | None = None) -> BarData:
    """Bar values; `order` (run keys in spec order) orders the configurations."""
    done = [r for r in db_rows if r["status"] == "done"]
    if not done:
        raise TlpsimError("no finished runs to plot")
    if order:
        pos = {k: i for i, k in enumerate(order)}
        done.sort(key=lambda r: pos.get(r["key"], len(pos)))
    if baseline and not any(is_baseline(r, baseline) for r in done):  # every bar would be "no baseline run"
        raise TlpsimError(f"--normalize: no run matches baseline "
                          f"{', '.join(f'{k}={v}' for k, v in baseline.items())} (the runs set "
                          f"{_settings(done)}); give KEY=VALUE of a run in the database, or --normalize none")
    by_point = {params_key(r): r for r in done}  # one current run per parameter point
    labels = _variant_labels(done)
    sizes = {r["size"] for r in done}
    samples: dict[tuple[str, str], list[float]] = {}
    missing = []
    for r in done:
        v = _metric(r, metric)
        if v is None:
            missing.append(labels[r["key"]])
            continue
        if baseline:
            b = by_point.get(baseline_key(r, baseline))
            bv = _metric(b, metric) if b is not None else None
            if not bv:
                missing.append(f"{r['workload']} {labels[r['key']]} (no baseline run)")
                continue
            v = v / bv
        group = r["workload"] + (f" ({r['size']})" if len(sizes) > 1 else "")
        samples.setdefault((group, labels[r["key"]]), []).append(v)
    groups = sorted({g for g, _ in samples})
    order = list(dict.fromkeys(labels.values()))
    if baseline:  # the baseline's bar first, as in the papers
        base = [labels[r["key"]] for r in done if is_baseline(r, baseline)]
        order = list(dict.fromkeys(base + order))
    variants = [v for v in order if any((g, v) in samples for g in groups)]
    if not variants:
        raise TlpsimError(f"nothing to plot: no run has a value of {metric!r}"
                          + (" and a baseline run" if baseline else "") + f" (left out: {', '.join(missing[:5])})")
    # several seeds of one point: geometric mean of ratios, arithmetic mean of raw values
    values = {k: (geomean(v) if baseline else sum(v) / len(v)) for k, v in samples.items()}
    if baseline:
        for var in variants:
            values[("GM", var)] = geomean([values[(g, var)] for g in groups if (g, var) in values])
        groups.append("GM")
        ylabel, legend = f"{metric} (normalised)", f"normalised to {_describe(baseline)}"
    else:
        ylabel, legend = metric, ""
    return BarData(groups, variants, values, ylabel, missing, legend)


def _describe(baseline: dict) -> str:
    return ", ".join(f"{_short(k)}={v}" for k, v in baseline.items())


def _settings(rows: list[dict]) -> str:
    """What the runs vary: preset, size and each override key with its values."""
    values: dict[str, set[str]] = {"preset": {r["preset"] for r in rows}, "size": {r["size"] for r in rows}}
    for r in rows:
        for k, v in r["overrides"].items():
            values.setdefault(k, set()).add(v if isinstance(v, str) else canonical(v))
    return "; ".join(f"{k}={'|'.join(sorted(v))}" for k, v in values.items())


def grouped_bars(data: BarData, out: str, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_g, n_v = len(data.groups), len(data.variants)
    width = 0.8 / max(n_v, 1)
    fig, ax = plt.subplots(figsize=(min(11.0, max(4.0, 1.2 + n_g * (0.3 + 0.2 * n_v))), 3.6))
    hatches = ("", "//", "..", "xx", "\\\\", "--", "++", "oo")
    for j, var in enumerate(data.variants):
        xs, ys = [], []
        for i, g in enumerate(data.groups):
            v = data.values.get((g, var))
            if v is not None and math.isfinite(v):
                xs.append(i + (j - (n_v - 1) / 2) * width)
                ys.append(v)
        ax.bar(xs, ys, width, label=var, hatch=hatches[j % len(hatches)], edgecolor="black", linewidth=0.6)
    if data.groups and data.groups[-1] == "GM":
        ax.axvline(n_g - 1.5, color="grey", linewidth=0.8, linestyle=":")
        ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(n_g))
    ax.set_xticklabels(data.groups, rotation=30 if n_g > 6 else 0, ha="right" if n_g > 6 else "center")
    ax.set_ylabel(data.ylabel, fontsize=9)
    ax.set_xlim(-0.6, n_g - 0.4)
    ax.grid(axis="y", linewidth=0.4, alpha=0.6)
    ax.set_axisbelow(True)
    ax.legend(fontsize=7, ncol=min(n_v, 4), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False,
              title=data.legend or None, title_fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9, y=1.02)
    fig.tight_layout()
    fig.savefig(out, dpi=150, bbox_inches="tight")
    plt.close(fig)
