"""The conformance harness exercises allocators that admit more CTAs than the
baseline: a target choosing a resource allocator is also run on spmv, whose grid
fills every SM at `tiny`; an allocator whose bug shows only beyond the baseline's
occupancy fails there (and passed the default workloads unnoticed)."""

from __future__ import annotations

from pathlib import Path

from tlpsim.testing import CAPACITY_WORKLOADS, WORKLOADS, Target, check_targets

ALLOCATORS = str(Path(__file__).with_name("capacity_allocators.py"))


def test_capacity_workloads_admit_extra_ctas_and_catch_a_bug_that_only_shows_there():
    good, bad = check_targets([Target.plugin("resource_allocator", "double_capacity"),
                               Target.plugin("resource_allocator", "stranded_extra",
                                             overrides={"monitor.watchdog_cycles": 3000})],
                              plugins=[ALLOCATORS], checks=("verify", "terminates", "dense", "invariants"))
    assert good.workloads == bad.workloads == WORKLOADS + CAPACITY_WORKLOADS == WORKLOADS + ("spmv",)
    assert good.ok, good.summary()
    # the default workloads never fill an SM at tiny: only spmv goes beyond the baseline
    assert all(good.extra_ctas[w] == 0 for w in WORKLOADS) and good.extra_ctas["spmv"] > 0
    assert "CTAs beyond the baseline's limit on spmv +" in good.summary()
    assert [(w, c) for w, c, _ in bad.failures] == [("spmv", "terminates")], bad.summary()
    assert "deadlocked" in bad.failures[0][2]     # the stranded CTA never runs: the deadlock report


def test_targets_without_an_allocator_keep_the_default_workloads():
    (rep,) = check_targets([Target.plugin("warp_scheduler", "lrr")], checks=("verify",))
    assert rep.workloads == WORKLOADS and rep.ok


def test_console_and_report_show_the_peak_resident_ctas_and_warps_beyond_the_limit(tmp_path):
    import json
    import re

    from plugin_helpers import cli

    args = ("run", "spmv", "--size", "tiny", "--plugin", ALLOCATORS, "--set", "sm.resource_allocator=double_capacity")
    out = cli(*args, "--run-dir", "r", cwd=tmp_path).stdout
    stats = json.loads((tmp_path / "r" / "stats.json").read_text())["stats"]
    vector = stats[-1]                 # spmv_csr_vector: 128 CTAs of 8 warps, 2 per SM by registers
    assert vector["ctas_per_sm_limit"] == 2 and vector["limited_by"] == "regs"
    peak, warps = vector["peak_resident_ctas"], vector["peak_resident_warps"]
    # twice the registers: 65536 // (61 x 256) = 4 CTAs, 32 warps (the baseline: 32768 // 15616 = 2;
    # 61 registers: ptxas 11.8's count, gtx480's toolchain)
    assert peak == 4 and warps == 4 * 8 == max(s["peak_resident_warps"] for s in vector["per_sm"])
    assert re.search(rf"spmv_csr_vector\s+{peak} peak, {warps} warps \(2 regs\)", out), out
    cli("report", "r", "-o", "r.html", cwd=tmp_path)
    assert f"{peak} peak, {warps} warps (2 regs)" in (tmp_path / "r.html").read_text()
