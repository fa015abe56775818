"""Hypothesis property tests: cfg analyses and the dataflow solver vs brute force."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tlpsim.analysis.cfg import CFG
from tlpsim.analysis.dataflow import solve

SETTINGS = settings(max_examples=200, deadline=None)
VX = "VX"  # brute-force stand-in for the virtual exit


@st.composite
def random_cfgs(draw):
    n = draw(st.integers(1, 30))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node), max_size=3 * n))
    return CFG.from_edges(0, range(n), edges)


@st.composite
def exiting_cfgs(draw):
    """Every node reaches an exit: node n-1 and "ret" nodes have no successors, every
    other node has a forward edge plus arbitrary extra edges (including back edges)."""
    n = draw(st.integers(1, 30))
    rets = {i for i in range(n - 1) if draw(st.integers(0, 5)) == 0} | {n - 1}
    edges = []
    for i in range(n):
        if i in rets:
            continue
        edges.append((i, draw(st.integers(i + 1, n - 1))))
        edges += [(i, j) for j in draw(st.lists(st.integers(0, n - 1), max_size=3))]
    return CFG.from_edges(0, range(n), edges)


def bfs(start, succ, removed=None):
    seen, work = set(), [start]
    if start == removed:
        return seen
    seen.add(start)
    while work:
        for s in succ(work.pop()):
            if s != removed and s not in seen:
                seen.add(s)
                work.append(s)
    return seen


def brute_dominators(g):
    reach = bfs(g.entry, g.successors)
    return {n: frozenset(d for d in reach if d == n or n not in bfs(g.entry, g.successors, d))
            for n in reach}


def augmented_succ(g, extra_roots):
    """Successor function of g with exit nodes (and extra_roots) flowing to VX."""
    roots = set(g.exit_nodes()) | set(extra_roots)
    return lambda n: () if n == VX else g.successors(n) + ((VX,) if n in roots else ())


def brute_post_dominators(g, succ):
    reach = bfs(g.entry, g.successors)
    return {n: frozenset(d for d in reach if d == n or VX not in bfs(n, succ, d)) for n in reach}


def brute_immediate(doms):
    """The strict dominator that all other strict dominators dominate (None if none)."""
    out = {}
    for n, ds in doms.items():
        strict = ds - {n}
        cands = [d for d in strict if strict <= doms[d]]
        assert len(cands) == (1 if strict else 0)
        out[n] = cands[0] if cands else None
    return out


@SETTINGS
@given(random_cfgs())
def test_dominators_match_definition(g):
    doms = brute_dominators(g)
    assert dict(g.dominators()) == doms
    assert dict(g.immediate_dominators()) == brute_immediate(doms)
    for n, ds in doms.items():
        assert all(g.dominates(d, n) == (d in ds) for d in doms)


@SETTINGS
@given(random_cfgs())
def test_idom_is_dominated_by_all_other_strict_dominators(g):
    doms, idom = g.dominators(), g.immediate_dominators()
    for n, ds in doms.items():
        strict = ds - {n}
        if n == g.entry:
            assert idom[n] is None
        else:
            assert idom[n] in strict
            assert strict <= doms[idom[n]]


@SETTINGS
@given(random_cfgs())
def test_dominance_frontier_and_loops_match_definition(g):
    doms, reach = g.dominators(), g.reachable()
    df = {n: frozenset(y for y in reach for p in g.predecessors(y)
                       if p in reach and n in doms[p] and not (n in doms[y] and n != y))
          for n in reach}
    assert dict(g.dominance_frontier()) == df
    backs = {(u, v) for u in reach for v in g.successors(u) if v in doms[u]}
    assert g.back_edges() == backs
    for h, lp in g.loops().items():
        # natural loop body: h plus nodes that reach a latch without passing through h
        body = {h}.union(*(bfs(latch, lambda n: [p for p in g.predecessors(n) if p in reach], h)
                           for latch in lp.latches))
        assert lp.body == body and lp.back_edges == {e for e in backs if e[1] == h}
    # reducible iff the graph minus back edges is acyclic (over reachable nodes)
    indeg = {n: 0 for n in reach}
    fwd = {n: [v for v in g.successors(n) if (n, v) not in backs] for n in reach}
    for n in reach:
        for v in fwd[n]:
            indeg[v] += 1
    ready, seen = [n for n in reach if indeg[n] == 0], 0
    while ready:
        seen += 1
        for v in fwd[ready.pop()]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    assert g.is_reducible() == (seen == len(reach))


@SETTINGS
@given(exiting_cfgs())
def test_post_dominators_match_definition(g):
    pdoms = brute_post_dominators(g, augmented_succ(g, ()))
    assert dict(g.post_dominators()) == pdoms
    assert dict(g.immediate_post_dominators()) == brute_immediate(pdoms)


@SETTINGS
@given(random_cfgs())
def test_post_dominators_with_infinite_loops_follow_documented_rule(g):
    # stuck nodes reach no exit; heads of their sink SCCs (first in RPO) feed the virtual exit
    reach, rpo = g.reachable(), g.reverse_postorder()
    exits = set(g.exit_nodes())
    stuck = [n for n in rpo if not (bfs(n, g.successors) & exits)]
    heads = set()
    for n in stuck:
        fwd = bfs(n, g.successors)
        if all(n in bfs(m, g.successors) for m in fwd):  # n lies in a sink SCC
            heads.add(min(fwd, key=rpo.index))
    pdoms = brute_post_dominators(g, augmented_succ(g, heads))
    assert dict(g.post_dominators()) == pdoms
    assert dict(g.immediate_post_dominators()) == brute_immediate(pdoms)
    assert set(g.immediate_post_dominators()) == reach


@SETTINGS
@given(random_cfgs())
def test_forward_dataflow_reachability_matches_bfs(g):
    # out[n] = nodes lying on some entry->n path = reachable ancestors of n, plus n
    res = solve(g, "forward", frozenset(), frozenset(),
                lambda vs: frozenset().union(*vs), lambda n, v: v | {n})
    reach = bfs(g.entry, g.successors)
    assert set(res.out) == reach == set(res.in_)
    for n in reach:
        assert res.out[n] == {d for d in reach if n in bfs(d, g.successors)}
        preds = [p for p in g.predecessors(n) if p in reach]
        assert res.in_[n] == frozenset().union(*(res.out[p] for p in preds))


@SETTINGS
@given(random_cfgs())
def test_backward_dataflow_can_reach_exit_matches_brute_force(g):
    res = solve(g, "backward", False, True, any, lambda n, v: v)
    exits = set(g.exit_nodes())
    for n in g.reachable():
        assert res.in_[n] == bool(bfs(n, g.successors) & exits)
        assert res.out[n] == (n in exits or any(bfs(s, g.successors) & exits
                                                for s in g.successors(n)))
