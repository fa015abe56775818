"""The baseline rules the timing model applies itself (a policy's `inline_rule`):
greedy-then-oldest warp scheduling in the issue stage and round-robin CTA dispatch
in the dispatcher. They must make exactly the choices of the policies' Python
methods, which a subclass keeps using (a subclass may override them, so it is
called as any plug-in): the same statistics, counter for counter."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.cta.round_robin import RoundRobinCTAScheduler
from tlpsim.policies.warp.gto import GreedyThenOldest
from tlpsim.workloads.registry import get_workload


class CalledGTO(GreedyThenOldest):
    """The same rule, asked through choose/order/on_issue."""


class CalledRoundRobin(RoundRobinCTAScheduler):
    """The same rule, asked through assign with the views."""


def _stats(workload: str, overrides: dict) -> list[dict]:
    cfg = load_config("gtx480", overrides)
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        res = get_workload(workload).execute("tiny")
    assert res.verified
    out = []
    for rec in res.launches:
        d = asdict(rec.stats)
        d.pop("wall_seconds")
        out.append(d)
    return out


def test_only_the_exact_baseline_classes_are_applied_inline():
    assert GreedyThenOldest(n_slots=48).inline_rule == "gto"
    assert CalledGTO(n_slots=48).inline_rule == ""
    assert RoundRobinCTAScheduler(n_sms=15).inline_rule == "round_robin"
    assert CalledRoundRobin(n_sms=15).inline_rule == ""


# vecadd on 2 SMs: more CTAs than fit, dispatched as others finish (the round-robin
# pointer and per-launch counts matter); bfs: divergent, memory-bound, scheduler choices
# that cannot issue (the policy's `order` is asked); sgemm: register-heavy, shared
# memory and barriers
@pytest.mark.parametrize("workload, overrides", [("vecadd", {"gpu.n_sms": 2}), ("bfs", {}), ("sgemm", {})])
def test_inline_rules_give_the_statistics_of_the_called_policies(plugin, workload, overrides):
    gto, rr = plugin("warp_scheduler", CalledGTO), plugin("cta_scheduler", CalledRoundRobin)
    inline = _stats(workload, overrides)
    called = _stats(workload, {**overrides, "sm.warp_scheduler": gto, "gpu.cta_scheduler": rr})
    assert inline == called
    assert sum(s["cycles"] for s in inline) > 0


BUSY = r'''extern "C" __global__ void busy(float* x, int n, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int k = 0; k < rounds; ++k) v = v * 1.0001f + 0.5f;
    x[i] = v; }'''


def _two_streams(overrides: dict) -> list[dict]:
    """Launches on two streams on 2 SMs, waiting for SMs at once: each dispatch picks
    the launch as well as the SM (the first launch's only CTA takes one SM, the second
    launch the other in the same cycle)."""
    cfg = load_config("gtx480", {"gpu.n_sms": 2, **overrides})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False) as dev:
        k = tlpsim.RawKernel(BUSY, "busy")
        a, b = tlpsim.zeros(128, np.float32), tlpsim.zeros(7 * 128, np.float32)
        s1, s2 = tlpsim.cuda.Stream(), tlpsim.cuda.Stream()
        r1 = k((1,), (128,), (a, np.int32(128), np.int32(40)), stream=s1)
        r2 = k((7,), (128,), (b, np.int32(7 * 128), np.int32(9)), stream=s2)
        dev.synchronize()
    out = []
    for rec in (r1, r2):
        d = asdict(rec.stats)
        d.pop("wall_seconds")
        out.append(d)
    return out


def test_inline_round_robin_shares_the_sms_between_concurrent_launches_as_the_policy_does(plugin):
    gto, rr = plugin("warp_scheduler", CalledGTO), plugin("cta_scheduler", CalledRoundRobin)
    inline = _two_streams({})
    assert inline == _two_streams({"sm.warp_scheduler": gto, "gpu.cta_scheduler": rr})
