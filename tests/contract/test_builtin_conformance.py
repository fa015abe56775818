"""Every built-in plug-in, at every extension point, passes the conformance
harness (tlpsim.testing): output verified, terminates, skip-ahead == dense,
deterministic, compiled == pure Python, statistics invariants."""

from __future__ import annotations

import pytest

from tlpsim.policies import registry
from tlpsim.testing import Target, check_targets
from tlpsim.testing.conformance import POINT_KEYS
from tlpsim.validate.clock import PROBE_NAME  # registers validate's %clock probe (an execution checker)

registry.load_plugins()
BUILT_IN = [(p, n) for p in POINT_KEYS for n in registry.choices(p)]


@pytest.fixture(scope="module")
def reports():
    # one batch: the pure-Python side runs in a single subprocess (on two of the four
    # workloads, to keep the suite short; the other checks use all four)
    reps = check_targets([Target.plugin(p, n) for p, n in BUILT_IN], plugins=["tlpsim.validate.clock"],
                         pure_python_workloads=("vecadd", "reduction"))
    return {pn: r for pn, r in zip(BUILT_IN, reps)}


def test_every_point_has_its_built_ins():
    assert ("execution_checker", PROBE_NAME) in BUILT_IN
    assert {p for p, _ in BUILT_IN} == set(POINT_KEYS)
    assert len(BUILT_IN) >= 19


@pytest.mark.parametrize("point,name", BUILT_IN, ids=[f"{p}={n}" for p, n in BUILT_IN])
def test_built_in_plugin_conforms(reports, point, name):
    rep = reports[(point, name)]
    assert rep.ok, rep.summary()
    want = {"vecadd", "reduction", "transpose", "pathfinder"} | ({"spmv"} if point == "resource_allocator" else set())
    assert set(rep.cycles) == want
