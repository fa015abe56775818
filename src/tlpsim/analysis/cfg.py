"""Generic control-flow graph with lazily cached dominance and loop analyses.

PTX-agnostic: nodes are any hashable ids except ``None`` (basic-block indices in
practice).  Modelled on numba's ``CFGraph`` (numba/core/controlflow.py) and the
bril ``cfg``/``dom`` examples.

* Every analysis considers only nodes reachable from the entry; unreachable nodes
  are absent from all analysis mappings (use :meth:`CFG.prune_unreachable` to drop
  them).  Edges from unreachable nodes are ignored.
* Analyses are pure functions of the graph, computed once and cached; any
  mutation (``add_node``/``add_edge``/``set_entry``) clears the cache.  Results are
  immutable (``MappingProxyType`` of tuples / frozensets).
* All traversals are iterative (graphs may have thousands of nodes).
* Post-dominance is computed on the reversed graph rooted at a *virtual exit*.
  Its predecessors are (a) every reachable node without successors and (b) for
  code from which no exit is reachable (infinite loops), the *head* of every sink
  strongly-connected component of that code, where the head is the component's
  first node in reverse postorder (the loop header for a natural loop).  Every
  reachable node therefore reaches the virtual exit.  The virtual exit never
  appears in results; ``None`` stands for it in :meth:`immediate_post_dominators`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

__all__ = ["CFG", "Loop"]

N = TypeVar("N", bound=Hashable)
_VEXIT: Any = object()  # the virtual exit node of post-dominance


def _postorder(roots: Iterable[Any], succ: Callable[[Any], Iterable[Any]],
               seen: set[Any] | None = None) -> list[Any]:
    """Iterative DFS postorder from ``roots``, skipping (and extending) ``seen``.

    Successors are explored last-to-first so that, in reverse postorder, a node's
    first successor's region precedes its later successors' regions.
    """
    seen = set() if seen is None else seen
    order: list[Any] = []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, reversed(tuple(succ(root))))]
        while stack:
            node, it = stack[-1]
            for s in it:
                if s not in seen:
                    seen.add(s)
                    stack.append((s, reversed(tuple(succ(s)))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _chk_idom(rpo: list[Any], preds: Callable[[Any], Iterable[Any]]) -> dict[Any, Any]:
    """Immediate dominators of the nodes of ``rpo`` (root first; root maps to itself).

    Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm" (Software
    Practice & Experience, 2001): iterate ``idom[b] = intersect(processed preds)``
    in reverse postorder until nothing changes.  Preds outside ``rpo`` are ignored.
    """
    index = {n: i for i, n in enumerate(rpo)}
    idom: dict[Any, Any] = {rpo[0]: rpo[0]}
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = None
            for p in preds(b):
                if p not in idom:  # not yet processed, or unreachable
                    continue
                if new is None:
                    new = p
                    continue
                f1, f2 = p, new  # walk both fingers up to the common ancestor
                while index[f1] != index[f2]:
                    while index[f1] > index[f2]:
                        f1 = idom[f1]
                    while index[f2] > index[f1]:
                        f2 = idom[f2]
                new = f1
            if b not in idom or index[idom[b]] != index[new]:
                idom[b] = new
                changed = True
    return idom


def _cached(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Memoise a no-argument analysis method in ``self._cache``."""
    key = fn.__name__

    @functools.wraps(fn)
    def wrapper(self: CFG[Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = fn(self)
        return self._cache[key]

    return wrapper


@dataclass(frozen=True)
class Loop(Generic[N]):
    """A natural loop: the union of the natural loops of all back edges into ``header``."""

    header: N
    body: frozenset[N]  # includes the header
    latches: frozenset[N]  # sources of the back edges
    exits: frozenset[tuple[N, N]]  # edges (src, dst) with src in body, dst outside
    parent: N | None  # header of the innermost enclosing loop
    depth: int  # 1 for an outermost loop

    @property
    def back_edges(self) -> frozenset[tuple[N, N]]:
        return frozenset((latch, self.header) for latch in self.latches)


class CFG(Generic[N]):
    """Directed graph of basic blocks with an entry node and cached analyses."""

    def __init__(self) -> None:
        # dicts used as insertion-ordered sets; duplicate edges collapse into one.
        self._succ: dict[N, dict[N, None]] = {}
        self._pred: dict[N, dict[N, None]] = {}
        self._entry: N | None = None
        self._cache: dict[str, Any] = {}

    @classmethod
    def from_edges(cls, entry: N, nodes: Iterable[N], edges: Iterable[tuple[N, N]]) -> CFG[N]:
        """Build a graph from a node list, an edge list and the entry node."""
        g: CFG[N] = cls()
        for n in nodes:
            g.add_node(n)
        for src, dst in edges:
            g.add_edge(src, dst)
        g.set_entry(entry)
        return g

    # ----------------------------------------------------------------- mutation
    def add_node(self, n: N) -> None:
        """Add ``n`` (no-op if already present)."""
        if n is None:
            raise ValueError("None cannot be a node (it means 'no dominator')")
        if n not in self._succ:
            self._succ[n] = {}
            self._pred[n] = {}
            self._cache.clear()

    def add_edge(self, src: N, dst: N) -> None:
        """Add edge ``src -> dst``; both nodes must exist.  Duplicates are ignored."""
        if src not in self._succ or dst not in self._succ:
            raise ValueError(f"unknown node in edge {src!r} -> {dst!r}")
        if dst not in self._succ[src]:
            self._succ[src][dst] = None
            self._pred[dst][src] = None
            self._cache.clear()

    def set_entry(self, n: N) -> None:
        if n not in self._succ:
            raise ValueError(f"unknown node {n!r}")
        self._entry = n
        self._cache.clear()

    # -------------------------------------------------------------- structure
    @property
    def entry(self) -> N | None:
        return self._entry

    @property
    def nodes(self) -> tuple[N, ...]:
        """All nodes, in insertion order."""
        return tuple(self._succ)

    @property
    def edges(self) -> tuple[tuple[N, N], ...]:
        return tuple((u, v) for u, ss in self._succ.items() for v in ss)

    def __len__(self) -> int:
        return len(self._succ)

    def __contains__(self, n: object) -> bool:
        return n in self._succ

    def successors(self, n: N) -> tuple[N, ...]:
        return tuple(self._succ[n])

    def predecessors(self, n: N) -> tuple[N, ...]:
        """All predecessors, including unreachable ones."""
        return tuple(self._pred[n])

    def _need_entry(self) -> N:
        if self._entry is None:
            raise ValueError("CFG entry not set")
        return self._entry

    def _freeze(self, d: Mapping[N, Any]) -> Mapping[N, Any]:
        """Read-only copy of ``d`` with keys in node insertion order."""
        return MappingProxyType({n: d[n] for n in self._succ if n in d})

    def _rpreds(self, n: N) -> list[N]:
        reach = self.reachable()
        return [p for p in self._pred[n] if p in reach]

    @_cached
    def reverse_postorder(self) -> tuple[N, ...]:
        """Reachable nodes in reverse postorder of a DFS from the entry."""
        return tuple(reversed(_postorder([self._need_entry()], self._succ.__getitem__)))

    @_cached
    def _rpo_index(self) -> Mapping[N, int]:
        return MappingProxyType({n: i for i, n in enumerate(self.reverse_postorder())})

    @_cached
    def reachable(self) -> frozenset[N]:
        return frozenset(self.reverse_postorder())

    @_cached
    def exit_nodes(self) -> tuple[N, ...]:
        """Reachable nodes without successors (insertion order)."""
        reach = self.reachable()
        return tuple(n for n, ss in self._succ.items() if n in reach and not ss)

    def prune_unreachable(self) -> CFG[N]:
        """A new graph holding only the reachable nodes (order preserved)."""
        reach = self.reachable()
        keep = [n for n in self._succ if n in reach]
        edges = [(u, v) for u in keep for v in self._succ[u]]
        return CFG.from_edges(self._need_entry(), keep, edges)

    # --------------------------------------------------------------- dominance
    @_cached
    def immediate_dominators(self) -> Mapping[N, N | None]:
        """idom of every reachable node; the entry maps to ``None``."""
        rpo = list(self.reverse_postorder())
        idom = _chk_idom(rpo, self._pred.__getitem__)
        idom[rpo[0]] = None
        return self._freeze(idom)

    @_cached
    def dominators(self) -> Mapping[N, frozenset[N]]:
        """All dominators of each reachable node (including itself).  O(n * depth) memory."""
        idom = self.immediate_dominators()
        dom: dict[N, frozenset[N]] = {}
        for n in self.reverse_postorder():  # idom[n] precedes n in RPO
            p = idom[n]
            dom[n] = frozenset((n,)) if p is None else dom[p] | {n}
        return self._freeze(dom)

    @_cached
    def dominator_tree(self) -> Mapping[N, tuple[N, ...]]:
        """Children of each reachable node in the dominator tree (RPO order)."""
        idom = self.immediate_dominators()
        kids: dict[N, list[N]] = {n: [] for n in idom}
        for n in self.reverse_postorder():
            if idom[n] is not None:
                kids[idom[n]].append(n)
        return self._freeze({n: tuple(c) for n, c in kids.items()})

    @_cached
    def _dom_intervals(self) -> Mapping[N, tuple[int, int]]:
        """(preorder, postorder) numbers in the dominator tree, for O(1) dominance tests."""
        tree, pre, clock = self.dominator_tree(), {}, 0
        iv: dict[N, tuple[int, int]] = {}
        stack: list[tuple[N, bool]] = [(self._need_entry(), False)]
        while stack:
            n, done = stack.pop()
            if done:
                iv[n] = (pre[n], clock)
            else:
                pre[n] = clock
                stack.append((n, True))
                stack.extend((c, False) for c in tree[n])
            clock += 1
        return MappingProxyType(iv)

    def dominates(self, a: N, b: N) -> bool:
        """True if ``a`` dominates ``b`` (reflexive); False if either is unreachable."""
        iv = self._dom_intervals()
        if a not in iv or b not in iv:
            return False
        return iv[a][0] <= iv[b][0] and iv[b][1] <= iv[a][1]

    @_cached
    def dominance_frontier(self) -> Mapping[N, frozenset[N]]:
        """DF per Cooper-Harvey-Kennedy; applied to every pred so entry self-loops count."""
        idom = self.immediate_dominators()
        df: dict[N, set[N]] = {n: set() for n in idom}
        for b in idom:
            for p in self._rpreds(b):
                runner: N | None = p
                while runner is not None and runner != idom[b]:
                    df[runner].add(b)
                    runner = idom[runner]
        return self._freeze({n: frozenset(s) for n, s in df.items()})

    # ---------------------------------------------------------- post-dominance
    def _sink_scc_heads(self, stuck: list[N]) -> list[N]:
        """Heads (first in RPO) of the sink SCCs of ``stuck`` (nodes that reach no exit).

        Kosaraju; successors of stuck nodes are themselves stuck.
        """
        sset, idx = set(stuck), self._rpo_index()
        finish = _postorder(stuck, self._succ.__getitem__)
        assigned: set[N] = set()
        heads = []
        for root in reversed(finish):
            if root in assigned:
                continue
            comp = _postorder([root], lambda n: [p for p in self._pred[n] if p in sset], assigned)
            members = set(comp)
            if all(s in members for m in comp for s in self._succ[m]):
                heads.append(min(comp, key=idx.__getitem__))
        return sorted(heads, key=idx.__getitem__)

    @_cached
    def _postdom(self) -> tuple[list[Any], dict[Any, Any]]:
        """(RPO of the reversed graph from the virtual exit, its idom map)."""
        reach = self.reachable()
        exits = list(self.exit_nodes())
        live = set(_postorder(exits, self._rpreds))
        roots = exits + self._sink_scc_heads([n for n in self.reverse_postorder() if n not in live])
        rootset = set(roots)

        def rsucc(n: Any) -> Iterable[Any]:
            return roots if n is _VEXIT else self._rpreds(n)

        def rpred(n: Any) -> Iterable[Any]:
            return [*self._succ[n], _VEXIT] if n in rootset else self._succ[n]

        order = list(reversed(_postorder([_VEXIT], rsucc)))
        assert len(order) == len(reach) + 1
        return order, _chk_idom(order, rpred)

    @_cached
    def immediate_post_dominators(self) -> Mapping[N, N | None]:
        """ipdom of every reachable node; ``None`` means the virtual exit."""
        _, ipd = self._postdom()
        ipd = {n: None if p is _VEXIT else p for n, p in ipd.items() if n is not _VEXIT}
        return self._freeze(ipd)

    @_cached
    def post_dominators(self) -> Mapping[N, frozenset[N]]:
        """All post-dominators of each reachable node (including itself, never the virtual exit)."""
        order, ipd = self._postdom()
        pdom: dict[N, frozenset[N]] = {}
        for n in order[1:]:
            p = ipd[n]
            pdom[n] = frozenset((n,)) if p is _VEXIT else pdom[p] | {n}
        return self._freeze(pdom)

    # ------------------------------------------------------------------ loops
    @_cached
    def back_edges(self) -> frozenset[tuple[N, N]]:
        """Reachable edges ``src -> dst`` where ``dst`` dominates ``src``."""
        return frozenset((u, v) for u in self.reverse_postorder() for v in self._succ[u]
                         if self.dominates(v, u))

    @_cached
    def loops(self) -> Mapping[N, Loop[N]]:
        """Natural loops keyed by header.  Irreducible cycles (no back edge) are not loops."""
        latches: dict[N, list[N]] = {}
        for u in self.reverse_postorder():
            for v in self._succ[u]:
                if self.dominates(v, u):
                    latches.setdefault(v, []).append(u)
        bodies: dict[N, frozenset[N]] = {}
        for h, ls in latches.items():
            body, work = {h}, []
            for n in ls:
                if n not in body:
                    body.add(n)
                    work.append(n)
            while work:
                for p in self._rpreds(work.pop()):
                    if p not in body:
                        body.add(p)
                        work.append(p)
            bodies[h] = frozenset(body)
        # Natural loops with distinct headers are nested or disjoint; enclosing
        # headers dominate, so the nearest one up the idom chain is the parent.
        idom, idx = self.immediate_dominators(), self._rpo_index()
        out: dict[N, Loop[N]] = {}
        for h in sorted(bodies, key=idx.__getitem__):  # parents first
            a = idom[h]
            while a is not None and not (a in bodies and h in bodies[a]):
                a = idom[a]
            body = bodies[h]
            exits = frozenset((u, v) for u in body for v in self._succ[u] if v not in body)
            depth = 1 if a is None else out[a].depth + 1
            out[h] = Loop(h, body, frozenset(latches[h]), exits, a, depth)
        return self._freeze(out)

    @_cached
    def _loop_depths(self) -> Mapping[N, int]:
        d: dict[N, int] = {}
        for lp in sorted(self.loops().values(), key=lambda lp: lp.depth):
            for n in lp.body:
                d[n] = lp.depth
        return MappingProxyType(d)

    def loop_depth(self, n: N) -> int:
        """Number of natural loops containing ``n`` (0 outside loops or if unreachable)."""
        if n not in self._succ:
            raise ValueError(f"unknown node {n!r}")
        return self._loop_depths().get(n, 0)

    @_cached
    def is_reducible(self) -> bool:
        """True iff every retreating DFS edge (target not after source in RPO) is a back edge."""
        idx = self._rpo_index()
        return all(self.dominates(v, u) for u in idx for v in self._succ[u] if idx[v] <= idx[u])

    # ---------------------------------------------------------------- output
    def to_dot(self, name: str = "cfg", label: Callable[[N], str] | None = None,
               color: Callable[[N], str | None] | None = None) -> str:
        """Graphviz DOT text: every node and edge; entry bold, back edges dashed."""

        def q(x: object) -> str:
            s = str(x).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            return f'"{s}"'

        back = self.back_edges() if self._entry is not None else frozenset()
        lines = [f"digraph {q(name)} {{", "  node [shape=box];"]
        for n in self._succ:
            attrs = [f"label={q(label(n) if label else n)}"]
            c = color(n) if color else None
            attrs += ["style=filled", f"fillcolor={q(c)}"] if c else []
            attrs += ["penwidth=2"] if n == self._entry else []
            lines.append(f"  {q(n)} [{', '.join(attrs)}];")
        for u, v in self.edges:
            lines.append(f"  {q(u)} -> {q(v)}{' [style=dashed]' if (u, v) in back else ''};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def dump(self) -> str:
        """Readable summary: adjacency, idom/ipdom, loop depth, loops."""
        lines = [f"CFG entry={self._entry!r} nodes={len(self._succ)} edges={len(self.edges)}"]
        if self._entry is None:
            return "\n".join(lines + [f"  {n!r} -> {list(ss)!r}" for n, ss in self._succ.items()])
        idom, ipdom = self.immediate_dominators(), self.immediate_post_dominators()
        for n, ss in self._succ.items():
            info = (f"idom={idom[n]!r} ipdom={ipdom[n]!r} depth={self.loop_depth(n)}"
                    if n in idom else "(unreachable)")
            lines.append(f"  {n!r} -> {list(ss)!r}  {info}")
        key = self._rpo_index().__getitem__
        for h, lp in self.loops().items():
            lines.append(f"  loop {h!r}: body={sorted(lp.body, key=key)!r}"
                         f" latches={sorted(lp.latches, key=key)!r} parent={lp.parent!r}"
                         f" depth={lp.depth} exits={len(lp.exits)}")
        lines.append(f"  reducible={self.is_reducible()}")
        return "\n".join(lines)
