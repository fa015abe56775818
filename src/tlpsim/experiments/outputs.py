"""Writing an experiment's results: figures (PNG and SVG), tables (CSV and
Markdown), summary.json, and an HTML page with the figures and the claim table
("paper says / we measure / holds?")."""

from __future__ import annotations

import csv
import html
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tlpsim.experiments.base import Claim, Experiment, Outcome

__all__ = ["claim_rows", "fmt", "plt", "save_figure", "write_outputs", "write_table"]

CLAIM_HEADS = ("claim", "figure", "paper says", "paper", "we measure", "direction", "band x2", "holds?")


def plt():
    """matplotlib's pyplot on the file backend, with reproducible SVG output."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    pyplot.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "tlpsim", "font.size": 8,
                            "axes.spines.top": False, "axes.spines.right": False})
    return pyplot


def save_figure(fig: Any, stem: Path) -> list[Path]:
    """Write `fig` as stem.png and stem.svg and close it."""
    out = []
    for ext in ("png", "svg"):
        p = stem.with_suffix("." + ext)
        fig.savefig(p, bbox_inches="tight", dpi=150 if ext == "png" else None,
                    metadata={"Creator": None, "Date": None} if ext == "svg" else None)
        out.append(p)
    plt().close(fig)
    return out


def fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def write_table(stem: Path, heads: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> list[Path]:
    """stem.csv (raw values) and stem.md (a Markdown table, formatted)."""
    with stem.with_suffix(".csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(heads)
        for r in rows:
            w.writerow(["" if v is None else v for v in r])
    lines = ([f"**{title}**", ""] if title else []) + ["| " + " | ".join(heads) + " |",
                                                       "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(fmt(v).replace("|", "/") for v in r) + " |" for r in rows]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [stem.with_suffix(".csv"), stem.with_suffix(".md")]


def claim_rows(claims: Sequence[Claim]) -> list[list[Any]]:
    rows = []
    for c in claims:
        paper = None if c.paper is None else f"{c.paper:g}{c.unit}"
        measured = None if c.measured is None else f"{c.measured:.3g}{c.unit}"
        rows.append([c.id, c.figure, c.statement, paper, measured, fmt(c.direction), fmt(c.band), c.verdict])
    return rows


def write_outputs(exp: Experiment, data: Any, outcome: Outcome, out: Path, meta: dict) -> list[Path]:
    """Every artefact, the claim table, summary.json and index.html under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    drawn: list[tuple[Any, list[Path]]] = []
    for a in exp.artefacts:
        written = a.draw(data, out / a.name)
        files += written
        drawn.append((a, written))
    files += write_table(out / "claims", CLAIM_HEADS, claim_rows(outcome.claims), "Claims")
    from tlpsim.experiments.waves import write_waves

    waves = write_waves(exp, out / "waves")
    files += waves
    summary = {"experiment": exp.name, "title": exp.title, "paper": exp.paper, "size": exp.size,
               "code": exp.code, "written": time.strftime("%Y-%m-%d %H:%M:%S"), **meta,
               "runs": {"ran": outcome.ran, "reused": outcome.reused, "failed": len(outcome.failed),
                        "missing": outcome.missing},
               "claims": [c.to_dict() for c in outcome.claims], "numbers": exp.summary(data)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float), encoding="utf-8")
    files.append(out / "summary.json")
    (out / "index.html").write_text(_page(exp, outcome, drawn, meta, waves), encoding="utf-8")
    files.append(out / "index.html")
    return files


def _page(exp: Experiment, outcome: Outcome, drawn: list[tuple[Any, list[Path]]], meta: dict,
          waves: Sequence[Path] = ()) -> str:
    from tlpsim.report.html import _CSS, _e

    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(exp.name)}</title>"
             f"<style>{_CSS} .fail {{ color: #b71c1c; font-weight: bold; }} .pass {{ color: #1b5e20; }}"
             f" td {{ vertical-align: top; }} td:nth-child(3) {{ text-align: left; }}</style></head><body>",
             f"<h1>{_e(exp.title)}</h1><p class='note'>{_e(exp.paper)}<br>experiment <code>{_e(exp.name)}</code>, "
             f"size {_e(exp.size)}, code {_e(exp.code)}; {outcome.ran} runs simulated, {outcome.reused} reused, "
             f"{len(outcome.failed)} failed; {_e(meta.get('command', ''))}</p>",
             "<h2>Claims</h2><table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in CLAIM_HEADS) + "</tr>"]
    for c, row in zip(outcome.claims, claim_rows(outcome.claims)):
        cls = {"PASS": "pass", "FAIL": "fail"}.get(c.verdict, "")
        cells = [_e(fmt(v)) for v in row[:-1]] + [f"<span class='{cls}'>{_e(row[-1])}</span>"]
        parts.append("<tr>" + "".join(f"<td>{v}</td>" for v in cells) + "</tr>")
        if c.detail or c.note:
            parts.append(f"<tr><td></td><td colspan='{len(CLAIM_HEADS) - 1}' class='note'>"
                         f"{_e(c.detail)}{'<br>' + _e(c.note) if c.note else ''}</td></tr>")
    parts.append("</table>")
    if outcome.failed:
        parts.append("<h2>Failed runs</h2><ul>" + "".join(f"<li>{_e(f.label)}: {_e(f.error)}</li>"
                                                          for f in outcome.failed) + "</ul>")
    waves_md = [p for p in waves if p.suffix == ".md"]
    if waves_md:
        parts.append(f"<h2>CTA waves of the stand-ins</h2><p class='note'>size {_e(exp.size)} on {_e(exp.preset)}: "
                     "waves = CTAs / (SMs x max resident CTAs per SM) of each kernel's smallest launch</p>")
        parts.append(_md_table_html(waves_md[0]))
    for a, written in drawn:
        parts.append(f"<h2>{_e(a.name)}: {_e(a.title)}</h2>")
        svg = [p for p in written if p.suffix == ".svg"]
        md = [p for p in written if p.suffix == ".md"]
        if svg:
            parts.append(f"<figure class='figure'><img src='{_e(svg[0].name)}' alt='{_e(a.title)}' "
                         f"style='max-width:100%'><figcaption class='note'>{_e(a.caption)}</figcaption></figure>")
        if md and not svg:
            parts.append(_md_table_html(md[0]))
        csvs = [p.name for p in written if p.suffix == ".csv"]
        if csvs:
            parts.append("<p class='note'>data: " + ", ".join(f"<a href='{_e(n)}'>{_e(n)}</a>" for n in csvs)
                         + "</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _md_table_html(path: Path) -> str:
    rows = [ln.strip().strip("|").split(" | ") for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.startswith("|") and not ln.startswith("|---")]
    if not rows:
        return ""
    head, body = rows[0], rows[1:]
    return ("<table><tr>" + "".join(f"<th>{html.escape(h.strip())}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{html.escape(c.strip())}</td>" for c in r) + "</tr>" for r in body)
            + "</table>")
