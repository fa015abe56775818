"""Run directories written by `tlpsim run`, and the progress line."""

from __future__ import annotations

import io
import json

from report_helpers import run_cli
from rich.console import Console

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.frontend.toolkit import toolkit_version
from tlpsim.policies.registry import EXTENSION_POINTS
from tlpsim.report.progress import RunProgress
from tlpsim.report.rundir import FILES, load_run_dir
from tlpsim.workloads.registry import get_workload


def test_run_directory_holds_config_stats_timeline_versions(run_dir):
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(FILES)
    rec = json.loads((run_dir / "stats.json").read_text())
    params = json.loads((run_dir / "params.json").read_text())
    code = params.pop("code")  # the hash of the source of the plug-in each extension point selects
    assert params == {"workload": "reduction", "size": "tiny", "preset": "gtx480", "seed": 1, "mode": "timing",
                      "overrides": {"monitor.timeline_interval_cycles": "100"}}
    assert sorted(code) == sorted(EXTENSION_POINTS) and all(len(v) == 16 for v in code.values())
    # the resolved config reads back equal, override included
    cfg = load_config(str(run_dir / "config.toml"))
    assert cfg.to_dict() == rec["config"]
    assert cfg.monitor.timeline_interval_cycles == 100
    timeline = json.loads((run_dir / "timeline.json").read_text())
    assert [t["kernel"] for t in timeline] == [s["kernel"] for s in rec["stats"]] == ["reduce_partial", "reduce_final"]
    assert all({k: v for k, v in t.items() if k != "kernel"} == s["timeline"] for t, s in zip(timeline, rec["stats"]))
    assert len(timeline[0]["cycle"]) > 5
    v = json.loads((run_dir / "versions.json").read_text())
    assert v["tlpsim"] == tlpsim.__version__ and v["cuda_toolkit"] == toolkit_version()
    assert set(v["packages"]) >= {"numpy", "pydantic", "matplotlib"}
    assert load_run_dir(run_dir)["params"] == {**params, "code": code}


def test_default_run_directories_are_never_overwritten(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        res = run_cli("run", "vecadd", "--size", "tiny", "--mode", "timing")
        assert res.exit_code == 0, res.output
    dirs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(dirs) == 2
    assert dirs[0].startswith("vecadd-tiny-gtx480-") and dirs[1] == dirs[0] + ".2"
    assert all((tmp_path / "runs" / d / "stats.json").is_file() for d in dirs)


def test_explicit_run_dir_that_holds_a_run_is_refused_before_simulating(run_dir):
    before = (run_dir / "stats.json").read_bytes()
    res = run_cli("run", "vecadd", "--size", "tiny", "--mode", "timing", "--run-dir", str(run_dir))
    assert res.exit_code == 2
    assert f"run directory {run_dir} exists and is not empty" in res.output
    assert (run_dir / "stats.json").read_bytes() == before


def test_progress_line_shows_cycles_and_instructions():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=200)
    cfg = load_config("gtx480", {"monitor.timeline_interval_cycles": 100})
    with tlpsim.Device(mode="timing", config=cfg) as dev:
        with RunProgress(dev, "vecadd", delay=0, console=console):
            get_workload("vecadd").execute("tiny")
        tl = dev._timing.gpu.timeline
        assert tl.on_sample is None  # removed again after the run
    assert tl.samples["cycle"][-1] >= 500 and tl.samples["warp_insts"][-1] > 0
    text = buf.getvalue()
    assert f"vecadd: cycle {tl.samples['cycle'][-1]:,} | {tl.samples['warp_insts'][-1]:,} warp insts" in text


def test_progress_stays_silent_on_short_runs_and_off_terminals():
    for console, delay in ((Console(file=io.StringIO(), force_terminal=True), 60.0),
                           (Console(file=io.StringIO(), force_terminal=False), 0.0)):
        with tlpsim.Device(mode="timing", config="gtx480") as dev, RunProgress(dev, "vecadd", delay=delay,
                                                                               console=console):
            get_workload("vecadd").execute("tiny")
        assert console.file.getvalue() == ""


def test_the_timing_table_shows_each_launchs_l1(tmp_path, monkeypatch):
    """`tlpsim run`'s table names the L1 each launch had: fixed on gtx480 (16 KiB), what
    the carveout leaves on h200 (vecadd: 8 CTAs of 1 KiB reserve, the 8 KiB carveout)."""
    monkeypatch.chdir(tmp_path)
    for config, kib in (("gtx480", 16), ("h200", 248)):
        res = run_cli("run", "vecadd", "--size", "tiny", "--mode", "timing", "--config", config)
        assert res.exit_code == 0, res.output
        lines = res.output.splitlines()
        head = next(ln for ln in lines if "L1D KiB" in ln)
        row = lines[lines.index(head) + 1]                    # the one launch
        at = head.index("L1D KiB")
        assert row[at:at + len("L1D KiB")].strip() == str(kib), (head, row)
        # h200 counts GPGPU-Sim's launch latency in each launch's cycles, and says so under the table
        said = [ln for ln in lines if "launch latency" in ln]
        assert said == ([] if config == "gtx480" else [
            "each launch's cycles include its launch latency, 5000 cycles before its first CTA "
            "(gpu.kernel_launch_latency; 5000 of the total)"])
