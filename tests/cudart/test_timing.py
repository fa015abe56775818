"""`tlpsim exec --mode timing`: each launch simulated and recorded, the run
directory and HTML report, events measuring simulated time, and kernels on
different streams simulated together."""

from __future__ import annotations

import json
import re

import pytest

from tlpsim.config.loader import load_config
from tlpsim.report.rundir import load_run_dir

from .conftest import run_exec


@pytest.fixture(scope="module")
def matmul_run(binaries, tmp_path_factory):
    out = tmp_path_factory.mktemp("exec") / "matmul"
    r = run_exec("--mode", "timing", "--run-dir", out, binaries["matrix_mul"])
    return r, out


def test_timing_run_directory_has_one_record_per_launch_and_a_report(matmul_run):
    r, out = matmul_run
    assert r.returncode == 0, r.stderr
    assert "PASS" in r.stdout
    for name in ("params.json", "config.toml", "stats.json", "timeline.json", "versions.json", "report.html",
                 "launches.jsonl", "summary.json"):
        assert (out / name).is_file(), name
    rec = load_run_dir(out)
    assert rec["mode"] == "timing" and rec["preset"] == "gtx480" and rec["verified"]
    assert len(rec["launches"]) == len(rec["stats"]) == 1
    (launch,), (stats,) = rec["launches"], rec["stats"]
    assert launch["kernel"] == "matmul" and launch["grid"] == [3, 3, 1] and launch["block"] == [16, 16, 1]
    assert stats["cycles"] == launch["cycles"] > 0 and stats["warp_insts"] == launch["warp_instructions"]
    assert rec["program"]["exit_status"] == 0 and rec["program"]["command"][0].endswith("matrix_mul")
    page = (out / "report.html").read_text()
    assert "matmul" in page and "program exited with status 0" in page
    assert "ptx" in {p.name for p in out.iterdir()}  # the PTX the diagnostics' line numbers refer to


def test_events_measure_simulated_time(matmul_run):
    r, out = matmul_run
    (stats,) = load_run_dir(out)["stats"]
    clock = load_config("gtx480").gpu.core_clock_mhz
    ms = float(re.search(r"kernel time ([\d.]+) ms", r.stdout).group(1))
    assert ms == pytest.approx(stats["cycles"] / (clock * 1e3), abs=1e-4)


def test_timing_console_summary(matmul_run):
    r, _ = matmul_run
    assert re.search(r"0\s+matmul\s+3x3x1\s+16x16x1\s+\d+\s+2048\s+\d+\s+\d+\s+[\d.]+\s+0", r.stderr), r.stderr
    assert "1 launch(es)" in r.stderr and "cycles simulated" in r.stderr


def test_streams_run_concurrently_in_timing_mode(binaries, tmp_path):
    r = run_exec("--mode", "timing", "--run-dir", tmp_path / "run", binaries["streams_events"])
    assert r.returncode == 0 and "PASS" in r.stdout, r.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "launches.jsonl").read_text().splitlines()]
    assert [row["kernel"] for row in rows] == ["work"] * 5
    first = rows[:4]  # one launch on each of four streams, simulated as one batch
    assert len({row["stream"] for row in first}) == 4
    assert len({row["sim_start_ns"] for row in first}) == 1
    batch_end = max(row["sim_end_ns"] for row in first)
    serial = sum(row["sim_end_ns"] - row["sim_start_ns"] for row in first)
    assert batch_end - first[0]["sim_start_ns"] < serial  # overlapped, not one after another
    assert rows[4]["sim_start_ns"] == pytest.approx(batch_end, abs=1e-3)  # waited for stream 3's event
    total = float(re.search(r"all streams ([\d.]+) ms", r.stdout).group(1))
    assert total == pytest.approx(rows[4]["sim_end_ns"] / 1e6, abs=1e-4)


def test_exec_loads_an_out_of_tree_plugin_in_the_program(binaries, tmp_path):
    from pathlib import Path

    plug = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "youngest_first.py"
    out = tmp_path / "run"
    r = run_exec("--mode", "timing", "--run-dir", out, "--plugin", str(plug),
                 "--set", "sm.warp_scheduler=youngest_first", binaries["matrix_mul"])
    assert r.returncode == 0 and "PASS" in r.stdout, r.stderr
    (stats,) = load_run_dir(out)["stats"]
    assert stats["plugins"]["warp_scheduler.youngest_first"]["switches"] > 0


def test_host_threads_and_stream_callbacks_in_timing_mode(binaries, tmp_path):
    """Issue 28 §3 (simpleCallback's pattern): four host threads launch on their own streams
    and add callbacks that start threads freeing the streams; the runtime was entered from
    several threads at once and the timing model crashed (IndexError/TypeError in the issue
    stage, then cudaErrorUnknown from cudaStreamAddCallback). A fresh exec cache makes the
    threads also compute and write the ptxas resources file (the temporary-name race)."""
    import os
    import subprocess

    from .conftest import TLPSIM

    env = dict(os.environ, TLPSIM_CACHE_DIR=str(tmp_path / "cache"))
    out = tmp_path / "run"
    proc = subprocess.run([*TLPSIM, "exec", "--mode", "timing", "--run-dir", str(out), str(binaries["host_callbacks"])],
                          capture_output=True, text=True, timeout=600, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["4 workloads, 4 host functions: PASS"]
    assert "internal error" not in proc.stderr and "failed" not in proc.stderr
    rows = [json.loads(line) for line in (out / "launches.jsonl").read_text().splitlines()]
    assert sorted(row["stream"] for row in rows) == [1, 2, 3, 4] and all(row["cycles"] > 0 for row in rows)
    assert [p.suffix for p in (tmp_path / "cache" / "exec" / "resources").iterdir()] == [".json"]
