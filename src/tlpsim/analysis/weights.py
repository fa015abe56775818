"""Static register reference weights and the EXPARS register order.

EXPARS (section 3.2) sorts a kernel's registers by reference weight so that the
hottest get the lowest indices: with a split point ``Start_Reg`` the registers
``< Start_Reg`` stay in the register file and the rest go to the scratchpad, so
the split keeps as many references as possible in the RF.

Weight of a virtual register: the sum over its references (each register read
operand -- a repeated operand counts twice -- and each write) of
``loop_weight ** depth`` where ``depth`` is the natural-loop nesting depth of the
instruction's block.  ``loop_weight`` is the assumed trip count of every loop
(default 10, the classic spill-cost estimate); pass ``trip_counts`` (loop header
block -> estimated trips) to override it per loop, the product over the enclosing
loops then being used.  Predicates are not RF registers and get no weight.

Physical weights: a reference to a ``w``-unit value reads or writes all ``w``
physical registers, so each of them gets the value's weight.

Renumbering keeps the allocation valid: physical registers that wide values tie
together (aligned pairs/quads) move as one aligned block, and blocks are placed
hottest first, each at the lowest free aligned position, never past the original
register count (a placement that would need more registers is skipped in favour
of the next-hottest block that fits).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.analysis.liveness import def_use, register_units
from tlpsim.analysis.regalloc import Allocation, allocate
from tlpsim.frontend.ir import Function

__all__ = ["RegisterWeights", "block_weights", "reference_weights", "register_weights"]


@dataclass(frozen=True)
class RegisterWeights:
    """Reference weights of one kernel and its EXPARS-ordered allocation."""

    vreg: Mapping[str, float]  # virtual register -> weighted references
    phys: tuple[float, ...]  # per physical register of the original allocation
    mapping: Mapping[int, int]  # original physical register -> EXPARS index
    allocation: Allocation  # the reordered allocation (hot registers low)
    ordered: tuple[float, ...]  # per EXPARS index: weight (mostly non-increasing)
    coverage: tuple[float, ...]  # coverage[s]: fraction of weighted references to registers < s

    @property
    def total(self) -> float:
        return sum(self.ordered)

    def rf_fraction(self, start_reg: int) -> float:
        """Fraction of weighted references that stay in the RF with split ``start_reg``."""
        return self.coverage[max(0, min(start_reg, len(self.coverage) - 1))]


def block_weights(fn: Function, loop_weight: float = 10.0,
                  trip_counts: Mapping[int, float] | None = None) -> dict[int, float]:
    """Estimated executions of each block: the product of its enclosing loops' trip counts."""
    cfg = kernel_cfg(fn)
    loops = cfg.loops()
    w: dict[int, float] = {}
    for b in range(len(fn.blocks)):
        if b not in cfg.reachable():
            w[b] = 0.0
            continue
        weight = 1.0
        for h, lp in loops.items():
            if b in lp.body:
                weight *= (trip_counts or {}).get(h, loop_weight)
        w[b] = weight
    return w


def reference_weights(fn: Function, loop_weight: float = 10.0,
                      trip_counts: Mapping[int, float] | None = None) -> Mapping[str, float]:
    """Weighted reference count of every RF register ``fn`` references (unreachable code weighs 0)."""
    units = register_units(fn)
    bw = block_weights(fn, loop_weight, trip_counts)
    out: dict[str, float] = {}
    for ins, d in zip(fn.instructions, def_use(fn)):
        w = bw[ins.block]
        for r in d.reads:
            if units[r]:
                out[r] = out.get(r, 0.0) + w
        for r in d.defs:
            if units[r]:
                out[r] = out.get(r, 0.0) + w
    return MappingProxyType(out)


def _blocks(alloc: Allocation) -> list[tuple[int, int]]:
    """Aligned groups ``(base, size)`` of physical registers that wide values tie
    together (sizes are powers of two and aligned, so groups nest into one)."""
    size = [1] * alloc.n_regs
    for v, p in alloc.phys.items():
        w = alloc.width.get(v, 1)
        for r in range(p, p + w):
            size[r] = max(size[r], w)
    groups, r = [], 0
    while r < alloc.n_regs:
        groups.append((r, size[r]))
        r += size[r]
    return groups


def _feasible(count: Mapping[int, int], p: int, limit: int) -> bool:
    """Can ``count[s]`` aligned blocks of size ``s`` (1, 2, 4, ...) be placed in [p, limit)?

    Quads fit only in aligned quad slots, each of which spans two aligned pair
    slots; singles fit in any free register.  Generalised to powers of two by
    checking every size from the largest down.
    """
    free = limit - p
    used_slots = 0  # in units of the current size's slots, from larger blocks
    prev = None
    for s in sorted(count, reverse=True):
        slots = max(0, (limit - s) // s - (p + s - 1) // s + 1)  # aligned q in [p, limit - s]
        if prev is not None:
            used_slots = used_slots * (prev // s)
        if count[s] > slots - used_slots:
            return False
        used_slots += count[s]
        prev = s
        free -= s * count[s]
    return free >= 0


def _expars_mapping(alloc: Allocation, phys_w: list[float]) -> dict[int, int]:
    groups = _blocks(alloc)
    # hottest first (mean weight per register); on a tie the wider block first, as
    # it needs an aligned slot; then the original position
    pending = sorted(groups, key=lambda g: (-sum(phys_w[g[0]:g[0] + g[1]]) / g[1], -g[1], g[0]))
    count: dict[int, int] = {1: 0}
    for _, size in groups:
        count[size] = count.get(size, 0) + 1
    mapping: dict[int, int] = {}
    p, limit = 0, alloc.n_regs
    while pending:
        for k, (base, size) in enumerate(pending):
            if p % size:
                continue
            count[size] -= 1
            if _feasible(count, p + size, limit):
                for off in range(size):
                    mapping[base + off] = p + off
                p += size
                del pending[k]
                break
            count[size] += 1
        else:
            p += 1  # nothing fits here without overflowing later: leave a hole
    return mapping


def register_weights(fn: Function, alloc: Allocation | None = None, loop_weight: float = 10.0,
                     trip_counts: Mapping[int, float] | None = None) -> RegisterWeights:
    """Reference weights of ``fn``'s registers and the EXPARS order of ``alloc``
    (default: :func:`~tlpsim.analysis.regalloc.allocate` of ``fn``)."""
    alloc = alloc if alloc is not None else allocate(fn)
    vw = reference_weights(fn, loop_weight, trip_counts)
    phys_w = [0.0] * alloc.n_regs
    for v, p in alloc.phys.items():
        for r in range(p, p + alloc.width.get(v, 1)):
            phys_w[r] += vw.get(v, 0.0)
    mapping = _expars_mapping(alloc, phys_w)
    ordered = [0.0] * alloc.n_regs
    for old, new in mapping.items():
        ordered[new] = phys_w[old]
    total = sum(ordered)
    cov, acc = [0.0], 0.0
    for w in ordered:
        acc += w
        cov.append(acc / total if total else 1.0)
    return RegisterWeights(vw, tuple(phys_w), MappingProxyType(mapping), alloc.renumbered(mapping, alloc.ordering + "+expars"),
                           tuple(ordered), tuple(cov))
