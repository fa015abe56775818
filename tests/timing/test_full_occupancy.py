"""The per-SM CTA-count cycles (SMStats.cta_count_cycles) and the full-occupancy share
derived from them (LaunchStats.full_occupancy_share_min / _mean)."""

import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.workloads.registry import get_workload


@pytest.fixture(scope="module")
def launches():
    # matadd tiny: 36 CTAs on 15 SMs capped at 2 CTAs each: some SMs fill, then drain
    cfg = load_config("gtx480", {"gpu.max_ctas_per_sm": 2})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        res = get_workload("matadd").execute("tiny")
    assert res.verified
    return [rec.stats for rec in res.launches]


def test_cta_count_cycles_agree_with_resident_cta_cycles(launches):
    for st in launches:
        for sm in st.per_sm:
            hist = sm["cta_count_cycles"]
            assert sum(n * c for n, c in enumerate(hist)) == sm["resident_cta_cycles"]
            assert len(hist) - 1 <= st.ctas_per_sm_limit == 2   # never above the cap
        assert any(len(sm["cta_count_cycles"]) == 3 and sm["cta_count_cycles"][2] for sm in st.per_sm)


def test_full_occupancy_share_is_the_cycles_at_the_limit(launches):
    for st in launches:
        shares = [min(sum(sm["cta_count_cycles"][st.ctas_per_sm_limit:]) / st.cycles, 1.0) for sm in st.per_sm]
        assert st.full_occupancy_share_min == min(shares)
        assert st.full_occupancy_share_mean == pytest.approx(sum(shares) / len(shares), abs=0, rel=1e-15)
        assert 0.0 <= st.full_occupancy_share_min <= st.full_occupancy_share_mean < 1.0
        assert st.full_occupancy_share_mean > 0.0


def test_full_occupancy_is_a_run_metric(launches):
    from dataclasses import asdict

    from tlpsim.report.metrics import run_metrics

    stats = [asdict(s) for s in launches]
    m = run_metrics({"stats": stats})
    cycles = sum(s["cycles"] for s in stats)
    assert m["full_occupancy_share_min"] == pytest.approx(
        sum(s["full_occupancy_share_min"] * s["cycles"] for s in stats) / cycles)
    for s in stats:  # records made before the statistic existed
        del s["full_occupancy_share_min"], s["full_occupancy_share_mean"]
    assert run_metrics({"stats": stats})["full_occupancy_share_min"] == 0.0
