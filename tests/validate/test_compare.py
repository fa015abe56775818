"""Assembling a validation from job results, on hand-made results and reference
entries: sweep rows (points, best N, shape, match, failed points), the summary and
the acceptance criteria, and the figures drawn from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tlpsim.validate import plots
from tlpsim.validate.compare import criteria, summary, sweep_rows
from tlpsim.validate.markdown import dram_reads_table
from tlpsim.validate.reference import Reference


def _ref(cycles: list[int]) -> Reference:
    pts = [{"max_ctas_per_sm": n, "cycles": c, "averagemflatency": 400 + n, "dram_reads": 1000 * n}
           for n, c in enumerate(cycles, 1)]
    return Reference(Path("."), programs={}, sweeps={"k": {"natural_cta_per_sm_limit": len(cycles),
                                                           "shape": "rises", "best_n": len(cycles), "sweep": pts}})


def _res(cycles: int | None, verified: bool = True) -> dict:
    if cycles is None:
        return {"error": "KernelError: deadlocked", "launches": []}
    return {"error": None, "verified": verified, "program": {"cycles": cycles, "ctas_per_sm_limit": 3,
                                                             "avg_mem_latency": cycles / 10,
                                                             "dram_read_sectors": 10 * cycles}}


def test_a_sweep_row_compares_both_curves():
    ref = _ref([300, 200, 100])
    (row,) = sweep_rows(ref, {"k": {1: _res(330), 2: _res(150), 3: _res(120)}})
    assert row["n"] == [1, 2, 3] and row["complete"]
    assert row["ours_cycles"] == [330, 150, 120] and row["gpgpusim_cycles"] == [300, 200, 100]
    assert row["cycles_rel_err"] == pytest.approx([0.1, -0.25, 0.2])
    assert row["ours_mem_latency"] == [33.0, 15.0, 12.0] and row["gpgpusim_mem_latency"] == [401, 402, 403]
    assert row["ours_dram_read_sectors"] == [3300, 1500, 1200] and row["gpgpusim_dram_reads"] == [1000, 2000, 3000]
    assert row["ours"] == {"shape": "rises", "best_n": 3, "smallest_n_within_3pct": 3}
    assert row["gpgpusim"]["shape"] == row["gpgpusim"]["shape_reported"] == "rises"
    assert row["match"] is True
    (other,) = sweep_rows(ref, {"k": {1: _res(120), 2: _res(100), 3: _res(101)}})
    assert other["ours"]["shape"] == "rises then saturates" and other["match"] is False


def test_the_dram_reads_table_pairs_each_point_and_leaves_gaps_empty():
    ref = _ref([300, 200, 100])
    (row,) = sweep_rows(ref, {"k": {1: _res(330), 2: _res(None), 3: _res(120)}})
    lines = dram_reads_table([row], 4)
    assert lines[1] == "| program | N=1 | N=2 | N=3 | N=4 |" and lines[-1] == ""
    assert lines[3] == "| k | 3,300 / 1,000 (+230.0%) | — / 2,000 (—) | 1,200 / 3,000 (-60.0%) |  |"
    # a reference without DRAM reads (or no sweeps) gives no table at all
    row["gpgpusim_dram_reads"] = [None, None, None]
    assert dram_reads_table([row], 3) == [] and dram_reads_table([], 3) == []


def test_a_failed_or_unchecked_point_leaves_the_sweep_unjudged():
    ref = _ref([300, 200, 100])
    (row,) = sweep_rows(ref, {"k": {1: _res(330), 2: _res(None), 3: _res(120, verified=False)}})
    assert row["ours_cycles"] == [330, None, None] and row["ours_mem_latency"] == [33.0, None, None]
    assert row["ours_dram_read_sectors"] == [3300, None, None]
    assert row["ours"] is None and row["match"] is None
    assert row["errors"][0] == "N=2: KernelError: deadlocked" and row["errors"][1].startswith("N=3: the program")
    (missing,) = sweep_rows(ref, {"k": {1: _res(330), 3: _res(120)}})
    assert missing["errors"] == ["N=2: not run"]


def _launch(group: str, ours: int, theirs: int) -> dict:
    return {"group": group, "launch": f"{group}{ours}", "ours": {"cycles": ours, "warp_insn": 7},
            "gpgpusim": {"cycles": theirs, "warp_insn": 7}, "cycles_rel_err": (ours - theirs) / theirs,
            "error": None}


def test_summary_and_criteria():
    rows = [_launch("reference", 110, 100), _launch("reference", 190, 200), _launch("micro", 1000, 1000)]
    rows.append({**_launch("micro", 5, 5), "error": "boom", "cycles_rel_err": None})
    figures = [{"rel_err": 0.1, "within": True, "ours": 1.1, "gpgpusim": 1.0},
               {"rel_err": -0.2, "within": False, "ours": 0.8, "gpgpusim": 1.0}]
    sweeps = sweep_rows(_ref([300, 200, 100]), {"k": {1: _res(330), 2: _res(150), 3: _res(120)}})
    s = summary(rows, figures, sweeps)
    assert s["reference"]["launches"] == 2 and s["reference"]["mae"] == pytest.approx(0.075)
    assert s["all"]["launches"] == 3 and s["all"]["failed"] == 1 and s["all"]["warp_insn_equal"] == 3
    assert s["all"]["mae"] == pytest.approx(0.15 / 3)
    assert s["figures"] == {"count": 2, "measured": 2, "within": 1, "mae": pytest.approx(0.15)}
    assert s["sweeps"] == {"count": 1, "complete": 1, "matched": 1, "compared": 1}
    met = [c["passed"] for c in criteria(s, rows, figures, sweeps)]
    assert met == [True, True, False, True]   # MAE 5% <= 10%, r, one figure outside 15%, the sweep matches


def test_figures_are_drawn(tmp_path):
    sweeps = sweep_rows(_ref([300, 200, 100]), {"k": {1: _res(330), 2: _res(None), 3: _res(120)}})
    rows = [_launch("reference", 110, 100), _launch("micro", 1000, 1000)]
    v = {"launches": rows, "sweeps": sweeps, "summary": summary(rows, [], sweeps)}
    assert plots.scatter(v, tmp_path / "s.png").stat().st_size > 1000
    assert plots.sweep_curves(v, tmp_path / "w.png").stat().st_size > 1000
    assert plots.sweep_curves({"sweeps": []}, tmp_path / "none.png") is None


def test_the_pages_hand_written_notes_are_kept(tmp_path, monkeypatch):
    from tlpsim.validate import output

    monkeypatch.setattr(output.markdown, "render", lambda v, imgs, cmd: "# generated\n")
    monkeypatch.setattr(output.plots, "scatter", lambda v, t: None)
    monkeypatch.setattr(output.plots, "sweep_curves", lambda v, t: None)
    doc = tmp_path / "validation.md"
    output.write({}, tmp_path / "out", doc)
    assert doc.read_text(encoding="utf-8") == "# generated\n"        # no notes: the page alone
    notes = f"{output.NOTES_BEGIN}\n## Causes\nthe L2 | set camping\n{output.NOTES_END}"
    doc.write_text("# old page\n\n" + notes + "\n\ntrailing words\n", encoding="utf-8")
    output.write({}, tmp_path / "out", doc)
    assert doc.read_text(encoding="utf-8") == "# generated\n\n" + notes + "\n"
    assert (tmp_path / "out" / "validation.md").read_text(encoding="utf-8") == "# generated\n"
    assert output.kept_notes("no markers") == "" and output.kept_notes(output.NOTES_BEGIN + " open") == ""
