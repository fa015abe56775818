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
    assert "warp" in bad.failures[0][2]          # the watchdog's report names the stuck CTA's warps


def test_targets_without_an_allocator_keep_the_default_workloads():
    (rep,) = check_targets([Target.plugin("warp_scheduler", "lrr")], checks=("verify",))
    assert rep.workloads == WORKLOADS and rep.ok
