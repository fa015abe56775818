"""Live registers at GPUDuet context-switch points.

GPUDuet (Wang et al., TACO 2018, section 6.6, "Register Context Reduction")
switches a warp out where it stalls for a long time: at the *first use* of a
register loaded from global memory, and at a *barrier*.  Only live registers are
saved, and the register context of every warp is fixed to the largest live
count over all switch points.

* Loads: ``ld``/``ldu`` from ``.global`` -- and, with ``include_generic=True``
  (default), generic ``ld`` without a state space, which may read global memory
  and then stalls just as long.
* First use of a load: every instruction reachable from the load, on some path
  that does not touch the load's destinations before it, that reads *or writes*
  one of them (the scoreboard stalls a write-after-write too; in a loop the load
  itself can be that instruction).
* Barriers: ``bar``/``barrier`` that wait (``bar.sync``, ``bar.red``,
  ``barrier.sync``, ...); not ``bar.arrive`` and not ``bar.warp.sync``.
* Live registers at a point: the warp's live registers just before the
  instruction issues (:meth:`~tlpsim.analysis.liveness.Liveness.warp_live_in` of
  GPU-aware liveness: what any lane, active or waiting on a divergent path, may
  still read), in 32-bit units; predicates are counted apart.
* Context size: the physical registers (of the kernel's allocation) that hold
  those values.  Usually equal to the live units; it can be smaller because a
  value only inactive lanes hold may share a physical register with a value of
  the active path (their lanes are disjoint), so it never exceeds the allocation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.analysis.liveness import Liveness, liveness
from tlpsim.analysis.regalloc import Allocation, allocate
from tlpsim.frontend.ir import Function, Instruction

__all__ = ["SwitchPoint", "SwitchPoints", "context_summary", "first_uses", "is_barrier", "is_global_load",
           "switch_points"]


@dataclass(frozen=True)
class SwitchPoint:
    index: int  # instruction before which the warp may be switched out
    kinds: tuple[str, ...]  # "load-use" and/or "barrier"
    loads: tuple[int, ...]  # the global loads whose first use this is
    live: frozenset[str]  # live RF registers (predicates excluded)
    live_regs: int  # their 32-bit units
    phys_regs: int  # physical registers holding them (the context to save)
    live_preds: int  # live predicate registers


@dataclass(frozen=True)
class SwitchPoints:
    """GPUDuet switch points of one kernel and its register context size."""

    points: tuple[SwitchPoint, ...]
    context_registers: int  # max physical registers to save over the points (0 without points)
    allocated_registers: int  # registers per thread the kernel is allocated
    warp_size: int = 32

    @property
    def context_bytes_per_warp(self) -> int:
        return self.context_registers * 4 * self.warp_size

    @property
    def reduction(self) -> float:
        """Context size relative to the full allocation (GPUDuet reports 44% on average)."""
        return self.context_registers / self.allocated_registers if self.allocated_registers else 0.0

    def at(self, index: int) -> SwitchPoint | None:
        return next((p for p in self.points if p.index == index), None)


def is_global_load(ins: Instruction, include_generic: bool = True) -> bool:
    return ins.base in ("ld", "ldu") and bool(ins.dsts) and (
        ins.space == "global" or (include_generic and ins.space is None))


def is_barrier(ins: Instruction) -> bool:
    """A CTA barrier the warp waits at."""
    return ins.base in ("bar", "barrier") and not ins.has("warp") and not ins.has("arrive")


def first_uses(fn: Function, load: int, live: Liveness | None = None) -> tuple[int, ...]:
    """Instructions where the warp first needs (reads or rewrites) a result of ``load``."""
    live = live if live is not None else liveness(fn)
    regs = live.def_use[load].defs
    if not regs:
        return ()
    cfg = kernel_cfg(fn)

    def successors(i: int):
        blk = fn.blocks[fn.instructions[i].block]
        if i + 1 < blk.end:
            return (i + 1,)
        return tuple(fn.blocks[s].start for s in cfg.successors(blk.index))

    found: set[int] = set()
    seen: set[int] = set()
    work = list(successors(load))
    while work:
        j = work.pop()
        if j in seen:
            continue
        seen.add(j)
        d = live.def_use[j]
        if regs & (d.uses | d.defs):
            found.add(j)
        else:
            work.extend(successors(j))
    return tuple(sorted(found))


def switch_points(fn: Function, live: Liveness | None = None, alloc: Allocation | None = None,
                  include_generic: bool = True, warp_size: int = 32) -> SwitchPoints:
    """GPUDuet switch points of ``fn`` (run it on the flattened kernel) under
    ``alloc`` (default: :func:`~tlpsim.analysis.regalloc.allocate` of ``fn``)."""
    live = live if live is not None else liveness(fn)
    alloc = alloc if alloc is not None else allocate(fn)
    reach = kernel_cfg(fn).reachable()
    kinds: dict[int, set[str]] = {}
    loads: dict[int, list[int]] = {}
    for ins in fn.instructions:
        if ins.block not in reach:
            continue
        if is_barrier(ins):
            kinds.setdefault(ins.index, set()).add("barrier")
        if is_global_load(ins, include_generic):
            for j in first_uses(fn, ins.index, live):
                kinds.setdefault(j, set()).add("load-use")
                loads.setdefault(j, []).append(ins.index)
    points = []
    for j in sorted(kinds):
        warp = live.warp_live_in(j)
        rf = frozenset(r for r in warp if not live.is_predicate(r))
        phys = {p for r in rf for p in alloc.regs_of(r)}
        points.append(SwitchPoint(j, tuple(sorted(kinds[j])), tuple(sorted(loads.get(j, ()))), rf,
                                  live.count_units(rf), len(phys), len(warp) - len(rf)))
    context = max((p.phys_regs for p in points), default=0)
    return SwitchPoints(tuple(points), context, alloc.n_regs, warp_size)


def context_summary(sp: SwitchPoints) -> Mapping[str, float]:
    """Plain numbers for reports."""
    return MappingProxyType({"points": len(sp.points), "context_registers": sp.context_registers,
                             "allocated_registers": sp.allocated_registers,
                             "context_bytes_per_warp": sp.context_bytes_per_warp, "reduction": sp.reduction})
