"""A self-contained HTML report of one run directory: summary table, IPC and
residency over time, the per-SM ACTIVE/IDLE/MEM_STALL/CORE_STALL breakdown,
component utilisation, cache and DRAM statistics, energy, and the run's
provenance. Figures are inline SVG; the page fetches nothing and runs no script."""

from __future__ import annotations

import html
import json

from tlpsim.report import figures
from tlpsim.report.metrics import plugin_energy, plugin_totals, residency, run_metrics

UNITS = (("scheduler", "scheduler"), ("rf", "register file"), ("smem", "scratchpad (SPM)"), ("l1d", "L1D"),
         ("l2", "L2"), ("icnt_up", "crossbar SM→L2"), ("icnt_down", "crossbar L2→SM"), ("dram", "DRAM"))

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0; }
th, td { border: 1px solid #ddd; padding: .2em .55em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
.figure svg { max-width: 100%; height: auto; } .note { color: #666; font-size: .9em; }
.bad { color: #b71c1c; font-weight: bold; } .ok { color: #1b5e20; }
pre { background: #f7f7f7; padding: .6em; overflow-x: auto; font-size: .8em; }
"""


def _e(v) -> str:
    return html.escape(str(v))


def _num(v) -> str:
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return _e(v)


def _table(heads, rows) -> str:
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in heads) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_num(c)}</td>" for c in r) + "</tr>")
    return "".join(out) + "</table>"


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _figure(svg: str | None, caption: str, empty: str) -> str:
    if svg is None:
        return f'<p class="note">{_e(empty)}</p>'
    return f'<figure class="figure">{svg}<figcaption class="note">{_e(caption)}</figcaption></figure>'


def _header(rec: dict) -> str:
    if "program" in rec:
        return _program_header(rec)
    p = rec.get("params", {})
    ov = p.get("overrides") or {}
    ver = rec.get("versions", {})
    verified = rec.get("verified")
    rows = [("workload", f"{rec.get('workload')} (size {rec.get('size')}, seed {rec.get('seed')})"),
            ("mode", rec.get("mode")), ("preset", rec.get("preset", p.get("preset", "-"))),
            ("overrides", ", ".join(f"{k}={v}" for k, v in ov.items()) or "none"),
            ("run directory", rec.get("run_dir", "-")),
            ("tlpsim", f"{ver.get('tlpsim', '?')}" + (f" (commit {ver['git_commit']})" if ver.get("git_commit") else "")),
            ("CUDA toolkit", ver.get("cuda_toolkit", "-")), ("Python", ver.get("python", "-")),
            ("date", ver.get("date", "-"))]
    body = "".join(f"<tr><th>{_e(k)}</th><td style='text-align:left'>{_e(v)}</td></tr>" for k, v in rows)
    ok = ('<span class="ok">output verified</span>' if verified else '<span class="bad">output NOT verified</span>')
    return f"<table>{body}</table><p>{ok} against the NumPy reference.</p>"


def _program_header(rec: dict) -> str:
    """The header of a `tlpsim exec` run: the program, its exit status, and whatever
    made the run differ from the program's real behaviour."""
    prog, p, ver = rec["program"], rec.get("params", {}), rec.get("versions", {})
    summary = prog.get("summary") or {}
    ov = p.get("overrides") or {}
    rows = [("program", " ".join(prog.get("command", []))), ("mode", rec.get("mode")),
            ("preset", rec.get("preset", p.get("preset", "-"))),
            ("overrides", ", ".join(f"{k}={v}" for k, v in ov.items()) or "none"),
            ("plug-ins", ", ".join(p.get("plugins") or []) or "none"),
            ("kernel launches", len(rec.get("launches") or [])),
            ("run directory", rec.get("run_dir", "-")),
            ("tlpsim", f"{ver.get('tlpsim', '?')}" + (f" (commit {ver['git_commit']})" if ver.get("git_commit") else "")),
            ("CUDA toolkit", ver.get("cuda_toolkit", "-")), ("date", ver.get("date", "-"))]
    body = "".join(f"<tr><th>{_e(k)}</th><td style='text-align:left'>{_e(v)}</td></tr>" for k, v in rows)
    status = prog.get("text", "")
    notes = [f"{len(summary.get('faults') or [])} kernel fault(s)"] if summary.get("faults") else []
    notes += [f"unsupported call {n} ({c}x)" for n, c in (summary.get("unsupported") or {}).items()]
    notes += list(summary.get("problems") or [])
    cls = "ok" if prog.get("exit_status") == 0 and not notes else "bad"
    extra = "".join(f"<li>{_e(n)}</li>" for n in notes)
    return (f"<table>{body}</table><p class=\"{cls}\">{_e(status)}</p>"
            + (f"<ul class=\"bad\">{extra}</ul>" if extra else ""))


def _summary(stats: list[dict], m: dict) -> str:
    heads = ("kernel", "cycles", "warp insts", "thread insts", "IPC", "CTAs/SM (limit)", "avg warps/SM",
             "L1D hit", "L2 hit", "DRAM rd/wr", "sim s")
    rows = [[s["kernel"], s["cycles"], s["warp_insts"], s["thread_insts"], s["ipc"],
             residency(s["ctas_per_sm_limit"], s["limited_by"], s.get("peak_resident_ctas", 0),
                       s.get("peak_resident_warps", 0)), s["avg_resident_warps"], _pct(s["l1d_hit_rate"]),
             _pct(s["l2_hit_rate"]), f"{s['dram_reads']:,}/{s['dram_writes']:,}", s.get("wall_seconds", 0.0)]
            for s in stats]
    if len(stats) > 1:
        rows.append(["all launches", m["cycles"], m["warp_insts"], m["thread_insts"], m["ipc"], "-",
                     m["avg_resident_warps"], _pct(m["l1d_hit_rate"]), _pct(m["l2_hit_rate"]),
                     f"{m['dram_reads']:,}/{m['dram_writes']:,}", sum(s.get("wall_seconds", 0.0) for s in stats)])
    return _table(heads, rows)


def _per_sm_cycles(stats: list[dict]) -> list[dict]:
    n = max(len(s["per_sm"]) for s in stats)
    out = [dict.fromkeys(figures.CLASS_COLOURS, 0) for _ in range(n)]
    for s in stats:
        for k, sm in enumerate(s["per_sm"]):
            for c, v in sm["cycles"].items():
                out[k][c] = out[k].get(c, 0) + v
    return out


def _caches(stats: list[dict]) -> str:
    def tot(key):
        return sum(sm.get(key, 0) for s in stats for sm in s["per_sm"])

    comp = [s.get("components", {}) for s in stats]
    l2_acc = sum(c.get("l2_accesses", 0) for c in comp)
    l2_hit = sum(c.get("l2_hits", 0) for c in comp)
    rows_hit = sum(c.get("dram_row_hits", 0) for c in comp)
    rows_all = rows_hit + sum(c.get("dram_row_misses", 0) for c in comp)
    l1 = tot("l1d_accesses")
    rows = [("L1D", l1, tot("l1d_hits"), tot("l1d_misses"), tot("l1d_pending_hits"), tot("l1d_reservation_fails"),
             _pct(tot("l1d_hits") / l1) if l1 else "-"),
            ("L1 constant", tot("l1c_accesses"), tot("l1c_accesses") - tot("l1c_misses"), tot("l1c_misses"), "-", "-",
             _pct(1 - tot("l1c_misses") / tot("l1c_accesses")) if tot("l1c_accesses") else "-"),
            ("L2", l2_acc, l2_hit, l2_acc - l2_hit, "-", sum(sum(sl.get("reservation_fails", 0) for sl in
                                                              c.get("l2_slices", [])) for c in comp),
             _pct(l2_hit / l2_acc) if l2_acc else "-")]
    t = _table(("cache", "accesses", "hits", "misses", "pending hits", "reservation fails", "hit rate"), rows)
    dram = _table(("DRAM", "reads", "writes", "activates", "row-buffer hit rate"),
                  [("all channels", sum(c.get("dram_reads", 0) for c in comp), sum(c.get("dram_writes", 0) for c in comp),
                    sum(c.get("dram_activates", 0) for c in comp), _pct(rows_hit / rows_all) if rows_all else "-")])
    return t + dram


def _energy(rec: dict, stats: list[dict]) -> str:
    """The power model's EnergyStats (per launch) summed over the run: energy per
    structure split into dynamic and static, with shares and average power."""
    parts = [s["energy"] for s in stats if s.get("energy")]
    if not parts:
        return '<p class="note" id="energy-disabled">energy model not enabled</p>'
    dyn: dict[str, float] = {}
    sta: dict[str, float] = {}
    seconds = 0.0
    for e in parts:
        seconds += float(e.get("seconds", 0.0))
        for k, v in e.get("dynamic_j", {}).items():
            dyn[k] = dyn.get(k, 0.0) + float(v)
        for k, v in e.get("static_j", {}).items():
            sta[k] = sta.get(k, 0.0) + float(v)
    names = sorted(set(dyn) | set(sta), key=lambda k: -(dyn.get(k, 0.0) + sta.get(k, 0.0)))
    total = sum(dyn.values()) + sum(sta.values())
    svg = figures.energy_bars({k: (dyn.get(k, 0.0), sta.get(k, 0.0)) for k in names}) if names else None
    rows = [(k, f"{1e6 * dyn.get(k, 0.0):.3f}", f"{1e6 * sta.get(k, 0.0):.3f}",
             _pct((dyn.get(k, 0.0) + sta.get(k, 0.0)) / total) if total else "—") for k in names]
    rows.append(("total", f"{1e6 * sum(dyn.values()):.3f}", f"{1e6 * sum(sta.values()):.3f}", "100.0%"))
    node = ", ".join(sorted({str(e.get("technology_node", "")) for e in parts}))
    power = f"; average power {total / seconds:.2f} W over {1e6 * seconds:.1f} µs" if seconds else ""
    note = f'<p class="note">technology node {_e(node)}{power}</p>'
    return (_figure(svg, "energy per structure (dynamic solid, static hatched)", "no energy values") + note
            + _table(("structure", "dynamic µJ", "static µJ", "share"), rows))


_MAX_LAUNCH_COLUMNS = 8


def _plugins(rec: dict, stats: list[dict]) -> str | None:
    """The plug-ins section: files loaded, declared counters per launch with units,
    and the energy of the structures plug-ins add (None when there is nothing to show)."""
    info = rec.get("plugins") or {}
    selected = info.get("selected") or {}
    totals, units = plugin_totals(stats)
    energy = plugin_energy(stats, info) if any(s.get("energy") for s in stats) else []
    loaded = info.get("loaded") or []
    if not (totals or energy or loaded):
        return None
    parts = []
    if loaded:
        parts.append(_table(("plug-in loaded", "kind", "registers", "source hash"),
                            [(lp["spec"], lp["kind"], ", ".join(lp.get("registers", [])), lp.get("digest", ""))
                             for lp in loaded]))
    if totals:
        per_launch = len(stats) <= _MAX_LAUNCH_COLUMNS and len(stats) > 1
        heads = ["plug-in", "counter", "unit", "description"]
        heads += [f"#{k} {s['kernel']}" for k, s in enumerate(stats)] if per_launch else []
        heads.append("total")
        rows = []
        for key, counters in totals.items():
            desc = (selected.get(key) or {}).get("counters") or {}
            for name, v in counters.items():
                row = [key, name, units.get(key, {}).get(name, ""), (desc.get(name) or {}).get("description", "")]
                if per_launch:
                    row += [(s.get("plugins") or {}).get(key, {}).get(name, 0) for s in stats]
                rows.append(row + [v])
        parts.append('<p class="note">declared counters, summed over the plug-in\'s instances '
                     "(one per SM or scheduler); levels marked (peak) are the highest value any instance "
                     "held, (mean) its cycle-weighted mean per instance</p>" + _table(heads, rows))
    if energy:
        parts.append(_table(("energy structure", "plug-in", "accesses", "dynamic µJ", "static µJ", "source"),
                            [(n, key, int(acc), f"{1e6 * dyn:.4f}", f"{1e6 * sta:.4f}", src)
                             for n, key, acc, dyn, sta, src in energy]))
    return "".join(parts)


def render_report(rec: dict) -> str:
    """The HTML page of a run record (see rundir.load_run_dir)."""
    title = f"tlpsim report: {rec.get('workload')}" + (f" ({rec.get('size')})" if "program" not in rec else "")
    stats = rec.get("stats") or []
    parts = [f"<h1>{_e(title)}</h1>", _header(rec)]
    if not stats:
        parts.append('<p class="note">functional run: no timing statistics (run with --mode timing)</p>')
    else:
        m = run_metrics(rec)
        util = {label: m.get(f"util_{key}", 0.0) for key, label in UNITS}
        samples = sum(len((s.get("timeline") or {}).get("cycle", [])) for s in stats)
        if rec.get("sampling"):  # projected figures are marked as such, with their interval
            from tlpsim.sampling.summary import describe

            parts.append(f'<p class="note"><b>Sampled timing</b>: {_e(describe(rec["sampling"]))}. Cycle counts, '
                         "rates and counters of projected launches and waves are estimates (docs/sampling.md); "
                         "timelines cover the simulated cycles only.</p>")
        parts += [
            "<h2>Summary</h2>", _summary(stats, m),
            "<h2>IPC and resident warps/CTAs over time</h2>",
            _figure(figures.timeline(stats), "sampled every monitor.timeline_interval_cycles",
                    f"the timeline has {samples} sample(s): too few to plot; set monitor.timeline_interval_cycles "
                    "lower for a finer series"),
            "<h2>Cycle breakdown per SM</h2>",
            _figure(figures.sm_breakdown(_per_sm_cycles(stats)), "ACTIVE / IDLE / MEM_STALL / CORE_STALL cycles "
                    "of each SM (Lee et al., HPCA 2014)", ""),
            "<h2>Component utilisation</h2>",
            _figure(figures.hbars(util, "utilisation (% of sustainable peak, cycle-weighted over launches)"),
                    "achieved over sustainable throughput (GPUDuet §4.1)", ""),
            "<h2>Caches and DRAM</h2>", _caches(stats),
            "<h2>Energy</h2>", _energy(rec, stats),
        ]
        plugins = _plugins(rec, stats)
        if plugins is not None:
            parts += ['<h2 id="plugins">Plug-ins</h2>', plugins]
    if rec.get("config"):
        parts.append("<h2>Configuration</h2><details><summary>resolved config</summary><pre>"
                     f"{_e(json.dumps(rec['config'], indent=1))}</pre></details>")
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
            f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n")
