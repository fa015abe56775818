"""The figures of the HTML run report, drawn with matplotlib as inline SVG text
(no files, no network): timelines, per-SM cycle breakdown, utilisation and
energy bars."""

from __future__ import annotations

import io

CLASS_COLOURS = {"active": "#2e7d32", "idle": "#bdbdbd", "mem_stall": "#1565c0", "core_stall": "#ef6c00"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # text stays text (smaller, selectable); a fixed salt keeps the SVG ids reproducible
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "tlpsim", "font.size": 8})
    return plt


def _svg(fig) -> str:
    buf = io.StringIO()
    # no RDF metadata block: the page stays small and names no outside URLs
    fig.savefig(buf, format="svg", bbox_inches="tight",
                metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: the SVG is inlined in HTML


def timeline(stats: list[dict]) -> str | None:
    """IPC and resident warps/CTAs over time, all launches on one cycle axis."""
    cyc, ipc, warps, ctas, bounds = [], [], [], [], []
    for s in stats:
        t = s.get("timeline") or {}
        if t.get("cycle"):
            bounds.append((t["cycle"][0], s["kernel"]))
        cyc += t.get("cycle", [])
        ipc += t.get("ipc", [])
        warps += t.get("resident_warps", [])
        ctas += t.get("resident_ctas", [])
    if len(cyc) < 2:
        return None
    plt = _plt()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7.5, 4.2), sharex=True)
    a1.plot(cyc, ipc, color="#2e7d32", linewidth=1)
    a1.set_ylabel("IPC (thread inst/cycle)")
    a2.plot(cyc, warps, color="#1565c0", linewidth=1, label="resident warps")
    a2.plot(cyc, ctas, color="#ef6c00", linewidth=1, label="resident CTAs")
    a2.set_ylabel("resident (all SMs)")
    a2.set_xlabel("core cycle")
    a2.legend(frameon=False)
    if len(bounds) > 1:
        for x, _ in bounds[1:]:
            for a in (a1, a2):
                a.axvline(x, color="grey", linewidth=0.6, linestyle=":")
    for a in (a1, a2):
        a.grid(linewidth=0.3, alpha=0.6)
    return _svg(fig)


def sm_breakdown(per_sm_cycles: list[dict]) -> str:
    """Stacked bars: each SM's cycles split into ACTIVE/IDLE/MEM_STALL/CORE_STALL."""
    plt = _plt()
    n = len(per_sm_cycles)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 + 0.3 * n), 2.8))
    bottom = [0.0] * n
    for cls, colour in CLASS_COLOURS.items():
        vals = []
        for c in per_sm_cycles:
            tot = sum(c.values()) or 1
            vals.append(100.0 * c.get(cls, 0) / tot)
        ax.bar(range(n), vals, 0.8, bottom=bottom, color=colour, label=cls.upper(), edgecolor="white", linewidth=0.3)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(n))
    ax.set_xticklabels([str(k) for k in range(n)])
    ax.set_xlabel("SM")
    ax.set_ylabel("% of cycles")
    ax.set_ylim(0, 100)
    ax.legend(ncol=4, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return _svg(fig)


def hbars(values: dict[str, float], xlabel: str, percent: bool = True) -> str:
    """Horizontal bars (utilisation in %, or energy per component)."""
    plt = _plt()
    names = list(values)
    fig, ax = plt.subplots(figsize=(6.0, 0.35 * len(names) + 0.8))
    vals = [100.0 * values[k] if percent else values[k] for k in names]
    ax.barh(range(len(names)), vals, color="#5c6bc0")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if percent:
        ax.set_xlim(0, max(100.0, max(vals, default=0) * 1.05))
    for i, v in enumerate(vals):
        ax.text(v, i, f" {v:.1f}%" if percent else f" {v:.3g}", va="center", fontsize=7)
    ax.grid(axis="x", linewidth=0.3, alpha=0.6)
    return _svg(fig)


def energy_bars(values: dict[str, tuple[float, float]]) -> str:
    """Horizontal stacked bars: (dynamic, static) energy per structure, in µJ."""
    plt = _plt()
    names = list(values)
    fig, ax = plt.subplots(figsize=(6.0, 0.35 * len(names) + 0.8))
    dyn = [1e6 * values[k][0] for k in names]
    sta = [1e6 * values[k][1] for k in names]
    ax.barh(range(len(names)), dyn, color="#5c6bc0", label="dynamic")
    ax.barh(range(len(names)), sta, left=dyn, color="#c5cae9", hatch="//", label="static")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel("energy (µJ)")
    ax.legend(loc="lower right")
    return _svg(fig)
