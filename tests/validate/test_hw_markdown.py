"""The H200 validation page's computed passages: the launch-bound table, what r hinges on,
and the sweeps left out, rendered from hand-made rows."""

from __future__ import annotations

import json
from pathlib import Path

from tlpsim.validate.hw_markdown import render
from tlpsim.validate.hw_runner import _agreement

RECORD = Path(__file__).resolve().parents[2] / "docs" / "validation-h200" / "validation.json"


def _row(kernel: str, gpu: float, ours: float, workload: str = "w", ordinal: int = 0) -> dict:
    return {"size": "small", "workload": workload, "ordinal": ordinal, "kernel": kernel, "grid": [1, 1, 1],
            "block": [256, 1, 1], "gpu_us": gpu, "tlpsim_us": ours, "tlpsim_cycles": None, "gpu_cycles": None,
            "rel_err": (ours - gpu) / gpu, "ctas_per_sm": 1, "limited_by": "threads", "verified": True,
            "error": None}


def _page(**changes) -> str:
    v = json.loads(RECORD.read_text())     # the rest of a real record; the passages tested are set here
    v.update(changes)
    v["summary"]["floor"] = _agreement(v.get("floor", []))
    return render(v)


def test_launch_bound_table_names_the_latency_and_the_error():
    page = _page(floor=[_row("one_cta", 3.0, 3.3, "gaussian", 250)],
                 options={**json.loads(RECORD.read_text())["options"], "kernel_launch_latency": 5000,
                          "core_clock_mhz": 2000.0})
    assert "## Launch-bound launches" in page
    assert "MAE 10.0%, mean signed error +10.0% over 1." in page
    assert "| gaussian | 250 | one_cta | 256×1×1 | 3.0 | 3.3 | 2.5 | +10.0% |" in page


def test_r_sensitivity_names_the_launch_r_hinges_on():
    rows = [_row("a", 10.0, 10.0), _row("b", 20.0, 20.0), _row("c", 30.0, 30.0), _row("d", 40.0, 20.0)]
    page = _page(launches=rows)
    assert ("What r hinges on: made exact, d (-50.0%) alone would raise r over all 4 launches from 0.632 to "
            "1.000;") in page
    assert "The launches span 10 to 40 µs on the GPU" in page


def test_sweeps_left_out_are_named_with_the_reason():
    page = _page(sweeps_left_out=[{"sweep": "workload:sgemm", "why": "measured at `paper`: too long"}])
    assert "Not compared: workload:sgemm (measured at `paper`: too long)." in page
