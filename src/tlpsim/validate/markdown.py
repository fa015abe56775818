"""The Markdown report of a validation record (`tlpsim.validate.runner.validate`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tlpsim.validate import stats as vstats

__all__ = ["render"]


def _pct(x: float | None, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%"


def _num(x: Any, fmt: str = ",.0f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return format(x, fmt)


def _pair(a: Any, b: Any, fmt: str) -> str:
    return f"{_num(a, fmt)} / {_num(b, fmt)}"


def _cell(s: Any) -> str:
    return str(s).replace("|", "/").replace("\n", " ")


def _r(x: float) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:.3f}"


def _util(x: float | None) -> str:
    if x is None:
        return "—"
    if x > 1:   # a utilisation above 1 is impossible (a reference value that lost its exponent)
        return f"{x:.3g}†"
    return f"{x:.3f}"


def _toolchains(v: dict, w: Any) -> None:
    """The section comparing the toolchains (`--toolchain both`): their summaries, each
    launch's error and each sweep's shape; the rest of the page is the default's."""
    recs = [v, *v["other_toolchains"]]
    names = [r["options"]["toolchain"] for r in recs]
    w("## Under both toolchains\n")
    w(f"The same selection run under each toolchain; the acceptance criteria above and the rest of this page are "
      f"those of {names[0]}, the preset's default. " + "; ".join(
          f"{r['options']['toolchain']}: {r['wall_s']:.0f} s" for r in recs) + ".\n")
    w("| toolchain | reference programs: MAE, r | microbenchmark launches: MAE, r | all launches: MAE, r | "
      "warp instructions equal to GPGPU-Sim's | microbenchmark figures within 15% | CTA sweeps matching |")
    w("|---|---|---|---|---:|---:|---:|")
    for r, tc in zip(recs, names):
        s = r["summary"]
        cells = [f"{_pct(s[k]['mae'], False)}, {_r(s[k]['pearson_r'])}" for k in ("reference", "micro", "all")]
        fails = sum(s[k]["failed"] for k in ("reference", "micro"))
        w(f"| `{tc}`{' (default)' if r is v else ''}{f' ({fails} failed)' if fails else ''} | " + " | ".join(cells)
          + f" | {s['all']['warp_insn_equal']}/{s['all']['launches']} | {s['figures']['within']}/"
          f"{s['figures']['count']} | {s['sweeps']['matched']}/{s['sweeps']['complete']} |")
    w("")
    w("Error of cycles per launch (tlpsim − GPGPU-Sim) / GPGPU-Sim:\n")
    w("| launch | GPGPU-Sim cycles | " + " | ".join(f"`{tc}`" for tc in names) + " |")
    w("|---|---:|" + "---:|" * len(names))
    by = [{row["launch"]: row for row in r["launches"]} for r in recs]
    for row in v["launches"]:
        cells = []
        for b in by:
            o = b.get(row["launch"])
            cells.append("—" if o is None or o["error"] else f"{_num(o['ours']['cycles'])} ({_pct(o['cycles_rel_err'])})")
        w(f"| {row['launch']} | {_num(row['gpgpusim']['cycles'])} | " + " | ".join(cells) + " |")
    w("")
    if v["sweeps"]:
        w("CTA-limit sweeps (best N, shape; GPGPU-Sim's first):\n")
        w("| program | GPGPU-Sim | " + " | ".join(f"`{tc}`" for tc in names) + " |")
        w("|---|---|" + "---|" * len(names))
        sw_by = [{sw["program"]: sw for sw in r["sweeps"]} for r in recs]
        for sw in v["sweeps"]:
            g = sw["gpgpusim"]
            cells = []
            for b in sw_by:
                o = b.get(sw["program"])
                if o is None or o["ours"] is None:
                    cells.append("—")
                else:
                    cells.append(f"{o['ours']['best_n']}, {o['ours']['shape']}"
                                 + ("" if o["match"] else " (**no match**)"))
            w(f"| {sw['program']} | {g['best_n']}, {g['shape']} | " + " | ".join(cells) + " |")
        w("")


def _per_n_table(sweeps: list[dict], width: int, ours_key: str, theirs_key: str, title: str,
                 cell: Callable[[Any, Any], str]) -> list[str]:
    """A table of one figure per sweep point, tlpsim's (`ours_key`) beside GPGPU-Sim's
    (`theirs_key`), or nothing when the reference has none of it."""
    if not any(x is not None for sw in sweeps for x in sw.get(theirs_key, [])):
        return []
    lines = [title + "\n", "| program | " + " | ".join(f"N={k}" for k in range(1, width + 1)) + " |",
             "|---|" + "---:|" * width]
    for sw in sweeps:
        ours, theirs = sw.get(ours_key, []), sw.get(theirs_key, [])
        n = min(len(sw["n"]), len(ours), len(theirs))
        lines.append(f"| {sw['program']} | " + " | ".join(cell(ours[k], theirs[k]) if k < n else ""
                                                         for k in range(width)) + " |")
    return lines + [""]


def mem_latency_table(sweeps: list[dict], width: int) -> list[str]:
    """The sweeps' memory latency per N, tlpsim / GPGPU-Sim's `averagemflatency`."""
    return _per_n_table(sweeps, width, "ours_mem_latency", "gpgpusim_mem_latency",
                        "Memory latency per N (core cycles per sector, tlpsim / GPGPU-Sim's `averagemflatency`):",
                        lambda a, b: _pair(a, b, ".0f"))


def _with_error(a: Any, b: Any) -> str:
    err = vstats.rel_err(a, b) if a is not None and b else None
    return f"{_num(a)} / {_num(b)} ({_pct(err)})"


def dram_reads_table(sweeps: list[dict], width: int) -> list[str]:
    """The sweeps' DRAM reads per N (32-byte sectors, tlpsim / GPGPU-Sim's `dram_reads`),
    or nothing when the reference has none: what the L2 missed, so whether it holds the
    working set as CTAs are added."""
    return _per_n_table(sweeps, width, "ours_dram_read_sectors", "gpgpusim_dram_reads",
                        "DRAM reads per N (32-byte sectors, tlpsim / GPGPU-Sim's `dram_reads`, error): what the L2 "
                        "missed, so whether it holds the working set as CTAs are added.", _with_error)


def render(v: dict, images: dict[str, str] | None = None, command: str = "") -> str:
    """The report; `images` maps "scatter"/"sweeps" to paths relative to the Markdown file."""
    t = v["tlpsim"]
    o = v["options"]
    out: list[str] = []
    w = out.append
    w("# Validation against GPGPU-Sim (GTX480)\n")
    model = f" (timing model and configs last changed in `{t['model_commit']}`)" if t.get("model_commit") else ""
    core = "compiled" if (t.get("timing_core") or {}).get("compiled") else "Python sources"
    load = v.get("loadavg_1min_start_end")
    load_s = f" (machine load average {load[0]:.1f} at the start, {load[1]:.1f} at the end)" if load else ""
    over = (", overrides " + ", ".join(f"`{k}={val}`" for k, val in o["overrides"].items())) if o["overrides"] else ""
    w(f"Produced by `{command or 'tlpsim validate'}` on tlpsim {t.get('tlpsim', '?')}, commit "
      f"`{t.get('git_commit') or 'unknown'}`{model}, finished {t.get('date', '')}; timing core: {core}. "
      f"Wall time {v['wall_s']:.0f} s with {o['workers']} worker process(es){load_s}"
      f"{'' if o['sweeps'] else ', without the CTA sweeps'}. Config `{o['config']}`{over}.\n")
    if v.get("interrupted"):
        w("**Interrupted**: the runs that had not finished are reported as not run.\n")
    from tlpsim.validate.output import toolchain_line

    w(f"Code: {toolchain_line(o)} (docs/toolchains.md).\n")
    w(f"Reference: {v['reference']['simulator'].split(',')[0] or 'GPGPU-Sim'} with the GTX480 configuration "
      f"(`{v['reference']['dir']}`), the same PTX, inputs and launches; every program checks its own output.\n")
    s = v["summary"]
    w("## Summary\n")
    w("| set | launches | MAE of cycles | Pearson r (cycles) | Pearson r (log10 cycles) | "
      "warp instructions equal to GPGPU-Sim's |")
    w("|---|---:|---:|---:|---:|---:|")
    for key, label in (("reference", "reference programs"), ("micro", "microbenchmark launches"), ("all", "all")):
        a = s[key]
        fail = f" ({a['failed']} failed)" if a["failed"] else ""
        w(f"| {label} | {a['launches']}{fail} | {_pct(a['mae'], False)} | {_r(a['pearson_r'])} | "
          f"{_r(a['pearson_r_log'])} | {a['warp_insn_equal']}/{a['launches']} |")
    w("")
    w("### Acceptance criteria (issue 18, \"Done when\")\n")
    w("| criterion | value | target | met |")
    w("|---|---:|---|---|")
    for c in v["criteria"]:
        val = c["value"]
        if isinstance(val, float):
            val = _r(val) if "Pearson" in c["criterion"] else _pct(val, False)
        met = {True: "yes", False: "**no**", None: "not evaluated"}[c["passed"]]
        w(f"| {c['criterion']} | {val} | {c['target']} | {met} |")
    w("")
    if v.get("other_toolchains"):
        _toolchains(v, w)
    if images and images.get("scatter"):
        w(f"![cycles, tlpsim against GPGPU-Sim]({images['scatter']})\n")
    w("## Per launch\n")
    w("Error = (tlpsim − GPGPU-Sim) / GPGPU-Sim cycles. Each pair is tlpsim / GPGPU-Sim.\n")
    w("| launch | cycles (tlpsim) | cycles (GPGPU-Sim) | error | IPC | L1D miss rate | L2 miss rate | "
      "DRAM utilisation | memory latency | check |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in v["launches"]:
        ours, gs = r["ours"], r["gpgpusim"]
        if r["error"]:
            w(f"| {r['launch']} | — | {_num(gs['cycles'])} | — | — | — | — | — | — | "
              f"ERROR: {_cell(r['error'])[:160]} |")
            continue
        check = {True: "PASS", False: "**FAIL**", None: "—"}[r["verified"]]
        w(f"| {r['launch']} | {_num(ours['cycles'])} | {_num(gs['cycles'])} | {_pct(r['cycles_rel_err'])} | "
          f"{_pair(ours['ipc'], gs['ipc'], '.1f')} | {_pair(ours['l1d_miss_rate'], gs['l1d_miss_rate'], '.3f')} | "
          f"{_pair(ours['l2_miss_rate'], gs['l2_miss_rate'], '.3f')} | "
          f"{_util(ours['dram_util'])} / {_util(gs['dram_util'])} | "
          f"{_pair(ours.get('avg_mem_latency'), gs.get('avg_mem_latency'), '.0f')} | {check} |")
    w("")
    if any(r["gpgpusim"]["dram_util"] is not None and r["gpgpusim"]["dram_util"] > 1 for r in v["launches"]):
        w("† GPGPU-Sim's recorded `dram_bw_util_avg` is above 1, which a utilisation cannot be (mm_naive makes "
          "~50 DRAM accesses in 228k cycles, a utilisation near 3e-05: the value apparently lost its exponent).\n")
    w("Conventions: IPC = thread instructions of active lanes whose guard held per core cycle, whole GPU. "
      "Miss rates = misses / accesses with MSHR-merged pending hits counted as accesses (GPGPU-Sim's "
      "`L1D/L2_total_cache_miss_rate`); tlpsim's L1D counts load line-accesses (— when a launch has no global "
      "load), GPGPU-Sim's counts the write-through stores too; tlpsim's L2 counts one access per request, "
      "GPGPU-Sim's one per sector. DRAM utilisation = data-bus busy cycles / DRAM cycles, mean over channels "
      "(GPGPU-Sim's `bw_util`; recorded for the reference programs and stream_copy only). Memory latency = "
      "core cycles from the L2 slice accepting a data request to its reply reaching the SM, averaged per "
      "32-byte sector (GPGPU-Sim's `averagemflatency`: its sectored L2 splits a line request into sector "
      "requests timed from their arrival; recorded for the reference programs only).\n")
    if v["figures"]:
        w("## Microbenchmark figures\n")
        w("The figures of micro/README.md: cycles per dependent op = warp 0's `%clock` cycles / 256; bytes per "
          "cycle = 2 × 8 MiB / the launch's cycles; cycles per chase step = `%clock` cycles / 4096; cycles per "
          "shared access = warp 0's `%clock` cycles / 256. tlpsim's `%clock` is the issue cycle of the reading "
          "instruction in the timing model (an execution-checker probe), as in GPGPU-Sim.\n")
        w("| launch | figure | tlpsim | GPGPU-Sim | error | within 15% | launch cycles (tlpsim / GPGPU-Sim) |")
        w("|---|---|---:|---:|---:|---|---:|")
        for f in v["figures"]:
            if f.get("error"):
                w(f"| {f['launch']} | {f['figure']} | — | {f['gpgpusim']:.3f} | — | **no** | "
                  f"ERROR: {_cell(f['error'])[:120]} |")
                continue
            w(f"| {f['launch']} | {f['figure']} | {f['ours']:.3f} | {f['gpgpusim']:.3f} | {_pct(f['rel_err'])} | "
              f"{'yes' if f['within'] else '**no**'} | {_pair(f.get('cycles'), f.get('gs_cycles'), ',.0f')} |")
        w("")
    if v["sweeps"]:
        w("## CTA-limit sweeps\n")
        w(f"Cycles as the CTAs per SM are capped at N = 1 .. the natural limit (tlpsim: `gpu.max_ctas_per_sm=N`; "
          f"GPGPU-Sim: `-gpgpu_shader_cta N`). Shape rule ({vstats.TOLERANCE:.0%} tolerance, the reference data's "
          "own classes), with best = the fewest cycles and \"within\" = at most 3% more cycles than the best: "
          "**flat** = every N within; **rises** = best at the top N, every smaller N not within; **rises then "
          "saturates** = N=1 not within and some N below the best, or the top N, within; **rises then falls** = "
          "N=1 and the top N not within; **falls** = N=1 within and the top N more than 3% slower than N=1; "
          "**irregular** = anything else. A sweep matches when the shapes are equal and the best N differ by at "
          "most 1.\n")
        if images and images.get("sweeps"):
            w(f"![CTA-limit sweeps, tlpsim and GPGPU-Sim]({images['sweeps']})\n")
        w("| program | complete | best N (tlpsim / GPGPU-Sim) | shape (tlpsim) | shape (GPGPU-Sim) | match |")
        w("|---|---|---:|---|---|---|")
        for sw in v["sweeps"]:
            g = sw["gpgpusim"]
            if sw["ours"] is None:
                w(f"| {sw['program']} | {'yes' if sw['complete'] else 'no'} | — / {g['best_n']} | — | {g['shape']} | "
                  f"ERROR: {_cell('; '.join(sw['errors']))[:160]} |")
                continue
            match = "yes" if sw["match"] else "**no**"
            w(f"| {sw['program']} | {'yes' if sw['complete'] else 'no (not judged)'} | "
              f"{sw['ours']['best_n']} / {g['best_n']} | {sw['ours']['shape']} | {g['shape']} | {match} |")
        w("")
        w("Cycles per N (tlpsim / GPGPU-Sim, error):\n")
        width = max(len(sw["n"]) for sw in v["sweeps"])
        w("| program | " + " | ".join(f"N={k}" for k in range(1, width + 1)) + " |")
        w("|---|" + "---:|" * width)
        for sw in v["sweeps"]:
            cells = []
            for k in range(width):
                if k >= len(sw["n"]):
                    cells.append("")
                    continue
                a, b = sw["ours_cycles"][k], sw["gpgpusim_cycles"][k]
                err = vstats.rel_err(a, b) if a is not None else None
                cells.append(f"{_num(a)} / {_num(b)} ({_pct(err)})")
            w(f"| {sw['program']} | " + " | ".join(cells) + " |")
        w("")
        out.extend(mem_latency_table(v["sweeps"], width))
        out.extend(dram_reads_table(v["sweeps"], width))
        bad = [sw for sw in v["sweeps"] if sw["gpgpusim"]["shape_reported"]
               and sw["gpgpusim"]["shape_reported"] != sw["gpgpusim"]["shape"]]
        if bad:
            w("Note: the shape rule above disagrees with the reference file's own label for "
              + ", ".join(f"{sw['program']} ({sw['gpgpusim']['shape_reported']})" for sw in bad) + ".\n")
    w("## Run cost\n")
    w("| program | check | functional s | timing s | job wall s | GPGPU-Sim wall s |")
    w("|---|---|---:|---:|---:|---:|")
    for p in v["programs"]:
        check = "ERROR" if p["error"] else {True: "PASS", False: "**FAIL**", None: "—"}[p["verified"]]
        part = " (some launches)" if p["partial"] else ""
        w(f"| {p['program']}{part} | {check} | {_num(p['functional_wall_s'], '.1f')} | "
          f"{_num(p['timing_wall_s'], '.1f')} | {_num(p['wall_s'], '.1f')} | {_num(p['gpgpusim_wall_s'], '.1f')} |")
    w("")
    w("Job wall time includes input generation, PTX parsing, the functional model (replayed from the trace cache "
      "when warm) and the output check; with several workers the jobs share the machine's cores, so these are "
      "not speed measurements (benchmarks/reference_kernels.py --timing measures speed).\n")
    return "\n".join(out)
