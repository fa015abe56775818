"""docs/sampling.md: the sampling validation's table, scatter plot and summary (`sampling_runs`)."""

from __future__ import annotations

import math
from pathlib import Path

from tlpsim.sampling.spec import SamplingSpec

BEGIN = "<!-- BEGIN GENERATED: tlpsim validate --sampling -->"
END = "<!-- END GENERATED -->"


def summary(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error_pct" in r]
    errs = [abs(r["error_pct"]) for r in ok]
    sp = [r["timing_speedup"] for r in ok if math.isfinite(r["timing_speedup"]) and r["timing_speedup"] > 0]
    e2e = [r["e2e_speedup"] for r in ok if math.isfinite(r["e2e_speedup"]) and r["e2e_speedup"] > 0]
    geo = (lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan"))
    return {"pairs": len(ok), "failed": len(rows) - len(ok),
            "mean_abs_error_pct": sum(errs) / len(errs) if errs else float("nan"),
            "max_abs_error_pct": max(errs) if errs else float("nan"),
            "coverage": sum(r["covered"] for r in ok) / len(ok) if ok else float("nan"),
            "timing_speedup_geomean": geo(sp), "e2e_speedup_geomean": geo(e2e),
            "detail_fraction_mean": sum(r["detail_fraction"] for r in ok) / len(ok) if ok else float("nan"),
            "least_detail_mean": sum(r["least_detail"] for r in ok) / len(ok) if ok else float("nan"),
            "bound_geomean": geo([1 / r["least_detail"] for r in ok if r["least_detail"] > 0]),
            # what the detail share alone implies (warp instructions, not seconds): the host's load,
            # which changes a wall-time ratio of runs taken at different times, does not enter it
            "detail_speedup_geomean": geo([1 / r["detail_fraction"] for r in ok if r["detail_fraction"] > 0]),
            "cpu_s": sum(r["e2e_full_s"] + r["e2e_sampled_s"] for r in ok)}


def scatter(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if "error_pct" in r]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for covered, colour, name in ((True, "tab:blue", "interval covers full detail"),
                                  (False, "tab:red", "interval misses")):
        pts = [r for r in ok if r["covered"] == covered]
        if not pts:
            continue
        x = [max(r["timing_speedup"], 1e-3) for r in pts]
        y = [r["error_pct"] for r in pts]
        lo = [(r["sampled_cycles"] - r["low"]) / r["full_cycles"] * 100 for r in pts]
        hi = [(r["high"] - r["sampled_cycles"]) / r["full_cycles"] * 100 for r in pts]
        ax.errorbar(x, y, yerr=[lo, hi], fmt="o", color=colour, ms=4, capsize=2, label=name)
    ax.axhline(0, color="grey", lw=0.8)
    for t in (-2, 2):
        ax.axhline(t, color="grey", lw=0.6, ls="--")
    ax.set_xscale("log")
    from matplotlib.ticker import FuncFormatter

    fmt = FuncFormatter(lambda v, _: f"{v:g}×")
    ax.xaxis.set_major_formatter(fmt)
    ax.xaxis.set_minor_formatter(fmt)
    ax.set_xlabel("speed-up of the timing phase (full / sampled)")
    ax.set_ylabel("cycle error of the sampled run (%)")
    ax.set_title("Sampled vs full detail: error and its interval per run")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def markdown(rows: list[dict], planned: int, size: str, spec: SamplingSpec, command: str, wall_s: float,
             figure: str) -> str:
    s = summary(rows)
    done = s["pairs"] + s["failed"]
    per_pair = s["cpu_s"] / s["pairs"] if s["pairs"] else float("nan")
    lines = [BEGIN, "",
             f"Made by `{command}`: size `{size}`, {spec.label()}; this session's wall time {wall_s:.0f} s; the "
             f"stored runs shown took {s['cpu_s']:.0f} s of wall time in all ({s['cpu_s'] / 3600:.1f} h summed over "
             "the runs; each run is one process). Speed-ups are ratios of wall times of a run's two "
             "simulations, which ran at different times and, on a shared host, under different loads; the "
             "speed-up the detail share implies counts warp instructions instead and does not depend on the load.",
             ""]
    if done < planned:
        lines += [f"**Partial**: {done} of the {planned} planned points (workload x configuration) are done; "
                  f"the figures below describe those only and are not the validation's result. At the "
                  f"{per_pair:.0f} CPU-seconds per point measured here (both runs), the whole plan needs about "
                  f"{per_pair * planned / 3600:.1f} CPU-hours (study points of deep workloads take longer than "
                  f"the small subset measured). `tlpsim validate --sampling --doc docs/sampling.md` continues the whole "
                  f"plan (add `--session-limit SECONDS` to stop in time): finished runs are kept and skipped.", ""]
    lines += ["| | measured | target |", "|---|---|---|",
              f"| mean \\|cycle error\\| | {s['mean_abs_error_pct']:.2f} % | ≤ 2 % |",
              f"| max \\|cycle error\\| | {s['max_abs_error_pct']:.2f} % | ≤ 5 % |",
              f"| interval covers full detail | {s['coverage'] * 100:.0f} % of {s['pairs']} runs | ≥ 90 % |",
              f"| timing-phase speed-up (geomean) | {s['timing_speedup_geomean']:.2f}× | ≥ 5× at study |",
              f"| end-to-end speed-up (geomean) | {s['e2e_speedup_geomean']:.2f}× | (reported) |",
              f"| speed-up the detail share implies (geomean of 1 / detail) | {s['detail_speedup_geomean']:.2f}× | |",
              f"| warp instructions simulated in detail (mean) | {s['detail_fraction_mean'] * 100:.1f} % | |",
              f"| least detail the rules allow (mean) | {s['least_detail_mean'] * 100:.1f} % | |",
              f"| timing-phase speed-up the rules allow at most (geomean) | {s['bound_geomean']:.2f}× | |",
              "", f"![sampled vs full]({figure})", "",
              "| workload | preset | config | full cycles | sampled cycles | error | interval | covered | detail "
              "| least detail | timing full s | timing sampled s | timing speed-up | functional share "
              "| end-to-end speed-up | launches |",
              "|---|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error_pct" not in r:
            lines.append(f"| {r['workload']} | {r['preset']} | {r['config']} | failed: {r.get('error', '')} "
                         "| | | | | | | | | | | |")
            continue
        launches = ", ".join(f"{k} {v}" for k, v in sorted(r["sampled_launches"].items()))
        lines.append(f"| {r['workload']} | {r['preset']} | {r['config']} | {r['full_cycles']} | "
                     f"{r['sampled_cycles']} | {r['error_pct']:+.2f} % | [{r['low']}, {r['high']}] | "
                     f"{'yes' if r['covered'] else '**no**'} | {r['detail_fraction'] * 100:.0f} % | "
                     f"{r['least_detail'] * 100:.0f} % | "
                     f"{r['timing_full_s']:.1f} | {r['timing_sampled_s']:.1f} | {r['timing_speedup']:.2f}× | "
                     f"{r['functional_share'] * 100:.0f} % | {r['e2e_speedup']:.2f}× | {launches} |")
    lines += ["", END]
    return "\n".join(lines)


def write_page(doc: Path, generated: str) -> Path:
    """Replace the generated part of `doc` (between the markers), keeping the rest."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + generated + tail
    else:
        text = (text.rstrip() + "\n\n" if text else "# Sampled simulation\n\n") + generated + "\n"
    doc.write_text(text, encoding="utf-8")
    return doc
