"""Golden test: liveness-style backward analysis with tlpsim.analysis.dataflow."""

from __future__ import annotations

import pytest

from tlpsim.analysis.cfg import CFG
from tlpsim.analysis.dataflow import solve

# 0: i = 0; s = 0          1: p = i < n ; bra p        2: s = s + i; i = i + 1     3: out = s; ret
EDGES = [(0, 1), (1, 2), (1, 3), (2, 1)]
USES = {0: set(), 1: {"i", "n"}, 2: {"s", "i"}, 3: {"s"}}
DEFS = {0: {"i", "s"}, 1: {"p"}, 2: {"s", "i"}, 3: {"out"}}


def liveness(g):
    return solve(g, "backward", frozenset(), frozenset(),
                 lambda vs: frozenset().union(*vs),
                 lambda n, out: frozenset(USES[n] | (out - DEFS[n])))


def test_liveness_on_loop():
    g = CFG.from_edges(0, range(4), EDGES)
    res = liveness(g)
    assert dict(res.in_) == {0: {"n"}, 1: {"i", "n", "s"}, 2: {"i", "n", "s"}, 3: {"s"}}
    assert dict(res.out) == {0: {"i", "n", "s"}, 1: {"i", "n", "s"}, 2: {"i", "n", "s"}, 3: set()}


def test_boundary_and_unreachable_nodes():
    g = CFG.from_edges(0, range(5), EDGES + [(4, 1)])  # 4 is unreachable
    res = solve(g, "backward", frozenset(), frozenset({"ret"}),
                lambda vs: frozenset().union(*vs),
                lambda n, out: frozenset(USES[n] | (out - DEFS[n])))
    assert 4 not in res.in_ and 4 not in res.out
    assert res.out[3] == {"ret"}
    assert res.in_[3] == {"s", "ret"}
    assert res.in_[0] == {"n", "ret"}


def test_forward_must_analysis():
    # "defined on every path" (intersection merge, optimistic init); boundary = kernel params
    g = CFG.from_edges(0, range(4), EDGES)
    top = frozenset({"n", "i", "s", "p", "out"})
    res = solve(g, "forward", top, frozenset({"n"}),
                lambda vs: frozenset.intersection(*vs),
                lambda n, v: v | DEFS[n])
    assert dict(res.in_) == {0: {"n"}, 1: {"n", "i", "s"}, 2: {"n", "i", "s", "p"},
                             3: {"n", "i", "s", "p"}}
    assert dict(res.out) == {0: {"n", "i", "s"}, 1: {"n", "i", "s", "p"},
                             2: {"n", "i", "s", "p"}, 3: top}


def test_bad_direction():
    g = CFG.from_edges(0, range(4), EDGES)
    with pytest.raises(ValueError):
        solve(g, "sideways", 0, 0, max, lambda n, v: v)  # type: ignore[arg-type]
