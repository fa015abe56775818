"""The `study` size: every kernel the waves rule binds runs >= 4 CTA waves on every
paper preset (static: launch shapes from a shape-only pass, occupancy from
timing.occupancy as the timing model computes it; nothing is simulated). Re-run after
a compiler or preset change: registers per thread move the CTAs per SM."""

import numpy as np
import pytest

import tlpsim
from tlpsim.workloads import catalog as cat
from tlpsim.workloads.registry import SIZES, load_workloads
from tlpsim.workloads.study import (DOES_NOT_FIT, EXEMPT, MIN_WAVES, PAPER_PRESETS, never_fit, shortfalls,
                                   stale_exemptions, study_rows)


@pytest.fixture(scope="module")
def study():
    return study_rows()


def test_study_is_a_size():
    assert SIZES == ("tiny", "small", "study", "paper")


def test_every_kernel_runs_four_waves_on_every_paper_preset(study):
    assert set(study) == set(PAPER_PRESETS)
    assert {r.workload for r in study["gtx480"]} == set(load_workloads()), "a workload without a study launch"
    assert not shortfalls(study), "\n".join(shortfalls(study))


def test_the_kernels_that_never_fit_are_the_documented_ones(study):
    # the RF reserves the analyses' allocation where it exceeds ptxas's count (issue 25 gap 1)
    assert never_fit(study) == set(DOES_NOT_FIT)


def test_exemptions_name_kernels_of_the_suite(study):
    assert not stale_exemptions(study["gtx480"])
    assert all(why for why in EXEMPT.values())


def test_shortfalls_name_the_kernel_preset_and_numbers():
    row = cat.KernelRow("w", "k", (10, 1, 1), (256, 1, 1), 20, 0, 6, "threads", 1, "study", 1, 10, 10, 15,
                        10 / 90, 10 / 90)
    msg = shortfalls({"gtx480": [row]})
    assert msg == ["w/k on gtx480: 10 CTAs in its smallest launch = 0.11 waves of 15 SMs x 6 CTAs (threads); "
                   f"needs >= {MIN_WAVES:g}"]
    assert shortfalls({"gtx480": [row]}, min_waves=0.1) == []


@pytest.mark.parametrize("preset", ["gtx480", "maxwell_gpuduet"])
def test_catalogue_occupancy_is_the_timing_models(preset):
    """CTAs/SM of the catalogue equal what the timing model reports for the launch."""
    rows = {r.kernel: r for r in cat.catalog(preset, ["kmeans", "hotspot"], "tiny")}
    with tlpsim.Device(mode="timing", config=preset):
        launches = load_workloads()["kmeans"].execute("tiny").launches + \
            load_workloads()["hotspot"].execute("tiny").launches
    for rec in launches:
        assert rows[rec.kernel].ctas_per_sm == rec.stats.ctas_per_sm_limit, rec.kernel
        assert rows[rec.kernel].limited_by == rec.stats.limited_by, rec.kernel


def test_waves_and_ctas_of_a_multi_launch_kernel():
    """lud's internal update shrinks: the row keeps its smallest and largest launch."""
    rows = {r.kernel: r for r in cat.catalog("gtx480", ["lud"], "tiny")}
    r = rows["lud_internal"]
    n = 48 // 16  # tiny's matrix order over the 16x16 block: launches of (n-1-k)^2 CTAs
    assert (r.kernel_launches, r.ctas, r.ctas_max) == (n - 1, 1, (n - 1) ** 2)
    assert r.waves == pytest.approx(1 / (15 * r.ctas_per_sm))
    assert r.waves_max == pytest.approx((n - 1) ** 2 / (15 * r.ctas_per_sm))


def test_dry_run_records_launches_without_executing_them():
    src = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }'
    with tlpsim.Device(dry_run=True) as dev:
        x = tlpsim.zeros(64, np.float32)
        tlpsim.RawKernel(src, "k")((2, 3), (32,), (x,))
        assert (x.get() == 0).all()
    (rec,) = dev.launches
    assert (rec.grid, rec.block, rec.warp_instructions, rec.trace) == ((2, 3, 1), (32, 1, 1), 0, None)
    assert rec.resources is not None and rec.resources.registers > 0
    with pytest.raises(tlpsim.TlpsimError, match="no timing mode"):
        tlpsim.Device(mode="timing", dry_run=True)


def test_dry_run_still_checks_launches():
    src = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }'
    with tlpsim.Device(dry_run=True), pytest.raises(tlpsim.TlpsimError, match="block"):
        tlpsim.RawKernel(src, "k")((1,), (4096,), (tlpsim.zeros(4, np.float32),))


def test_a_workload_without_the_size_is_named(monkeypatch):
    from tlpsim.workloads import vecadd

    monkeypatch.delitem(vecadd.N, "study")
    cat._SHAPES.clear()
    with pytest.raises(tlpsim.TlpsimError, match="workload 'vecadd' defines no 'study' input"):
        cat.launch_shapes("vecadd", "study", "gtx480")


def test_workloads_command_shows_waves_and_measures():
    import json

    from click.testing import CliRunner

    from tlpsim.cli import main

    r = CliRunner().invoke(main, ["workloads", "vecadd", "reduction", "--size", "tiny", "--measure", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    rows = {k["kernel"]: k for k in out["kernels"]}
    assert (rows["vecadd"]["ctas"], rows["vecadd"]["ctas_per_sm"], rows["vecadd"]["limited_by"]) == (16, 6, "threads")
    assert rows["vecadd"]["waves"] == pytest.approx(16 / 90)
    m = out["measured"]["vecadd"]
    assert m["verified"] and m["kernels"]["vecadd"]["launches"] == 1 and m["kernels"]["vecadd"]["insts_share"] == 1.0
    # 16 CTAs on 15 SMs that hold 6 each: no SM is ever full
    assert m["kernels"]["vecadd"]["full_occupancy_min"] == 0.0
    shares = out["measured"]["reduction"]["kernels"]
    assert sum(k["insts_share"] for k in shares.values()) == pytest.approx(1.0)
    text = CliRunner().invoke(main, ["workloads", "reduction", "--size", "tiny"]).output
    assert "max CTAs/SM" in text and "waves" in text and "(exempt)" in text
