"""Claims of the CTA-scheduling study evaluated on hand-made analysis data: the
band rule, directions and orderings, and what is reported when data is missing."""

from __future__ import annotations

import pytest

from tlpsim.experiments.base import Claim, band_ok
from tlpsim.experiments.lcs_bcs.analysis import Curve, StudyData
from tlpsim.experiments.lcs_bcs.claims import build_claims


def test_band_is_the_papers_number_within_a_factor_of_two():
    assert band_ok(7.0, 7.0) and band_ok(3.5, 7.0) and band_ok(14.0, 7.0)
    assert not band_ok(3.4, 7.0) and not band_ok(14.1, 7.0) and not band_ok(-7.0, 7.0)
    assert band_ok(None, 7.0) is None and band_ok(float("nan"), 7.0) is None


def test_a_claim_holds_on_its_direction_and_its_band():
    c = Claim("x", "fig12", "s", paper=7.0, measured=20.0, direction=True, band=False)
    assert c.holds is False and c.verdict == "FAIL"
    c.band = None
    assert c.holds is True and c.verdict == "PASS"
    assert Claim("y", "fig4", "s").verdict == "n/a"


def _curve(cycles, classes=None, l1=None, l2=None):
    n = len(cycles)
    cl = classes or [{"active": 0.5, "idle": 0.2, "mem_stall": 0.2, "core_stall": 0.1}] * n
    return Curve.of([(k + 1, _D(c, cl[k], (l1 or [0.5] * n)[k], (l2 or [0.5] * n)[k])) for k, c in enumerate(cycles)],
                    n, False)


class _D:
    """The few digest attributes Curve.of reads."""

    def __init__(self, cycles, classes, l1, l2):
        self.cycles = cycles
        self._classes = classes
        self.l1_miss_rate = l1
        self.l2_miss_rate = l2

    def class_fractions(self):
        return self._classes

    def kernel_cycles(self):
        return {"k": self.cycles}


def _data() -> StudyData:
    d = StudyData()
    busy = [{"active": 0.3, "idle": 0.4, "mem_stall": 0.2, "core_stall": 0.1},
            {"active": 0.6, "idle": 0.1, "mem_stall": 0.1, "core_stall": 0.2}]
    d.curves = {"a": _curve([1000, 500], busy),                     # Type I
                "b": _curve([1000, 600, 600]),                       # Type II
                "c": _curve([1000, 1200], l1=[0.2, 0.4]),            # Type III, miss rate rises
                "e": _curve([1000, 800, 900], l2=[0.3, 0.3, 0.2])}   # Type IV, miss rate falls
    d.lcs = {"a": {"speedup": 0.99, "energy": 0.95}, "b": {"speedup": 1.0, "energy": 0.9},
             "c": {"speedup": 1.3, "energy": 0.6}, "e": {"speedup": 1.1, "energy": 0.8}}
    d.kernels = [{"workload": "a", "kernel": "k", "t_max": 6, "top": 6, "opt": 6, "t_new": 5.0},
                 {"workload": "c", "kernel": "k", "t_max": 6, "top": 6, "opt": 1, "t_new": 3.5}]
    return d


def test_claims_on_hand_made_data():
    claims = {c.id: c for c in build_claims(_data())}
    assert claims["types"].measured == 4 and claims["types"].verdict == "PASS"
    t1 = claims["type1_stalls"]
    assert t1.direction is True and t1.measured == pytest.approx(-40.0)   # IDLE -30 pp, MEM_STALL -10 pp
    assert claims["type34_miss"].measured == 50.0 and claims["type34_miss"].direction is False
    g = claims["lcs_all"]
    expect = 100 * ((0.99 * 1.0 * 1.3 * 1.1) ** 0.25 - 1)
    assert g.measured == pytest.approx(expect) and g.band is True and g.verdict == "PASS"
    assert claims["lcs_34"].measured == pytest.approx(100 * ((1.3 * 1.1) ** 0.5 - 1))
    assert claims["lcs_12"].direction is True                    # -0.5 % >= -3 %
    assert claims["tnew_opt"].measured == 50.0 and claims["tnew_opt"].direction is False
    assert claims["energy_avg"].measured == pytest.approx(100 * (0.05 + 0.1 + 0.4 + 0.2) / 4)
    assert claims["energy_max"].measured == pytest.approx(40.0) and claims["energy_max"].band is True
    # nothing ran for BCS, mixes or the comparison: those claims are not evaluated
    for cid in ("bcs_sca", "l1_sca", "mcke", "lcsbcs_ccws", "bcs_scaling"):
        assert claims[cid].verdict == "n/a", cid


def test_claims_without_a_type_say_so():
    d = StudyData()
    d.curves = {"a": _curve([1000, 500])}
    d.lcs = {"a": {"speedup": 1.0, "energy": 0.9}}
    claims = {c.id: c for c in build_claims(d)}
    assert claims["types"].direction is False and claims["types"].measured == 1
    assert "no Type III/IV" in claims["type34_miss"].note
    assert "no Type III" in claims["energy_max"].note


def test_bcs_scaling_is_judged_on_stand_ins_that_lose_past_opt_only():
    d = StudyData()
    iv = {"workload": "w1", "GTO type": "IV", "GTO drop": 0.2, "BCS+SCA type": "II", "BCS+SCA drop": 0.0}
    ii = {"workload": "w2", "GTO type": "II", "GTO drop": 0.0, "BCS+SCA type": "I", "BCS+SCA drop": 0.0}
    d.fig15 = {"LPS": dict(iv), "3DFD": dict(ii)}
    c = {c.id: c for c in build_claims(d)}["bcs_scaling"]
    assert c.direction is True and c.measured == 1.0 and c.unit == " of 1"
    assert "left out: 3DFD" in c.note
    d.fig15["LPS"]["BCS+SCA type"], d.fig15["LPS"]["BCS+SCA drop"] = "IV", 0.25   # BCS+SCA does not help
    assert {c.id: c for c in build_claims(d)}["bcs_scaling"].verdict == "FAIL"
    d.fig15 = {"3DFD": dict(ii)}                                                     # nothing testable
    c = {c.id: c for c in build_claims(d)}["bcs_scaling"]
    assert c.verdict == "n/a" and c.note.startswith("not testable: no stand-in is Type III/IV") and "Type II" in c.note
