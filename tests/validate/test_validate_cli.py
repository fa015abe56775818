"""`tlpsim validate` end to end on a small selection: one reference program and one
microbenchmark launch, compared with GPGPU-Sim's recorded runs; and its errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tlpsim.cli import main

REF_DIR = Path(os.environ.get("TLPSIM_REFERENCE_DIR",
                              Path(__file__).resolve().parents[3] / "shared" / "reference" / "kernels"))
needs_ref = pytest.mark.skipif(not (REF_DIR / "gpgpusim-gtx480.json").exists(),
                               reason=f"GPGPU-Sim reference data not present ({REF_DIR})")


@needs_ref
def test_validate_a_program_and_a_microbenchmark_launch(tmp_path, monkeypatch):
    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "v"
    doc = tmp_path / "docs" / "validation.md"
    res = CliRunner().invoke(main, ["validate", "--only", "histogram_atomic,smem_stride.tput.4", "--no-sweeps",
                                    "--ref-dir", str(REF_DIR), "--out", str(out), "--doc", str(doc), "--json"])
    assert res.exit_code == 0, res.output
    v = json.loads(res.stdout)
    refs = {k["name"]: k for k in json.loads((REF_DIR / "gpgpusim-gtx480.json").read_text())["kernels"]}
    micro = json.loads((REF_DIR / "micro" / "gpgpusim-gtx480-micro.json").read_text())
    gs_tput4 = next(la for la in micro["smem_stride"]["launches"]
                    if la["variant"] == "tput" and la["stride_words"] == 4)

    hist, tput = v["launches"]
    assert (hist["group"], hist["launch"], tput["group"], tput["launch"]) == (
        "reference", "histogram_atomic", "micro", "smem_stride.tput.4")
    assert hist["verified"] and tput["verified"]
    # same program, same launches: the instruction counts are GPGPU-Sim's exactly
    assert hist["ours"]["warp_insn"] == refs["histogram_atomic"]["warp_insn"]
    assert tput["ours"]["warp_insn"] == gs_tput4["warp_insn"]
    assert hist["gpgpusim"]["cycles"] == refs["histogram_atomic"]["gpu_tot_sim_cycle"]
    assert tput["gpgpusim"]["cycles"] == gs_tput4["gpu_sim_cycle"]
    for r in (hist, tput):
        assert r["cycles_rel_err"] == pytest.approx((r["ours"]["cycles"] - r["gpgpusim"]["cycles"])
                                                    / r["gpgpusim"]["cycles"])
        assert r["ours"]["ipc"] == r["ours"]["thread_insn"] / r["ours"]["cycles"]
        assert r["ours"]["thread_insn"] == r["gpgpusim"]["thread_insn"]
    assert 0 < hist["ours"]["l1d_miss_rate"] <= 1 and 0 < hist["ours"]["l2_miss_rate"] <= 1
    assert tput["ours"]["l1d_miss_rate"] is None      # no global loads: no L1D rate (not 0)
    # memory latency per sector from L2 acceptance (GPGPU-Sim's averagemflatency, recorded per program)
    assert hist["gpgpusim"]["avg_mem_latency"] == refs["histogram_atomic"]["averagemflatency"]
    assert 120 < hist["ours"]["avg_mem_latency"] < 2000   # at least the L2's ROP latency
    assert tput["gpgpusim"]["avg_mem_latency"] is None
    (fig,) = v["figures"]
    assert fig["launch"] == "smem_stride.tput.4" and fig["figure"] == "cycles per shared access"
    assert fig["gpgpusim"] == gs_tput4["cycles_per_shared_access"]
    # the figure is the %clock interval of warp 0 / 256, and that interval lies inside the launch
    assert fig["clock_reads"] == 3 and 0 < fig["clock_cycles"] < fig["cycles"]
    assert fig["ours"] == fig["clock_cycles"] / 256
    assert v["summary"]["all"]["launches"] == 2 and v["sweeps"] == []
    crit = {c["criterion"].split(",")[0]: c["passed"] for c in v["criteria"]}
    assert crit["complete CTA sweeps with the same shape and best N within +-1"] is None   # none run
    for name in ("validation.json", "validation.md", "cycles_scatter.png"):
        assert (out / name).stat().st_size > 0
    assert not (out / "cta_sweeps.png").exists()
    md = doc.read_text()
    assert f"| {hist['ours']['avg_mem_latency']:,.0f} / {refs['histogram_atomic']['averagemflatency']:,.0f} |" in md
    assert "| histogram_atomic |" in md and "| smem_stride.tput.4 | cycles per shared access |" in md
    assert "](../v/cycles_scatter.png)" in md


def test_bad_selections_and_overrides_are_user_errors(tmp_path):
    run = CliRunner().invoke
    args = ["--no-sweeps", "--out", str(tmp_path / "x")] + (["--ref-dir", str(REF_DIR)] if REF_DIR.exists() else [])
    if REF_DIR.exists():
        r = run(main, ["validate", "--only", "mm_naiv"] + args)
        assert r.exit_code == 2 and "unknown program or launch 'mm_naiv'" in r.output and "mm_naive" in r.output
        r = run(main, ["validate", "--only", "dep_chain", "--set", "sm.execution_checker=none2"] + args)
        assert r.exit_code == 2 and "sm.execution_checker" in r.output
        r = run(main, ["validate", "--only", "histogram_atomic", "--set", "sm.max_ctaz=3"] + args)
        assert r.exit_code == 2 and "sm.max_ctaz" in r.output
    r = run(main, ["validate", "--ref-dir", str(tmp_path / "nowhere"), "--out", str(tmp_path / "y")])
    assert r.exit_code == 2 and "no GPGPU-Sim reference data" in r.output
    r = run(main, ["validate", "--workers", "0"])
    assert r.exit_code == 2 and "--workers" in r.output


@needs_ref
def test_jobs_run_on_worker_processes_and_may_queue_more(tmp_path, monkeypatch):
    from tlpsim.validate.jobs import run_jobs

    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(tmp_path / "cache"))
    base = {"kind": "micro", "preset": "gtx480", "overrides": {}, "ref_dir": str(REF_DIR), "time_limit": 0}
    jobs = [{**base, "name": "smem_stride", "only": ["smem_stride.tput.1"], "cost": 1.0},
            {**base, "name": "dep_chain", "only": ["dep_chain.mad.32"], "cost": 2.0}]
    queued = []

    def on_done(res):
        if res["job"]["name"] == "dep_chain":   # one follow-up job, submitted while the pool runs
            queued.append(1)
            return [{**base, "name": "smem_stride", "only": ["smem_stride.chain.2"], "cost": 0.0}]
        return []

    got = list(run_jobs(jobs, 2, on_done))
    assert queued == [1]
    labels = sorted(la["id"] for r in got for la in r["launches"])
    assert labels == ["dep_chain.mad.32", "smem_stride.chain.2", "smem_stride.tput.1"]
    assert all(r["error"] is None and r["verified"] for r in got)
    # the probe ran in the workers too: every launch has its %clock interval for warp 0
    assert all(0 in la["clock"] and la["clock"][0] > 0 for r in got for la in r["launches"])


@needs_ref
def test_an_interrupted_validation_keeps_the_finished_runs(tmp_path, monkeypatch):
    import tlpsim.validate.runner as runner
    from tlpsim.validate.jobs import execute

    def first_then_interrupt(jobs, workers, on_done):
        res = execute(jobs[0])
        on_done(res)
        yield res
        raise KeyboardInterrupt

    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(runner, "run_jobs", first_then_interrupt)
    out = tmp_path / "v"
    res = CliRunner().invoke(main, ["validate", "--only", "smem_stride.tput.1,dep_chain.mad.32", "--ref-dir",
                                    str(REF_DIR), "--out", str(out)])
    assert res.exit_code == 130, res.output
    v = json.loads((out / "validation.json").read_text())
    assert v["interrupted"] is True
    done = [r for r in v["launches"] if r["error"] is None]
    lost = [r for r in v["launches"] if r["error"] is not None]
    assert len(done) == 1 and done[0]["ours"]["cycles"] > 0
    assert len(lost) == 1 and lost[0]["error"] == "not run (interrupted)"
    assert "**Interrupted**" in (out / "validation.md").read_text()
