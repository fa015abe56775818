"""Lazy CTA scheduling (Lee et al. HPCA'14 §4.1): Eq. 1 and the throttle decisions,
on hand-made CTA views and a recording port."""

from __future__ import annotations

import pytest
from fakes import FakeGPUPort, SMState, cta, dispatch, kernel

from tlpsim.config.loader import load_config
from tlpsim.policies.cta.lazy import LazyThrottle, PhaseOneTrace, eq1
from tlpsim.policies.cta.lcs import LazyCTAScheduler, LCSParams
from tlpsim.policies.registry import resolve
from tlpsim.timing.plugin import PluginCounts
from tlpsim.timing.views import KernelInfo


def test_eq1_floor_and_ceil():
    # Fig. 7(b): CTA0 finished with 4 instructions, CTA1 and CTA2 issued 3, CTA3 none.
    # Eq. 1 as printed (floor) gives 10/4 -> 2; the text's "floor(10/4) = 3" is what the
    # ceil variant of §5.1 gives.
    assert eq1([4, 3, 3, 0]) == 2
    assert eq1([4, 3, 3, 0], "ceil") == 3
    assert eq1([100, 100, 100, 100]) == 4            # Type I: every CTA progressed equally
    assert eq1([100, 100, 100, 100], "ceil") == 4
    assert eq1([90, 100, 10, 0, 0]) == 2             # 200 / 100
    assert eq1([7]) == 1 and eq1([0, 0]) == 1        # never below one CTA
    with pytest.raises(ValueError):
        eq1([])


def _throttle(scope="per_sm", rounding="floor", n_sms=3):
    port = FakeGPUPort(n_sms)
    counts = PluginCounts(LazyCTAScheduler.counters)
    return LazyThrottle(port, counts, rounding, scope, monitor_sm=1), port, counts


def test_throttle_decides_once_per_sm_and_kernel_from_that_sms_ctas():
    t, port, counts = _throttle()
    retired = cta(sm=0, index=0, insts=400)
    others = [cta(0, 3, 300), cta(0, 6, 100), cta(0, 9, 0), cta(0, 12, 250, kid=1)]  # kid 1 is another kernel
    assert t.on_retired(retired, others) == 2                     # (400 + 300 + 100 + 0) / 400
    assert port.sm(0).limits == {0: 2} and port.sm(1).limits == {}
    assert t.on_retired(cta(0, 3, 500), []) is None              # phase 1 is over on SM 0
    assert t.on_retired(cta(2, 2, 10), [cta(2, 5, 10)]) == 2      # SM 2 decides for itself
    assert port.sm(2).limits == {0: 2}
    assert counts.as_dict() == {"decisions": 2, "t_new_sum": 4, "t_max_sum": 6, "throttled": 1}
    t.forget(0)
    assert all(p.limits[0] is None for p in port.sms)
    assert t.on_retired(cta(0, 20, 5), []) == 1                   # a new launch with the same id decides anew


def test_throttle_reports_its_last_decision_point_once_every_sm_has_decided():
    t, port, _ = _throttle()                          # 3 SMs, per-SM scope
    t.on_retired(cta(0, 0, 100), [])
    t.on_retired(cta(1, 1, 100), [])
    assert port.settled_kids == []                    # SM 2 still in phase 1: not stationary yet
    t.on_retired(cta(2, 2, 100), [cta(2, 5, 100)])
    assert port.settled_kids == [0]                   # wave sampling may count stable waves from here
    t1, port1, _ = _throttle(scope="one_sm")
    t1.on_retired(cta(1, 1, 100), [])                 # the monitor SM decides for all
    assert port1.settled_kids == [0]


def test_one_sm_scope_measures_on_the_monitor_sm_and_applies_everywhere():
    t, port, counts = _throttle(scope="one_sm")
    assert t.on_retired(cta(0, 0, 100), [cta(0, 3, 100)]) is None  # SM 0 does not measure
    assert t.on_retired(cta(1, 1, 100), [cta(1, 4, 100), cta(1, 7, 50)]) == 2
    assert [p.limits for p in port.sms] == [{0: 2}] * 3
    assert t.decided(2, 0) and t.on_retired(cta(2, 2, 100), []) is None
    assert counts.decisions == 1


def test_ceil_rounding_keeps_one_more_cta():
    t, port, _ = _throttle(rounding="ceil")
    assert t.on_retired(cta(0, 0, 400), [cta(0, 3, 300), cta(0, 6, 100)]) == 2   # 800/400 exactly
    assert t.on_retired(cta(1, 1, 400), [cta(1, 4, 300), cta(1, 7, 150)]) == 3   # 850/400 -> 3


def _info(kid=0, name="k"):
    return KernelInfo(kid, name, 0, (8, 1, 1), (256, 1, 1), 8, 8, 16, 0, None)


def test_lcs_dispatches_round_robin_up_to_the_limit_it_sets():
    cfg = load_config("tesla_m2050", {"gpu.n_sms": 2})
    port = FakeGPUPort(2)
    lcs = LazyCTAScheduler(LCSParams(), n_sms=2, port=port, config=cfg)
    states = [SMState(0, cap=3), SMState(1, cap=3)]
    kv = kernel(n_ctas=12, grid=(12, 1, 1))
    placed = []
    for _ in range(4):
        placed += dispatch(lcs, states, [kv])
    assert [(s, i) for s, _, i in placed] == [(0, 0), (1, 1), (0, 2), (1, 3), (0, 4), (1, 5)]
    # CTA 0 retires on SM 0 having issued the most: Eq. 1 over it and CTAs 2 and 4
    port.sm(0).ctas = [cta(0, 2, 50), cta(0, 4, 0)]
    lcs.on_cta_retired(cta(0, 0, 100), now=500)
    assert port.sm(0).limits == {0: 1}
    states[0].by_kernel[0] -= 1
    states[0].limits = {0: 1}                   # as the port applies it
    assert dispatch(lcs, states, [kv]) == []    # lazy: two resident, limit 1
    lcs.on_kernel_end(_info(), now=900)
    assert port.sm(0).limits[0] is None
    assert lcs.counts.as_dict() == {"decisions": 1, "t_new_sum": 1, "t_max_sum": 3, "throttled": 1}


def test_phase_one_trace_samples_until_the_decision():
    port = FakeGPUPort(1)
    tr = PhaseOneTrace(port, sm=0, every=100)
    tr.start(kid=0, now=0)
    assert port.timers == [(100, ("phase1", 0))]
    port.sm(0).ctas = [cta(0, 0, 30), cta(0, 1, 10)]
    assert tr.tick(("phase1", 0), 100)
    assert port.timers[-1] == (200, ("phase1", 0))
    assert not tr.tick("other", 150)
    port.sm(0).ctas = [cta(0, 1, 40)]
    tr.stop(0, 180, cta(0, 0, 60))
    tr.tick(("phase1", 0), 200)                 # after the decision: nothing more
    assert tr.samples == [(100, 0, {0: 30, 1: 10}), (180, 0, {1: 40, 0: 60})]


def test_lcs_params_are_declared_and_checked():
    cls, params = resolve("cta_scheduler", {"impl": "lcs", "rounding": "ceil", "scope": "one_sm"})
    assert cls is LazyCTAScheduler and params.rounding == "ceil" and params.scope == "one_sm"
    from tlpsim.errors import ConfigError

    with pytest.raises(ConfigError, match="rounding"):
        resolve("cta_scheduler", {"impl": "lcs", "rounding": "nearest"})
