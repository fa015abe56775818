"""Golden tests for tlpsim.analysis.cfg on hand-made graphs with known answers."""

from __future__ import annotations

import pytest

from tlpsim.analysis.cfg import CFG, Loop


def mk(edges, n=None, entry=0):
    nodes = range(n if n is not None else max(max(e) for e in edges) + 1)
    return CFG.from_edges(entry, nodes, edges)


def fs(*xs):
    return frozenset(xs)


# ------------------------------------------------------------------ diamond
DIAMOND = [(0, 1), (0, 2), (1, 3), (2, 3)]


def test_diamond():
    g = mk(DIAMOND)
    assert g.nodes == (0, 1, 2, 3)
    assert g.entry == 0
    assert g.successors(0) == (1, 2)
    assert g.predecessors(3) == (1, 2)
    assert g.reverse_postorder() == (0, 1, 2, 3)
    assert g.exit_nodes() == (3,)
    assert dict(g.dominators()) == {0: fs(0), 1: fs(0, 1), 2: fs(0, 2), 3: fs(0, 3)}
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 0, 3: 0}
    assert dict(g.dominator_tree()) == {0: (1, 2, 3), 1: (), 2: (), 3: ()}
    assert dict(g.dominance_frontier()) == {0: fs(), 1: fs(3), 2: fs(3), 3: fs()}
    assert dict(g.post_dominators()) == {0: fs(0, 3), 1: fs(1, 3), 2: fs(2, 3), 3: fs(3)}
    assert dict(g.immediate_post_dominators()) == {0: 3, 1: 3, 2: 3, 3: None}
    assert g.back_edges() == fs()
    assert dict(g.loops()) == {}
    assert [g.loop_depth(n) for n in g.nodes] == [0, 0, 0, 0]
    assert g.is_reducible()
    assert g.dominates(0, 3) and not g.dominates(1, 3) and g.dominates(2, 2)


def test_if_then_without_else():
    g = mk([(0, 1), (0, 2), (1, 2)])
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 0}
    assert dict(g.immediate_post_dominators()) == {0: 2, 1: 2, 2: None}
    assert dict(g.dominance_frontier()) == {0: fs(), 1: fs(2), 2: fs()}
    assert dict(g.post_dominators()) == {0: fs(0, 2), 1: fs(1, 2), 2: fs(2)}
    assert g.back_edges() == fs()
    assert g.is_reducible()


# ------------------------------------------------------------------ loops
def test_while_loop():
    g = mk([(0, 1), (1, 2), (1, 3), (2, 1)])
    assert g.reverse_postorder() == (0, 1, 2, 3)
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 1, 3: 1}
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: 3, 2: 1, 3: None}
    assert dict(g.dominance_frontier()) == {0: fs(), 1: fs(1), 2: fs(1), 3: fs()}
    assert g.back_edges() == fs((2, 1))
    assert dict(g.loops()) == {1: Loop(1, fs(1, 2), fs(2), fs((1, 3)), None, 1)}
    assert g.loops()[1].back_edges == fs((2, 1))
    assert [g.loop_depth(n) for n in g.nodes] == [0, 1, 1, 0]
    assert g.is_reducible()


def test_nested_loops():
    # 1: outer header (exit to 5), 2: inner header (exit to 4), 3: inner latch, 4: outer latch
    g = mk([(0, 1), (1, 2), (1, 5), (2, 3), (2, 4), (3, 2), (4, 1)])
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 1, 3: 2, 4: 2, 5: 1}
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: 5, 2: 4, 3: 2, 4: 1, 5: None}
    assert dict(g.dominance_frontier()) == {
        0: fs(), 1: fs(1), 2: fs(1, 2), 3: fs(2), 4: fs(1), 5: fs()}
    assert g.back_edges() == fs((3, 2), (4, 1))
    assert dict(g.loops()) == {
        1: Loop(1, fs(1, 2, 3, 4), fs(4), fs((1, 5)), None, 1),
        2: Loop(2, fs(2, 3), fs(3), fs((2, 4)), 1, 2),
    }
    assert [g.loop_depth(n) for n in g.nodes] == [0, 1, 2, 2, 1, 0]
    assert g.is_reducible()


def test_loop_with_two_exits():
    # loop header 1 exits to 4; body node 2 breaks to 5; both rejoin at 6
    g = mk([(0, 1), (1, 2), (1, 4), (2, 3), (2, 5), (3, 1), (4, 6), (5, 6)])
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 1, 3: 2, 4: 1, 5: 2, 6: 1}
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: 6, 2: 6, 3: 1, 4: 6, 5: 6, 6: None}
    assert dict(g.dominance_frontier()) == {
        0: fs(), 1: fs(1), 2: fs(1, 6), 3: fs(1), 4: fs(6), 5: fs(6), 6: fs()}
    assert dict(g.loops()) == {1: Loop(1, fs(1, 2, 3), fs(3), fs((1, 4), (2, 5)), None, 1)}
    assert [g.loop_depth(n) for n in g.nodes] == [0, 1, 1, 1, 0, 0, 0]


def test_self_loop_on_entry():
    g = mk([(0, 0), (0, 1)])
    assert g.back_edges() == fs((0, 0))
    assert dict(g.loops()) == {0: Loop(0, fs(0), fs(0), fs((0, 1)), None, 1)}
    assert dict(g.dominance_frontier()) == {0: fs(0), 1: fs()}
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: None}
    assert g.is_reducible()


# ------------------------------------------------------------ exits / returns
def test_early_return_both_arms():
    # 0 branches; arm 1 returns, arm 2 -> 3 returns: paths rejoin only at kernel exit
    g = mk([(0, 1), (0, 2), (2, 3)])
    assert g.exit_nodes() == (1, 3)
    assert dict(g.immediate_post_dominators()) == {0: None, 1: None, 2: 3, 3: None}
    assert dict(g.post_dominators()) == {0: fs(0), 1: fs(1), 2: fs(2, 3), 3: fs(3)}
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 0, 3: 2}


def test_early_return_inside_loop():
    # while loop 1<->2 where body 2 may return through 4
    g = mk([(0, 1), (1, 2), (1, 3), (2, 1), (2, 4)])
    assert g.exit_nodes() == (3, 4)
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: None, 2: None, 3: None, 4: None}
    assert dict(g.loops()) == {1: Loop(1, fs(1, 2), fs(2), fs((1, 3), (2, 4)), None, 1)}


def test_infinite_loop_with_other_exit():
    # 0 -> 3 exits; 0 -> 1 <-> 2 never exits: head 1 is wired to the virtual exit
    g = mk([(0, 1), (0, 3), (1, 2), (2, 1)])
    assert g.exit_nodes() == (3,)
    assert dict(g.immediate_post_dominators()) == {0: None, 1: None, 2: 1, 3: None}
    assert dict(g.post_dominators()) == {0: fs(0), 1: fs(1), 2: fs(1, 2), 3: fs(3)}
    assert dict(g.loops()) == {1: Loop(1, fs(1, 2), fs(2), fs(), None, 1)}


def test_infinite_loop_no_exit_at_all():
    g = mk([(0, 1), (1, 2), (1, 3), (2, 1), (3, 1)])
    assert g.exit_nodes() == ()
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: None, 2: 1, 3: 1}
    assert dict(g.post_dominators()) == {0: fs(0, 1), 1: fs(1), 2: fs(1, 2), 3: fs(1, 3)}
    assert dict(g.loops()) == {1: Loop(1, fs(1, 2, 3), fs(2, 3), fs(), None, 1)}


def test_chained_infinite_loops_only_sink_is_wired():
    # loop 1<->2 can fall into loop 3<->4, which never leaves; 0 -> 5 exits
    g = mk([(0, 1), (0, 5), (1, 2), (2, 1), (2, 3), (3, 4), (4, 3)])
    assert dict(g.immediate_post_dominators()) == {0: None, 1: 2, 2: 3, 3: None, 4: 3, 5: None}


# ------------------------------------------------------------- unreachable
def test_unreachable_nodes():
    g = mk([(0, 1), (2, 1)], n=4)  # 2 and 3 unreachable; 3 has no successors
    assert g.nodes == (0, 1, 2, 3)
    assert g.reachable() == fs(0, 1)
    assert g.predecessors(1) == (0, 2)
    assert g.exit_nodes() == (1,)
    assert dict(g.dominators()) == {0: fs(0), 1: fs(0, 1)}
    assert dict(g.immediate_dominators()) == {0: None, 1: 0}
    assert dict(g.dominance_frontier()) == {0: fs(), 1: fs()}
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: None}
    assert dict(g.post_dominators()) == {0: fs(0, 1), 1: fs(1)}
    assert g.loop_depth(2) == 0
    assert not g.dominates(0, 2)
    p = g.prune_unreachable()
    assert p.nodes == (0, 1) and p.edges == ((0, 1),) and p.entry == 0
    assert g.nodes == (0, 1, 2, 3)  # original untouched


# ------------------------------------------------------------- irreducible
def test_irreducible():
    g = mk([(0, 1), (0, 2), (1, 2), (2, 1), (2, 3)])
    assert not g.is_reducible()
    assert g.back_edges() == fs()
    assert dict(g.loops()) == {}
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 0, 3: 2}
    assert dict(g.dominance_frontier()) == {0: fs(), 1: fs(2), 2: fs(1), 3: fs()}


def test_irreducible_inside_reducible_loop():
    g = mk([(0, 1), (1, 2), (1, 3), (2, 3), (3, 2), (3, 1), (1, 4)])
    assert not g.is_reducible()
    assert g.back_edges() == fs((3, 1))
    assert g.loops()[1].body == fs(1, 2, 3)


# --------------------------------------------------------------- mechanics
def test_errors_and_duplicates():
    g = CFG()
    g.add_node(0)
    with pytest.raises(ValueError):
        g.add_edge(0, 1)
    with pytest.raises(ValueError):
        g.set_entry(7)
    with pytest.raises(ValueError):
        g.dominators()
    with pytest.raises(ValueError):
        g.add_node(None)
    g.add_node(1)
    g.add_node(1)
    g.add_edge(0, 1)
    g.add_edge(0, 1)
    assert g.nodes == (0, 1) and g.edges == ((0, 1),) and len(g) == 2 and 1 in g
    with pytest.raises(ValueError):
        g.loop_depth(9)


def test_cache_and_invalidation_and_immutability():
    g = mk([(0, 1), (1, 2)])
    d = g.dominators()
    assert g.dominators() is d
    with pytest.raises(TypeError):
        d[0] = fs()  # type: ignore[index]
    assert dict(g.immediate_post_dominators()) == {0: 1, 1: 2, 2: None}
    g.add_node(3)
    g.add_edge(0, 3)
    g.add_edge(3, 2)
    assert g.dominators() is not d
    assert dict(g.immediate_dominators()) == {0: None, 1: 0, 2: 0, 3: 0}
    assert dict(g.immediate_post_dominators()) == {0: 2, 1: 2, 2: None, 3: 2}
    g.add_edge(2, 0)
    assert g.back_edges() == fs((2, 0))
    g.set_entry(1)
    assert g.reverse_postorder() == (1, 2, 0, 3)
    assert dict(g.immediate_dominators()) == {1: None, 2: 1, 0: 2, 3: 0}


def test_long_chain_is_not_recursive():
    n = 20000
    g = mk([(i, i + 1) for i in range(n - 1)] + [(n - 2, 0)], n=n)
    assert g.immediate_dominators()[n - 1] == n - 2
    assert g.immediate_post_dominators()[0] == 1
    assert g.loops()[0].body == frozenset(range(n - 1))
    assert g.loop_depth(n - 1) == 0
    assert g.is_reducible()


# ------------------------------------------------------------------ output
def test_to_dot_and_dump():
    edges = [(0, 1), (1, 2), (1, 3), (2, 1)]
    g = mk(edges)
    dot = g.to_dot("k", label=lambda n: f"BB{n}\nbra", color=lambda n: "red" if n == 2 else None)
    assert dot.startswith('digraph "k" {\n')
    assert dot.rstrip().endswith("}")
    for u, v in edges:
        assert f'"{u}" -> "{v}"' in dot
    assert '"2" -> "1" [style=dashed];' in dot
    assert 'label="BB2\\nbra"' in dot and 'fillcolor="red"' in dot
    assert dot.count("fillcolor") == 1
    text = g.dump()
    assert text.splitlines()[0] == "CFG entry=0 nodes=4 edges=4"
    assert "  1 -> [2, 3]  idom=0 ipdom=3 depth=1" in text
    assert "loop 1: body=[1, 2]" in text
    assert "reducible=True" in text
    # graphs without an entry still render
    h = CFG()
    h.add_node("a")
    assert '"a" [label="a"];' in h.to_dot()
    assert "entry=None" in h.dump()
