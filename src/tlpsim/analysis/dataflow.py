"""Generic worklist dataflow solver over a :class:`~tlpsim.analysis.cfg.CFG` (bril ``df.py`` style).

Only nodes reachable from the entry are solved; edges from unreachable nodes are
ignored.  Values are treated as immutable and compared with ``!=`` to detect the
fixpoint, so ``transfer`` must be monotone over a finite-height lattice.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Generic, Literal, TypeVar

from tlpsim.analysis.cfg import CFG

__all__ = ["DataflowResult", "solve"]

N = TypeVar("N", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True)
class DataflowResult(Generic[N, V]):
    """Fixpoint values at the start (``in_``) and end (``out``) of every reachable node."""

    in_: Mapping[N, V]
    out: Mapping[N, V]


def solve(cfg: CFG[N], direction: Literal["forward", "backward"], init: V, boundary: V,
          merge: Callable[[Iterable[V]], V], transfer: Callable[[N, V], V]) -> DataflowResult[N, V]:
    """Iterate ``transfer``/``merge`` to a fixpoint with a worklist.

    forward:  ``in[n] = merge(out[p] for preds p)``, ``out[n] = transfer(n, in[n])``.
    backward: ``out[n] = merge(in[s] for succs s)``, ``in[n] = transfer(n, out[n])``.
    ``boundary`` is merged into ``in[entry]`` (forward) or ``out[x]`` of every exit
    node ``x`` (backward); all other values start at ``init``.  ``merge`` always
    receives at least one value.
    """
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward', not {direction!r}")
    reach = cfg.reachable()
    rpo = cfg.reverse_postorder()

    def preds(n: N) -> list[N]:
        return [p for p in cfg.predecessors(n) if p in reach]

    forward = direction == "forward"
    if forward:
        order, sources, sinks, boundary_nodes = rpo, preds, cfg.successors, {cfg.entry}
    else:
        order, sources, sinks = rpo[::-1], cfg.successors, preds
        boundary_nodes = set(cfg.exit_nodes())

    before = {n: init for n in rpo}  # merged value flowing into n's transfer
    after = {n: init for n in rpo}  # value produced by n's transfer
    work, queued = deque(order), set(order)
    while work:
        n = work.popleft()
        queued.discard(n)
        vals = [after[m] for m in sources(n)]
        if n in boundary_nodes:
            vals.insert(0, boundary)
        before[n] = merge(vals)
        new = transfer(n, before[n])
        if new != after[n]:
            after[n] = new
            for m in sinks(n):
                if m not in queued:
                    queued.add(m)
                    work.append(m)
    ins, outs = (before, after) if forward else (after, before)
    return DataflowResult(MappingProxyType(ins), MappingProxyType(outs))
