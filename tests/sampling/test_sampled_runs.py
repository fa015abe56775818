"""Sampled timing runs end to end on tiny inputs (a 2-SM GPU holding one CTA per SM,
so a tiny grid has many waves): what is projected, what stays exact, and that full
detail is untouched."""

from __future__ import annotations

import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.sampling import SamplingSpec
from tlpsim.workloads.registry import get_workload

SMALL_GPU = {"gpu.n_sms": 2, "gpu.max_ctas_per_sm": 1}


def _run(workload: str, mode: str, tolerance: float = 0.05, **overrides):
    cfg = load_config("gtx480", {**SMALL_GPU, **overrides})
    with tlpsim.Device(mode="timing", config=cfg, sampling=SamplingSpec(mode, tolerance)):
        return get_workload(workload).execute("tiny", 1)


@pytest.fixture(scope="module")
def matadd_full():
    return _run("matadd", "off")


def test_full_detail_is_the_default_and_unchanged(matadd_full):
    (rec,) = matadd_full.launches
    assert rec.sampling is None
    cfg = load_config("gtx480", SMALL_GPU)
    with tlpsim.Device(mode="timing", config=cfg) as dev:
        res = get_workload("matadd").execute("tiny", 1)
    assert dev._timing.gpu.sampler is None and dev._timing.kernel_sampler is None
    assert res.launches[0].stats.to_dict() | {"wall_seconds": 0} == rec.stats.to_dict() | {"wall_seconds": 0}


def test_wave_sampling_projects_the_middle_and_keeps_instructions_exact(matadd_full):
    # 0.1: on this 2-SM GPU matadd's wave IPC alternates between two values 8 % apart
    # (0.88, 0.81: the SMs' waves end out of phase), which a 5 % tolerance never calls stable
    res = _run("matadd", "waves", 0.1)
    assert res.verified                                  # functional results are those of a full run
    (full,), (rec,) = matadd_full.launches, res.launches
    s = rec.sampling
    assert s["method"] == "waves"
    w = s["waves"]
    assert w["ctas_per_wave"] == 2 and w["skipped_ctas"] > 0 and w["skipped_ctas"] % 2 == 0
    # the tail (a full last wave here) ran in detail: the skip stops before it
    assert w["first_skipped_cta"] + w["skipped_ctas"] <= w["n_ctas"] - 2
    assert rec.stats.warp_insts == full.stats.warp_insts == s["warp_insts"]
    assert rec.stats.thread_insts == full.stats.thread_insts
    assert 0 < s["detail_fraction"] < 1 and s["detail_warp_insts"] < s["warp_insts"]
    assert s["cycles"] == rec.stats.cycles == s["measured_cycles"] + s["projected_cycles"]
    lo, hi = s["interval"]
    assert lo <= rec.stats.cycles <= hi
    assert abs(rec.stats.cycles - full.stats.cycles) / full.stats.cycles < 0.05
    assert lo <= full.stats.cycles <= hi                 # this launch's interval covers full detail


def test_kernel_sampling_projects_repeated_launches():
    full = _run("stencil2d", "off")
    res = _run("stencil2d", "kernels")
    recs = [r.sampling for r in res.launches]
    assert [r["method"] for r in recs] == ["detail", "detail", "kernel"]
    assert recs[0]["representative"] and recs[1]["representative"] and recs[2]["group"] == recs[0]["group"]
    first, second = res.launches[0].stats, res.launches[1].stats
    third = res.launches[2].stats
    # the first two are simulated exactly as in full detail, the third at the second's CPI
    assert [first.cycles, second.cycles] == [r.stats.cycles for r in full.launches[:2]]
    assert third.cycles == round(third.warp_insts * second.cycles / second.warp_insts)
    assert third.warp_insts == full.launches[2].stats.warp_insts
    assert recs[2]["detail_fraction"] == 0.0
    # functional warming: the projected launch's global line accesses went to the L2
    # (stencil2d's jacobi5 on the tiny grid: every warp reads 5 neighbours and writes one)
    assert recs[2]["warmed_l2_lines"] > 0 and "warmed_l2_lines" not in recs[1]


def test_non_stationary_plugin_runs_in_full_detail():
    res = _run("matadd", "waves", **{"gpu.cta_scheduler": "dyncta"})
    s = res.launches[0].sampling
    assert s["method"] == "detail" and s["detail_fraction"] == 1.0
    assert "cta_scheduler.dyncta declares non-stationary behaviour" in s["reason"]


def test_settling_plugin_is_sampled_only_after_its_last_decision():
    res = _run("matadd", "waves", 0.1, **{"gpu.cta_scheduler": "lcs"})   # 0.1: see above
    s = res.launches[0].sampling
    assert res.verified
    assert s["method"] == "waves"
    # every SM decides when its first CTA retires (wave 0 at the earliest): stability counts after it
    assert s["waves"]["stable_after_wave"] >= 3


def test_sampling_needs_timing_mode():
    with pytest.raises(tlpsim.TlpsimError, match="mode='timing'"):
        tlpsim.Device(mode="functional", sampling=SamplingSpec("waves"))


def test_cli_run_marks_sampled_figures(tmp_path):
    import json

    from click.testing import CliRunner

    from tlpsim.cli import main

    out = tmp_path / "stats.json"
    r = CliRunner().invoke(main, ["run", "stencil2d", "--size", "tiny", "--sample", "kernels", "--set", "gpu.n_sms=2",
                                  "--set", "gpu.max_ctas_per_sm=1", "--stats-out", str(out),
                                  "--run-dir", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert "sampled (kernels, tolerance 0.02)" in r.output and "simulated in detail" in r.output
    rec = json.loads(out.read_text())
    assert rec["params"]["sampling"]["mode"] == "kernels"
    assert [s["sampling"]["method"] for s in rec["stats"]] == ["detail", "detail", "kernel"]
    summ = rec["sampling"]
    assert summ["sampled"] and summ["launches"] == {"detail": 2, "kernel": 1}
    assert summ["cycles"] == sum(s["cycles"] for s in rec["stats"])
    assert summ["interval"][0] <= summ["cycles"] <= summ["interval"][1]
    from tlpsim.report.html import render_report
    from tlpsim.report.rundir import load_run_dir

    page = render_report(load_run_dir(tmp_path / "run"))
    assert "<b>Sampled timing</b>: sampled (kernels, tolerance 0.02)" in page


def test_sampled_runs_have_their_own_keys_and_full_keys_are_unchanged():
    from tlpsim.sweep.job import RunParams

    full = RunParams("matadd", "tiny", "gtx480")
    assert "sampling" not in full.to_dict()
    assert RunParams("matadd", "tiny", "gtx480", sampling={"mode": "off"}).key() == full.key()
    sampled = RunParams("matadd", "tiny", "gtx480", sampling=SamplingSpec("waves").to_dict())
    assert sampled.key() != full.key() and sampled.label().endswith("sampled=waves")
    assert RunParams.from_dict(sampled.to_dict()).key() == sampled.key()


def test_results_table_marks_sampled_runs():
    from tlpsim.sweep.table import flatten

    base = {"key": "k", "workload": "matadd", "size": "tiny", "preset": "gtx480", "seed": 1, "overrides": {},
            "status": "done", "cycles": 1000, "ipc": 1.0, "wall_seconds": 1.0, "error": None}
    assert "sampled" not in flatten({**base, "stats": {"stats": []}})
    summ = {"spec": SamplingSpec("waves").to_dict(), "interval": [950, 1040]}
    assert flatten({**base, "stats": {"stats": [], "sampling": summ}})["sampled"] == "waves [950, 1040]"


def test_experiment_runs_carry_the_sampling():
    from tlpsim.experiments.runner import make

    exp = make("lcs_bcs", "tiny")
    assert exp.params("matadd").sampling is None
    exp.sampling = SamplingSpec("waves").to_dict()
    p = exp.params("matadd", {"gpu.cta_scheduler": "lcs"})
    assert p.sampling["mode"] == "waves" and "sampled=waves" in p.label()


def test_experiment_page_says_its_runs_were_sampled():
    import types

    from tlpsim.experiments.doc import _how

    exp = types.SimpleNamespace(name="lcs_bcs", size="study", code="abc")
    run = {"wall_seconds": 60.0, "sampling": SamplingSpec("waves").label()}
    text = "\n".join(_how(exp, None, run, "tlpsim experiment run lcs_bcs --sample waves"))
    assert "**Sampled timing**: every run was sampled (waves, tolerance 0.02, K=3)" in text
    assert "verdicts are unchecked" in text
    assert "Sampled timing" not in "\n".join(_how(exp, None, {"wall_seconds": 60.0}, "tlpsim experiment run"))


def test_sampled_claims_are_compared_with_full_detail_verdicts():
    from tlpsim.experiments.base import Claim
    from tlpsim.experiments.sampled import compare_claims

    full = [Claim("a", "f1", "x", direction=True), Claim("b", "f1", "y", direction=False)]
    same = [Claim("a", "f1", "x", direction=True), Claim("b", "f1", "y", direction=False)]
    assert compare_claims(same, full) == {"status": "same", "differ": []}
    flipped = [Claim("a", "f1", "x", direction=True), Claim("b", "f1", "y", direction=True)]
    assert compare_claims(flipped, full) == {"status": "differ", "differ": ["b"]}
    assert compare_claims(same, None)["status"] == "unchecked"


def test_sampled_skip_ahead_equals_dense():
    """The wave snapshots settle sleeping components first, so the projected counters
    (not only the cycles) are those a dense run projects."""
    def stats(dense):
        cfg = load_config("gtx480", SMALL_GPU)
        with tlpsim.Device(mode="timing", config=cfg, sampling=SamplingSpec("waves", 0.05), dense=dense):
            res = get_workload("stencil2d").execute("tiny", 1)
        return [({k: v for k, v in r.stats.to_dict().items() if k != "wall_seconds"}, r.sampling)
                for r in res.launches]

    sparse, dense = stats(False), stats(True)
    # the first launch (cold caches: wave IPC 0.41, 1.03, 1.08, 0.76, ...) never settles and runs in
    # full detail; the two after it are projected
    assert [s["method"] for _, s in sparse] == ["detail", "waves", "waves"]
    assert sparse == dense
