"""The study's figures, on the axes and with the series of the paper's, each with
its data as CSV and Markdown next to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tlpsim.experiments.lcs_bcs.analysis import CLASSES, StudyData
from tlpsim.experiments.lcs_bcs.classify import TYPES
from tlpsim.experiments.lcs_bcs.suite import BENCHMARKS, stand_in
from tlpsim.experiments.lcs_bcs.tnew_check import verdict
from tlpsim.experiments.outputs import plt, save_figure, write_table
from tlpsim.report.metrics import geomean

TYPE_COLOURS = {"I": "#2e7d32", "II": "#1565c0", "III": "#c62828", "IV": "#ef6c00", "n/a": "#9e9e9e"}
CLASS_COLOURS = {"active": "#2e7d32", "idle": "#bdbdbd", "mem_stall": "#1565c0", "core_stall": "#ef6c00"}
CONFIG_COLOURS = {"GTO": "#616161", "TLV": "#8e24aa", "CCWS": "#00897b", "DYNCTA": "#f9a825", "LCS": "#1e88e5",
                  "LCS+BCS": "#d81b60", "BCS+GTO": "#90caf9", "BCS+SCA": "#d81b60", "OPT": "#43a047",
                  "T_max": "#9e9e9e", "T_new": "#1e88e5", "mCKE": "#d81b60", "CKE": "#616161"}


def _empty(stem: Path, what: str) -> list[Path]:
    p = plt()
    fig, ax = p.subplots(figsize=(4, 1.2))
    ax.axis("off")
    ax.text(0.5, 0.5, f"no data: {what}", ha="center", va="center")
    return save_figure(fig, stem)


def _pct(x: float | None) -> float | None:
    return None if x is None else 100.0 * (x - 1.0)


def _bars(ax: Any, labels: list[str], series: dict[str, list[float | None]], ylabel: str, base: float | None = 1.0):
    n = max(len(series), 1)
    width = 0.8 / n
    for k, (name, vals) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(labels))]
        ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=name,
               color=CONFIG_COLOURS.get(name), edgecolor="white", linewidth=0.3)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right")
    ax.set_ylabel(ylabel)
    if base is not None:
        ax.axhline(base, color="black", linewidth=0.6)
    ax.grid(axis="y", linewidth=0.3, alpha=0.6)
    if n > 1:
        ax.legend(frameon=False, ncol=min(n, 6), loc="lower center", bbox_to_anchor=(0.5, 1.0))


def _label(workload: str) -> str:
    """A stand-in shown with the paper benchmark it stands for."""
    for b in BENCHMARKS:
        if b.workload == workload:
            return f"{b.abbr} ({workload})"
    return workload


# ---------------------------------------------------------------- Section 3

def fig4(d: StudyData, stem: Path) -> list[Path]:
    typed = {w: c for w, c in d.curves.items() if c.type in TYPES}
    rows = [[w, c.type, c.opt, c.t_max, len(c.counts), c.grid_limited] + [round(p, 4) for p in c.perf]
            for w, c in sorted(d.curves.items())]
    top = max((len(c.counts) for c in d.curves.values()), default=1)
    files = write_table(stem, ["workload", "type", "OPT", "T_max", "N", "grid-limited"]
                        + [f"perf@{n}" for n in range(1, top + 1)], rows,
                        "Performance vs CTAs per SM (normalised to 1 CTA/SM)")
    if not typed:
        return files + _empty(stem, "no workload could be typed")
    p = plt()
    fig, axes = p.subplots(1, 4, figsize=(12, 3), sharey=False)
    for ax, t in zip(axes, TYPES):
        for w, c in sorted(typed.items()):
            if c.type == t:
                ax.plot(c.counts, c.perf, marker="o", markersize=3, linewidth=1, label=_label(w))
        ax.set_title(f"Type {t}")
        ax.set_xlabel("max CTAs per SM")
        ax.grid(linewidth=0.3, alpha=0.6)
        if ax.lines:
            ax.legend(frameon=False, fontsize=6)
    axes[0].set_ylabel("performance (normalised to 1 CTA)")
    return files + save_figure(fig, stem)


def _representative(d: StudyData, paper: str, want: str) -> str | None:
    """The paper's representative workload's stand-in if it has that type, else the
    first typed workload of the type."""
    w = stand_in(paper)
    if d.type_of(w) == want:
        return w
    return next((x for x, c in sorted(d.curves.items()) if c.type == want), w if w in d.curves else None)


def fig5(d: StudyData, stem: Path) -> list[Path]:
    picks = [(t, _representative(d, paper, t)) for t, paper in (("I", "CONV"), ("II", "SRAD"), ("III", "KMN"),
                                                                ("IV", "LPS"))]
    rows = []
    for t, w in picks:
        c = d.curves.get(w) if w else None
        if c is None:
            continue
        for n, fr in zip(c.counts, c.classes):
            rows.append([t, w, c.type, n] + [round(100 * fr[k], 2) for k in CLASSES])
    files = write_table(stem, ["panel", "workload", "its type", "CTAs/SM"] + [k.upper() + " %" for k in CLASSES],
                        rows, "Core activity vs CTAs per SM")
    if not rows:
        return files + _empty(stem, "no curves")
    p = plt()
    fig, axes = p.subplots(1, 4, figsize=(12, 2.8))
    for ax, (t, w) in zip(axes, picks):
        c = d.curves.get(w) if w else None
        ax.set_title(f"({'abcd'[TYPES.index(t)]}) Type {t}: {_label(w) if w else '-'}"
                     + (f" [measured {c.type}]" if c is not None and c.type != t else ""), fontsize=7)
        if c is None:
            ax.axis("off")
            continue
        bottom = [0.0] * len(c.counts)
        for k in CLASSES:
            vals = [100 * fr[k] for fr in c.classes]
            ax.bar(c.counts, vals, 0.7, bottom=bottom, color=CLASS_COLOURS[k], label=k.upper())
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xlabel("max CTAs per SM")
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("% of SM cycles")
    axes[0].legend(frameon=False, fontsize=6, ncol=2)
    return files + save_figure(fig, stem)


def fig6(d: StudyData, stem: Path) -> list[Path]:
    picks = [("KMN", stand_in("KMN")), ("BLK", stand_in("BLK"))]
    rows = []
    for paper, w in picks:
        c = d.curves.get(w)
        if c is not None:
            for n, perf, l1, l2 in zip(c.counts, c.perf, c.l1_miss, c.l2_miss):
                rows.append([paper, w, c.type, n, round(perf, 4), round(l1, 4), round(l2, 4)])
    files = write_table(stem, ["paper", "workload", "type", "CTAs/SM", "performance", "L1 miss rate",
                               "L2 miss rate"], rows, "Performance and cache miss rates vs CTAs per SM")
    if not rows:
        return files + _empty(stem, "no curves")
    p = plt()
    fig, axes = p.subplots(1, 2, figsize=(8, 2.8))
    for ax, (paper, w) in zip(axes, picks):
        c = d.curves.get(w)
        ax.set_title(f"({'ab'[picks.index((paper, w))]}) {paper} ({w}), Type {c.type if c else '-'}")
        if c is None:
            ax.axis("off")
            continue
        ax.bar(c.counts, c.perf, 0.6, color="#bdbdbd", label="performance")
        ax.set_ylabel("performance (norm. to 1 CTA)")
        ax.set_xlabel("max CTAs per SM")
        ax2 = ax.twinx()
        ax2.plot(c.counts, c.l1_miss, marker="o", color="#c62828", label="L1 miss rate")
        ax2.plot(c.counts, c.l2_miss, marker="s", color="#1565c0", label="L2 miss rate")
        ax2.set_ylim(0, 1)
        ax2.set_ylabel("miss rate")
        ax2.legend(frameon=False, fontsize=6, loc="lower right")
    return files + save_figure(fig, stem)


def tnew_check_table(d: StudyData, stem: Path) -> list[Path]:
    r = d.tnew_check
    heads = ["item", "value"]
    if not r or "none" in r:
        return write_table(stem, heads, [["kernel", r.get("none", "not run")]], "T_new on a thrashing kernel")
    counts = r.get("counts") or {}
    rows = [["workload, kernel", f"{r['workload']}, {r['kernel']}"],
            ["the kernel's type, T_max (its sweep's top), OPT", f"{r.get('type')}, {r.get('t_max')} ({r.get('top')}), {r.get('opt')}"],
            ["kernel cycles at 1..top CTAs/SM (GTO)", " / ".join(f"{c:,}" for c in r.get("cycles") or [])],
            ["L1D miss rate at 1..top", " / ".join(f"{m:.3f}" for m in r.get("l1_miss") or [])],
            ["SM 0, first launch: CTAs resident at the decision", r.get("resident")],
            ["SM 0: warp instructions per CTA at the first retirement",
             ", ".join(f"CTA {i}: {n:,}" for i, n in sorted(counts.items(), key=lambda x: int(x[0])))],
            ["SM 0: T_new", r.get("t_new_sm0")],
            ["mean T_new over SMs and launches (the LCS run of fig13)", r.get("t_new_mean_lcs_run")],
            ["why", verdict(r)]]
    return write_table(stem, heads, rows, f"T_new on {r['workload']} ({r['kernel']})")


# ---------------------------------------------------------------- Section 4-5

def fig8(d: StudyData, stem: Path) -> list[Path]:
    samples = d.fig8.get("samples") or []
    rows = [[cyc, cta, n] for cyc, ctas in samples for cta, n in sorted(ctas.items(), key=lambda x: int(x[0]))]
    files = write_table(stem, ["cycle", "CTA", "instructions issued"], rows,
                        f"Phase 1 of LCS on SM 0: {d.fig8.get('workload', '-')} ({d.fig8.get('kernel', '-')})")
    if not samples:
        return files + _empty(stem, "no Phase 1 record")
    p = plt()
    fig, ax = p.subplots(figsize=(6, 3))
    ctas = sorted({int(c) for _, s in samples for c in s})
    for c in ctas:
        xs = [cyc for cyc, s in samples if str(c) in s or c in s]
        ys = [s.get(str(c), s.get(c)) for cyc, s in samples if str(c) in s or c in s]
        ax.plot(xs, ys, marker=".", linewidth=1, label=f"CTA {c}")
    ax.set_xlabel("core cycle")
    ax.set_ylabel("warp instructions issued")
    ax.set_title(f"{d.fig8.get('label', '')}: T_max {d.fig8.get('t_max', '-')}, T_new {d.fig8.get('t_new', '-')}")
    ax.legend(frameon=False, fontsize=6, ncol=2)
    ax.grid(linewidth=0.3, alpha=0.6)
    return files + save_figure(fig, stem)


def _by_type(d: StudyData, values: dict[str, float | None]) -> list[str]:
    order = {t: k for k, t in enumerate(TYPES + ("n/a",))}
    return sorted((w for w in values if values[w] is not None), key=lambda w: (order.get(d.type_of(w), 9), w))


def fig12(d: StudyData, stem: Path) -> list[Path]:
    sp = {w: v.get("speedup") for w, v in d.lcs.items()}
    ws = _by_type(d, sp)
    rows = [[w, d.type_of(w), sp[w]] for w in ws]
    groups = [("I/II", ("I", "II")), ("III/IV", ("III", "IV")), ("all", TYPES + ("n/a",))]
    for name, ts in groups:
        rows.append([f"geomean {name}", "", d.group(ts, sp)])
    files = write_table(stem, ["workload", "type", "LCS / GTO"], rows, "LCS performance normalised to GTO")
    if not ws:
        return files + _empty(stem, "no LCS runs")
    p = plt()
    fig, ax = p.subplots(figsize=(max(6, 0.28 * len(rows)), 3))
    labels = [_label(w) for w in ws] + [r[0] for r in rows[len(ws):]]
    vals = [sp[w] for w in ws] + [r[2] for r in rows[len(ws):]]
    colours = [TYPE_COLOURS.get(d.type_of(w), "#9e9e9e") for w in ws] + ["black"] * len(groups)
    ax.bar(range(len(vals)), [v or 0 for v in vals], 0.7, color=colours)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(labels, rotation=70, ha="right", fontsize=6)
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_ylabel("performance normalised to GTO")
    for t in TYPES:
        ax.bar([0], [0], color=TYPE_COLOURS[t], label=f"Type {t}")
    ax.legend(frameon=False, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return files + save_figure(fig, stem)


def fig13(d: StudyData, stem: Path) -> list[Path]:
    ks = [k for k in d.kernels if k.get("t_new") is not None and k.get("opt") is not None]
    rows = [[k["workload"], k["kernel"], k["type"], k["t_max"], k["top"], k["opt"],
             None if k.get("t_new") is None else round(k["t_new"], 2),
             None if k.get("t_new") is None or k.get("opt") is None else abs(k["t_new"] - k["opt"]) <= 1]
            for k in d.kernels]
    files = write_table(stem, ["workload", "kernel", "kernel type", "T_max (occupancy)", "CTAs/SM swept",
                               "OPT", "T_new (LCS, mean)", "within ±1"], rows, "CTAs per SM: baseline, OPT, LCS")
    if not ks:
        return files + _empty(stem, "no kernel with both OPT and T_new")
    p = plt()
    fig, ax = p.subplots(figsize=(max(6, 0.3 * len(ks)), 3))
    labels = [f"{k['workload']}:{k['kernel']}" for k in ks]
    _bars(ax, labels, {"T_max": [k["t_max"] for k in ks], "OPT": [k["opt"] for k in ks],
                       "T_new": [k["t_new"] for k in ks]}, "CTAs per SM", base=None)
    for lab in ax.get_xticklabels():
        lab.set_fontsize(5)
    return files + save_figure(fig, stem)


def fig14(d: StudyData, stem: Path) -> list[Path]:
    en = {w: v.get("energy") for w, v in d.lcs.items()}
    ws = _by_type(d, en)
    savings = [1 - en[w] for w in ws]
    rows = [[w, d.type_of(w), round(en[w], 4), round(100 * (1 - en[w]), 2)] for w in ws]
    avg = sum(savings) / len(savings) if savings else None
    rows.append(["average", "", None if avg is None else round(1 - avg, 4), None if avg is None else round(100 * avg, 2)])
    files = write_table(stem, ["workload", "type", "energy LCS / GTO", "saving %"], rows,
                        "Energy of LCS normalised to GTO (ideal gating of unallocated RF and shared memory)")
    if not ws:
        return files + _empty(stem, "no energy records")
    p = plt()
    fig, ax = p.subplots(figsize=(max(6, 0.28 * len(rows)), 3))
    vals = [en[w] for w in ws] + [1 - avg]
    ax.bar(range(len(vals)), vals, 0.7, color=[TYPE_COLOURS.get(d.type_of(w)) for w in ws] + ["black"])
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels([_label(w) for w in ws] + ["average"], rotation=70, ha="right", fontsize=6)
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_ylabel("energy normalised to GTO")
    return files + save_figure(fig, stem)


def fig15(d: StudyData, stem: Path) -> list[Path]:
    rows = []
    for paper, v in d.fig15.items():
        for cfg in ("GTO", "BCS+SCA"):
            for n, perf in zip(v.get("counts", []), v.get(cfg) or []):
                rows.append([paper, v["workload"], cfg, n, None if perf is None else round(perf, 4)])
    files = write_table(stem, ["paper", "workload", "config", "CTAs/SM", "performance (norm. to GTO, 1 CTA)"], rows,
                        "Performance vs CTAs per SM with BCS+SCA")
    if not rows:
        return files + _empty(stem, "no curves")
    p = plt()
    fig, axes = p.subplots(1, len(d.fig15), figsize=(4 * len(d.fig15), 2.8))
    axes = axes if hasattr(axes, "__len__") else [axes]
    for k, (ax, (paper, v)) in enumerate(zip(axes, d.fig15.items())):
        for cfg, m in (("GTO", "o"), ("BCS+SCA", "s")):
            ys = v.get(cfg) or []
            if ys and all(y is not None for y in ys):
                ax.plot(v["counts"], ys, marker=m, label=f"{cfg} ({v.get(cfg + ' type', '-')})",
                        color=CONFIG_COLOURS[cfg])
        ax.set_title(f"({'ab'[k] if k < 2 else k}) {paper} ({v['workload']})")
        ax.set_xlabel("max CTAs per SM")
        ax.grid(linewidth=0.3, alpha=0.6)
        ax.legend(frameon=False, fontsize=6)
    axes[0].set_ylabel("performance (norm. to GTO, 1 CTA)")
    return files + save_figure(fig, stem)


def _grouped(d: StudyData, stem: Path, table: dict[str, dict], configs: list[str], title: str, ylabel: str,
             base: float | None = 1.0, mean=geomean, mean_name: str = "geomean") -> list[Path]:
    ws = [w for w in sorted(table) if any(table[w].get(c) is not None for c in configs)]
    rows = [[w, d.type_of(w)] + [table[w].get(c) for c in configs] for w in ws]
    means = []
    for c in configs:
        vals = [table[w][c] for w in ws if table[w].get(c) is not None]
        means.append(mean(vals) if vals else None)
    rows.append([mean_name, ""] + means)
    files = write_table(stem, ["workload", "type"] + configs, rows, title)
    if not ws:
        return files + _empty(stem, "no runs")
    p = plt()
    fig, ax = p.subplots(figsize=(min(16, max(6, 0.16 * (len(ws) + 1) * (len(configs) + 1))), 3))
    _bars(ax, [_label(w) for w in ws] + [mean_name], {c: [r[2 + k] for r in rows] for k, c in enumerate(configs)},
          ylabel, base)
    return files + save_figure(fig, stem)


def fig16(d: StudyData, stem: Path) -> list[Path]:
    return _grouped(d, stem, d.bcs, ["BCS+GTO", "BCS+SCA"], "BCS performance normalised to GTO (2D workloads)",
                    "performance normalised to GTO")


def fig17(d: StudyData, stem: Path) -> list[Path]:
    miss = {w: {c: v.get("l1 " + c) for c in ("GTO", "BCS+GTO", "BCS+SCA")} for w, v in d.bcs.items()}
    return _grouped(d, stem, miss, ["GTO", "BCS+GTO", "BCS+SCA"], "L1 data cache miss rate (2D workloads)",
                    "L1D miss rate", base=None, mean=lambda v: sum(v) / len(v), mean_name="average")


def fig18(d: StudyData, stem: Path) -> list[Path]:
    rows = [[m, v.get("workloads"), v.get("limits"), v.get("cke_cycles"), v.get("mcke_cycles"), v.get("speedup")]
            for m, v in d.mixes.items()]
    files = write_table(stem, ["mix", "workloads", "CTA limits (from LCS)", "CKE cycles", "mCKE cycles",
                               "mCKE / CKE"], rows, "mCKE performance normalised to CKE")
    ms = [m for m, v in d.mixes.items() if v.get("speedup") is not None]
    if not ms:
        return files + _empty(stem, "no mixes")
    p = plt()
    fig, ax = p.subplots(figsize=(5, 2.8))
    ax.bar(range(len(ms)), [d.mixes[m]["speedup"] for m in ms], 0.6, color=CONFIG_COLOURS["mCKE"])
    ax.set_xticks(range(len(ms)))
    ax.set_xticklabels(ms, rotation=30, ha="right")
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_ylabel("performance normalised to CKE")
    return files + save_figure(fig, stem)


def fig19(d: StudyData, stem: Path) -> list[Path]:
    return _grouped(d, stem, d.compare, ["TLV", "CCWS", "DYNCTA", "LCS", "LCS+BCS"],
                    "Performance normalised to GTO", "performance normalised to GTO")


# ---------------------------------------------------------------- tables

def table2(d: StudyData, stem: Path) -> list[Path]:
    rows = []
    for b in BENCHMARKS:
        c = d.curves.get(b.workload)
        rows.append([b.abbr, b.name, b.cta, b.paper_type, b.workload, d.waves.get(b.workload), c.type if c else None,
                     c.opt if c else None, c.t_max if c else None, len(c.counts) if c else None,
                     c.grid_limited if c else None, b.why])
    return write_table(stem, ["paper", "benchmark", "paper CTA", "paper type", "stand-in", "CTA waves", "our type",
                              "OPT", "T_max", "CTA counts swept", "grid-limited", "why this stand-in"], rows,
                       "The paper's benchmarks (Table 2) and their stand-ins")


def table3(d: StudyData, stem: Path) -> list[Path]:
    rows = [[m, v.get("types"), v.get("paper_ctas"), v.get("workloads"), v.get("limits"), v.get("speedup")]
            for m, v in d.mixes.items()]
    return write_table(stem, ["mix", "paper types", "paper CTAs per kernel", "stand-ins", "our CTAs per kernel (LCS)",
                              "mCKE / CKE"], rows, "Concurrent-kernel mixes (Table 3)")


def table_types(d: StudyData, stem: Path) -> list[Path]:
    rows = [[w, c.type, c.opt, c.t_max, len(c.counts), c.grid_limited] for w, c in sorted(d.curves.items())]
    rows += [[w, "missing runs", None, None, None, None] for w in d.workloads if w not in d.curves]
    return write_table(stem, ["workload", "type", "OPT", "T_max", "CTA counts swept", "grid-limited"], rows,
                       "Every built-in workload typed (rule: experiments/lcs_bcs/classify.py)")


def table_lcs(d: StudyData, stem: Path) -> list[Path]:
    rows = [[w, d.type_of(w)] + [v.get(c) for c in ("LCS", "LCS-ceil", "LCS-1SM")] for w, v in sorted(d.variants.items())]
    for name, ts in (("geomean I/II", ("I", "II")), ("geomean III/IV", ("III", "IV")), ("geomean all", TYPES + ("n/a",))):
        rows.append([name, ""] + [d.group(ts, {w: v.get(c) for w, v in d.variants.items()})
                                  for c in ("LCS", "LCS-ceil", "LCS-1SM")])
    return write_table(stem, ["workload", "type", "LCS (floor, per SM)", "LCS ceil", "LCS one SM"], rows,
                       "LCS variants normalised to GTO (§4.1 measurement on one core, §5.1 ceil)")
