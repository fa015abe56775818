"""`tlpsim validate --sampling`'s plan, comparison and page, on hand-made run records."""

from __future__ import annotations

import pytest

from tlpsim.errors import TlpsimError
from tlpsim.sampling.spec import SamplingSpec
from tlpsim.validate.sampling_page import BEGIN, END, markdown, summary, write_page
from tlpsim.validate.sampling_runs import Point, pair_row, plan, run_params


def test_plan_covers_presets_and_lcs_bcs_configurations():
    pts = plan(["matadd_16x16"])
    assert [p.label for p in pts] == ["matadd_16x16 gtx480", "matadd_16x16 maxwell_gpuduet",
                                      "matadd_16x16 tesla_m2050 GTO", "matadd_16x16 tesla_m2050 LCS",
                                      "matadd_16x16 tesla_m2050 BCS+SCA", "matadd_16x16 tesla_m2050 DYNCTA",
                                      "matadd_16x16 tesla_m2050 CCWS"]
    assert dict(pts[4].overrides) == {"gpu.cta_scheduler": "bcs", "sm.warp_scheduler": "sca"}
    assert [p.label for p in plan(["matadd_16x16"], ["LCS"])] == ["matadd_16x16 tesla_m2050 LCS"]
    with pytest.raises(TlpsimError, match="unknown workload"):
        plan(["nope"])
    with pytest.raises(TlpsimError, match="--configs: unknown LRR"):
        plan(["matadd"], ["LRR"])
    full, sampled = run_params(pts[3], "study", None), run_params(pts[3], "study", SamplingSpec("all"))
    assert full.key() != sampled.key() and full.overrides == {"gpu.cta_scheduler": "lcs"}


def test_lcs_bcs_configurations_only_where_the_experiment_runs_them():
    """The LCS/BCS points are the experiment's: its stand-ins only (matadd is not one:
    MADD's is matadd_16x16), and BCS+SCA only on 2D CTAs (montecarlo's are 256x1)."""
    assert [p.label for p in plan(["matadd"])] == ["matadd gtx480", "matadd maxwell_gpuduet"]
    assert [p.config for p in plan(["montecarlo"]) if p.config] == ["GTO", "LCS", "DYNCTA", "CCWS"]
    assert plan(["montecarlo"], ["BCS+SCA"]) == []


@pytest.mark.parametrize("config", ["GTO", "LCS", "BCS+SCA", "DYNCTA", "CCWS"])
def test_full_detail_runs_of_lcs_bcs_configurations_are_the_experiments_runs(config):
    """Keyed by the simulator's fingerprint as the experiment keys its runs, a full-detail
    validation run of an LCS/BCS configuration is the lcs_bcs experiment's run of that
    configuration: sharing a database, neither simulates it twice."""
    from tlpsim.experiments.lcs_bcs.suite import config_overrides
    from tlpsim.experiments.runner import make
    from tlpsim.sweep.fingerprint import simulator_fingerprint

    exp = make("lcs_bcs", "study")
    for wl in ("hotspot_16x16", "montecarlo"):          # a 2D and a 1D CTA shape
        point = next((p for p in plan([wl], [config])), None)
        if point is None:                              # BCS+SCA: the experiment runs it on 2D CTAs only
            assert config == "BCS+SCA" and wl == "montecarlo"
            continue
        ours = run_params(point, "study", None)
        theirs = exp.params(wl, config_overrides(config, two_d=wl != "montecarlo"))
        assert ours.simulator == simulator_fingerprint() and ours.key() == theirs.key()


def _rec(cycles, walls, wall, sampling=None):
    rec = {"stats": [{"cycles": c, "wall_seconds": w} for c, w in zip(cycles, walls)], "wall_seconds": wall,
           "verified": True}
    if sampling:
        rec["sampling"] = sampling
    return rec


def test_pair_row_error_coverage_and_speedups():
    p = Point("matadd", "gtx480", "", ())
    summ = {"cycles": 1020, "interval": [990, 1050], "detail_fraction": 0.25, "launches": {"waves": 1}}
    row = pair_row(p, ("done", None, _rec([1020], [10.0], 14.0, summ)), ("done", None, _rec([1000], [40.0], 44.0)))
    assert row["error_pct"] == pytest.approx(2.0) and row["covered"]
    assert row["timing_speedup"] == 4.0 and row["e2e_speedup"] == pytest.approx(44 / 14)
    assert row["functional_share"] == pytest.approx(4 / 44)
    missed = pair_row(p, ("done", None, _rec([1100], [10.0], 14.0, {**summ, "cycles": 1100, "interval": [1080, 1120]})),
                      ("done", None, _rec([1000], [40.0], 44.0)))
    assert not missed["covered"]
    failed = pair_row(p, ("failed", "KernelError: boom\nmore", None), ("done", None, _rec([1000], [40.0], 44.0)))
    assert failed["error"] == "KernelError: boom" and "error_pct" not in failed


def test_least_detail_the_rules_allow():
    """Waves of W = 2 SMs x 4 CTAs = 8; warm-up 1 + K 3: a launch of 100 CTAs must simulate
    the first 5 waves (4 retired, 1 resident at the first chance) and its tail of 4 CTAs:
    44 of 100; one of 40 CTAs (under 6 waves) all of it; one projected from its kernel
    group none; an exact number of waves keeps its last full wave as the tail."""
    from tlpsim.validate.sampling_runs import least_detail

    def launch(n, insts, method="waves"):
        st = {"warp_insts": insts, "ctas_per_sm_limit": 4, "per_sm": [{}, {}], "sampling": {"method": method}}
        return st, {"grid": [n, 1, 1]}

    spec = {"spec": {"warmup_waves": 1, "window": 3}}
    parts = [launch(100, 1000), launch(40, 400), launch(100, 1000, "kernel")]
    rec = {"stats": [s for s, _ in parts], "launches": [la for _, la in parts], "sampling": spec}
    assert least_detail(rec) == pytest.approx((440 + 400 + 0) / 2400)
    exact = launch(96, 960)
    assert least_detail({"stats": [exact[0]], "launches": [exact[1]], "sampling": spec}) == pytest.approx(48 / 96)
    wider = {"spec": {"warmup_waves": 2, "window": 4}}      # 7 waves + the tail of 4 CTAs
    assert least_detail({"stats": [parts[0][0]], "launches": [parts[0][1]], "sampling": wider}) == pytest.approx(
        0.60)


def test_page_summary_and_partial_notice(tmp_path):
    p = Point("matadd", "gtx480", "", ())
    summ = {"cycles": 1020, "interval": [990, 1050], "detail_fraction": 0.25, "launches": {"waves": 1}}
    rows = [pair_row(p, ("done", None, _rec([1020], [10.0], 14.0, summ)), ("done", None, _rec([1000], [40.0], 44.0))),
            pair_row(p, ("done", None, _rec([990], [20.0], 24.0, {**summ, "cycles": 990})),
                     ("done", None, _rec([1000], [40.0], 44.0)))]
    s = summary(rows)
    assert s["mean_abs_error_pct"] == pytest.approx(1.5) and s["max_abs_error_pct"] == pytest.approx(2.0)
    assert s["coverage"] == 1.0 and s["timing_speedup_geomean"] == pytest.approx((4 * 2) ** 0.5)
    assert s["detail_speedup_geomean"] == pytest.approx(4.0)   # a quarter of each run in detail
    text = markdown(rows, 10, "study", SamplingSpec("all"), "tlpsim validate --sampling", 60.0, "figures/x.png")
    assert "**Partial**: 2 of the 10 planned points" in text and "about 0.2 CPU-hours" in text
    doc = tmp_path / "sampling.md"
    doc.write_text("# Title\n\nprose\n\n" + BEGIN + "\nold\n" + END + "\n\nafter\n")
    write_page(doc, text)
    out = doc.read_text()
    assert out.startswith("# Title\n\nprose") and out.rstrip().endswith("after") and "old" not in out


def test_a_run_another_process_stored_meanwhile_is_not_simulated_again(tmp_path, monkeypatch):
    """The validation lists what is missing once, then checks each run again just before
    simulating it: one an experiment sharing the database stored meanwhile is skipped."""
    import tlpsim.sweep.job as job
    from tlpsim.sweep.store import ResultsDB
    from tlpsim.validate.sampling_runs import run_validation

    spec = SamplingSpec("waves")
    pts = plan(["vecadd"], ["GTO"])
    sampled, full = run_params(pts[0], "tiny", spec), run_params(pts[0], "tiny", None)
    calls = []

    def fake_run_job(params, device_options=None):
        calls.append(params)
        res = {"key": job.RunParams.from_dict(params).key(), "params": params, "status": "failed",
               "error": "not simulated", "started": 0.0, "finished": 1.0}
        with ResultsDB(tmp_path / "v.db") as other:     # "another process" stores the full run meanwhile
            other.put("lcs_bcs", {"key": full.key(), "params": full.to_dict(), "status": "failed",
                                  "error": "by the experiment", "started": 0.0, "finished": 1.0})
        return res

    monkeypatch.setattr(job, "run_job", fake_run_job)
    lines = []
    run_validation(str(tmp_path / "v.db"), "tiny", spec, ["vecadd"], echo=lines.append, configs=["GTO"],
                   export=str(tmp_path / "kept"))
    assert [job.RunParams.from_dict(c).key() for c in calls] == [sampled.key()]
    assert (tmp_path / "kept" / f"{sampled.key()}.json.gz").is_file()     # --export: kept as it was stored
    assert any("stored meanwhile" in ln for ln in lines), lines


@pytest.mark.parametrize("runs", ["full", "sampled"])
def test_runs_picks_which_run_of_each_point_is_simulated(tmp_path, monkeypatch, runs):
    import tlpsim.sweep.job as job
    from tlpsim.validate.sampling_runs import run_validation

    spec = SamplingSpec("waves")
    pts = plan(["vecadd"], ["GTO"])
    want = run_params(pts[0], "tiny", spec if runs == "sampled" else None)
    calls = []

    def fake_run_job(params, device_options=None):
        calls.append(params)
        return {"key": job.RunParams.from_dict(params).key(), "params": params, "status": "failed",
                "error": "not simulated", "started": 0.0, "finished": 1.0}

    monkeypatch.setattr(job, "run_job", fake_run_job)
    lines = []
    run_validation(str(tmp_path / "v.db"), "tiny", spec, ["vecadd"], echo=lines.append, configs=["GTO"], runs=runs)
    assert [job.RunParams.from_dict(c).key() for c in calls] == [want.key()]
    assert f"({runs} runs only)" in lines[0]
    with pytest.raises(TlpsimError, match="--runs must be one of"):
        run_validation(str(tmp_path / "v.db"), "tiny", spec, ["vecadd"], echo=lines.append, runs="half")


def test_least_detail_share_of_one_launch():
    from tlpsim.sampling.rule import least_detail_share

    assert least_detail_share(100, 8, 1, 3) == pytest.approx(0.44)     # 5 waves of 8 + a tail of 4
    assert least_detail_share(96, 8, 1, 3) == pytest.approx(0.5)       # the last full wave is the tail
    assert least_detail_share(47, 8, 1, 3) == 1.0                      # under 6 waves: all of it
    assert least_detail_share(48, 8, 1, 3) == 1.0                      # 6 waves: everything is needed
    assert least_detail_share(10, 0, 1, 3) == 1.0
