"""Where a validation record goes: its directory (validation.json with everything,
validation.md, cycles_scatter.png, cta_sweeps.png), optionally a Markdown copy
elsewhere (docs/validation.md) linking to the same figures, and the summary
printed on the console."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from tlpsim.validate import markdown, plots

__all__ = ["console_summary", "json_safe", "write"]

# a hand-written section of the --doc page (the causes of known errors, model changes)
# between these markers is kept when the page is regenerated
NOTES_BEGIN, NOTES_END = "<!-- notes: kept when tlpsim validate regenerates this page -->", "<!-- /notes -->"

FILES = {"json": "validation.json", "md": "validation.md", "scatter": "cycles_scatter.png",
         "sweeps": "cta_sweeps.png"}


def json_safe(x):
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write(v: dict, out_dir: str | Path, doc: str | Path | None = None, command: str = "") -> dict[str, Path]:
    """Write the record's files into `out_dir` (created) and, with `doc`, the Markdown
    report there too; returns {kind: path} of what was written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    _atomic(out / FILES["json"], json.dumps(json_safe({**v, "command": command}), indent=1, default=str))
    paths["json"] = out / FILES["json"]
    for kind, draw in (("scatter", plots.scatter), ("sweeps", plots.sweep_curves)):
        target = out / FILES[kind]
        if draw(v, target) is not None:
            paths[kind] = target
        elif target.exists():   # a figure of an earlier run in the same directory would mislead
            target.unlink()
    imgs = {k: FILES[k] for k in ("scatter", "sweeps") if k in paths}
    _atomic(out / FILES["md"], markdown.render(v, imgs, command))
    paths["md"] = out / FILES["md"]
    if doc:
        d = Path(doc)
        d.parent.mkdir(parents=True, exist_ok=True)
        rel = {k: os.path.relpath(out.resolve() / FILES[k], d.parent.resolve()) for k in imgs}
        notes = kept_notes(d.read_text(encoding="utf-8")) if d.is_file() else ""
        _atomic(d, markdown.render(v, rel, command) + (f"\n{notes}\n" if notes else ""))
        paths["doc"] = d
    return paths


def kept_notes(text: str) -> str:
    """The hand-written notes section of a page (markers included), or "" if it has none."""
    a = text.find(NOTES_BEGIN)
    b = text.find(NOTES_END, a + 1) if a >= 0 else -1
    return text[a:b + len(NOTES_END)] if a >= 0 and b >= 0 else ""


def _pct(x, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%"


def _r(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def toolchain_line(o: dict) -> str:
    """Which code ran (gpu.toolchain) and whether that is the preset's default."""
    tc, default = o.get("toolchain", "cuda13"), o.get("preset_toolchain", "cuda13")
    what = ("the reference's CUDA 11.8 compute_35 PTX with GPGPU-Sim's ptxas counts" if tc == "cuda11" else
            f"the reference sources compiled by CUDA 13.5 for {(o.get('compile') or {}).get('arch', 'sm_80')} "
            "with ptxas 13.5's counts")
    return (f"toolchain {tc} ({what}); "
            + ("the preset's default" if tc == default else f"the preset's default is {default}"))


def console_summary(v: dict) -> list[str]:
    """The lines printed after a run: per-launch errors, figures, sweeps, summary, criteria."""
    lines = ["", "launch                         cycles tlpsim  GPGPU-Sim     error  check"]
    for r in v["launches"]:
        if r["error"]:
            lines.append(f"{r['launch']:30s} ERROR: {r['error'][:90]}")
            continue
        check = {True: "PASS", False: "FAIL", None: "-"}[r["verified"]]
        lines.append(f"{r['launch']:30s} {r['ours']['cycles']:>13,} {r['gpgpusim']['cycles']:>10,} "
                     f"{_pct(r['cycles_rel_err']):>9s}  {check}")
    if v["figures"]:
        lines += ["", "figure                         tlpsim  GPGPU-Sim     error"]
        for f in v["figures"]:
            ours = "n/a" if f["ours"] is None else f"{f['ours']:.3f}"
            lines.append(f"{f['launch']:24s} {ours:>12s} {f['gpgpusim']:>10.3f} {_pct(f['rel_err']):>9s}  "
                         f"{f['figure']}" + ("" if f["within"] else "  (outside 15%)"))
    if v["sweeps"]:
        lines += ["", "CTA sweep          best N tlpsim/GPGPU-Sim  shape tlpsim / GPGPU-Sim"]
        for sw in v["sweeps"]:
            g = sw["gpgpusim"]
            if sw["ours"] is None:
                lines.append(f"{sw['program']:18s} incomplete: {'; '.join(sw['errors'])[:90]}")
                continue
            lines.append(f"{sw['program']:18s} {sw['ours']['best_n']:>6} / {g['best_n']:<18} "
                         f"{sw['ours']['shape']} / {g['shape']}  {'match' if sw['match'] else 'MISMATCH'}")
    s = v["summary"]
    lines += ["", toolchain_line(v["options"])]
    for key, label in (("reference", "reference programs"), ("micro", "microbenchmark launches"), ("all", "all")):
        a = s[key]
        if a["launches"] or a["failed"]:
            lines.append(f"{label}: {a['launches']} launches, MAE {_pct(a['mae'], False)}, r {_r(a['pearson_r'])}"
                         + (f", {a['failed']} failed" if a["failed"] else ""))
    lines.append("criteria (issue 18):")
    for c in v["criteria"]:
        val = c["value"]
        if isinstance(val, float):
            val = _r(val) if "Pearson" in c["criterion"] else _pct(val, False)
        met = {True: "met", False: "NOT met", None: "not evaluated"}[c["passed"]]
        lines.append(f"  {c['criterion']}: {val} (target {c['target']}): {met}")
    for o in v.get("other_toolchains", []):
        lines.append(toolchain_line(o["options"]) + " (not judged):")
        for key, label in (("reference", "reference programs"), ("micro", "microbenchmark launches"), ("all", "all")):
            a = o["summary"][key]
            if a["launches"] or a["failed"]:
                lines.append(f"  {label}: {a['launches']} launches, MAE {_pct(a['mae'], False)}, "
                             f"r {_r(a['pearson_r'])}" + (f", {a['failed']} failed" if a["failed"] else ""))
        sw = o["summary"]["sweeps"]
        if sw["complete"]:
            lines.append(f"  CTA sweeps matching: {sw['matched']}/{sw['complete']}")
    lines.append(f"wall time {v['wall_s']:.0f} s")
    return lines
