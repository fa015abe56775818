"""Physical register assignment within the compiler's register budget.

:func:`~tlpsim.analysis.regalloc.allocate` packs a kernel's values into the fewest
physical registers.  ptxas does not: it reports (and the hardware reserves) a
per-thread count that is usually larger, and spreads values over all of it.
:func:`spread_allocation` assigns the same values to physical registers
``0 .. n_regs - 1``, where ``n_regs`` is the compiler's count (or the packed
count when that is larger, since nothing spills), as a production allocator
does:

* **bank-aware**: registers one instruction reads together are placed in
  different register-file banks where the interference allows.  Two registers
  ``a`` and ``b`` of one warp share a bank exactly when
  ``a % n_banks == b % n_banks`` under GPGPU-Sim's ``(warp_id + reg) % n_banks``
  and under the unshifted mapping alike, so the assignment is the same for every
  warp.  A conflict is weighted by the reading instruction's estimated execution
  count (``10 ** loop depth``, the spill-cost estimate of
  :mod:`tlpsim.analysis.weights`).
* **spreading**: values take registers round-robin over the whole budget (the
  next free register after the last one assigned), rather than the lowest free
  one, so a register is not reused the moment it dies.
* **exact**: the highest register any instruction names is ``n_regs - 1``, so
  the registers the timing model sees are exactly those occupancy reserves.

The assignment starts from the packed allocation (valid by construction) and
moves one value at a time, in order of first reference, to a register free of
every value it interferes with, so every intermediate state -- and the result --
is a valid allocation (:func:`~tlpsim.analysis.regalloc.check_allocation`).
"""

from __future__ import annotations

from collections.abc import Mapping

from tlpsim.analysis.liveness import Liveness, def_use, liveness
from tlpsim.analysis.regalloc import Allocation, InterferenceGraph, allocate, interference_graph
from tlpsim.analysis.weights import block_weights
from tlpsim.frontend.ir import Function

__all__ = ["bank_conflicts", "named_registers", "spread_allocation"]


def _co_reads(fn: Function, width: Mapping[str, int]) -> dict[str, dict[str, float]]:
    """For each RF value, the values read by the same instructions, with the summed
    execution weight of those instructions."""
    bw = block_weights(fn)
    out: dict[str, dict[str, float]] = {}
    for ins, d in zip(fn.instructions, def_use(fn)):
        w = bw[ins.block]
        if not w:
            continue
        regs = sorted({r for r in d.uses if width.get(r, 0) > 0})
        for k, a in enumerate(regs):
            for b in regs[k + 1:]:
                pa = out.setdefault(a, {})
                pa[b] = pa.get(b, 0.0) + w
                pb = out.setdefault(b, {})
                pb[a] = pb.get(a, 0.0) + w
    return out


def named_registers(fn: Function, alloc: Allocation) -> frozenset[int]:
    """Physical registers some instruction reads or writes (a value is named when it is
    read: a result no instruction reads is dead, and the timing model does not write it)."""
    out: set[int] = set()
    for d in def_use(fn):
        for r in d.uses:
            out.update(alloc.regs_of(r))
    return frozenset(out)


def bank_conflicts(fn: Function, alloc: Allocation, n_banks: int) -> float:
    """Extra bank reads (reads beyond the first in each bank) of every instruction,
    weighted by its estimated execution count: what the assignment costs in conflicts."""
    bw = block_weights(fn)
    total = 0.0
    for ins, d in zip(fn.instructions, def_use(fn)):
        regs = {p for r in d.uses for p in alloc.regs_of(r)}
        per: dict[int, int] = {}
        for p in regs:
            per[p % n_banks] = per.get(p % n_banks, 0) + 1
        total += bw[ins.block] * sum(c - 1 for c in per.values())
    return total


class _Placer:
    """The current assignment and the moves that keep it valid."""

    def __init__(self, g: InterferenceGraph, start: Mapping[str, int], n_regs: int, n_banks: int,
                 partners: Mapping[str, Mapping[str, float]]) -> None:
        self.adj, self.n_regs, self.n_banks = g.adj, n_regs, max(1, n_banks)
        self.width = {v: max(1, w) for v, w in g.width.items() if w > 0}
        self.base = dict(start)
        self.partners = partners

    def free_bases(self, v: str) -> list[int]:
        """Aligned bases where ``v`` overlaps no value it interferes with (its own included)."""
        w = self.width[v]
        busy = [False] * self.n_regs
        for n in self.adj[v]:
            b = self.base.get(n)
            if b is not None:
                for r in range(b, b + self.width[n]):
                    busy[r] = True
        return [c for c in range(0, self.n_regs - w + 1, w) if not any(busy[c:c + w])]

    def bank_penalty(self, v: str) -> list[float]:
        """Per bank, the weight of reads ``v`` shares with a value holding a register there."""
        pen = [0.0] * self.n_banks
        for u, wt in self.partners.get(v, {}).items():
            b = self.base.get(u)
            if b is not None:
                for r in range(b, b + self.width[u]):
                    pen[r % self.n_banks] += wt
        return pen

    def place(self, v: str, cursor: int) -> int:
        """Move ``v`` to its least-conflicting free base, the first at or after ``cursor``
        (round robin) among equals; returns the register after it."""
        w, nb = self.width[v], self.n_banks
        pen = self.bank_penalty(v)
        best = None
        for c in self.free_bases(v):
            cost = sum(pen[(c + k) % nb] for k in range(w))
            key = (cost, (c - cursor) % self.n_regs)
            if best is None or key < best[0]:
                best = (key, c)
        assert best is not None  # its current base is always free
        self.base[v] = best[1]
        return (best[1] + w) % self.n_regs


def spread_allocation(fn: Function, n_regs: int, n_banks: int, live: Liveness | None = None,
                      packed: Allocation | None = None) -> Allocation:
    """``fn``'s values in physical registers ``0 .. max(n_regs, packed) - 1``, spread and
    bank-aware (module docstring). ``n_banks``: the banks one warp's registers rotate
    through (the RF's banks, or one scheduler's share of them in the sub-core model).
    ``packed``, the starting point, defaults to :func:`~tlpsim.analysis.regalloc.allocate`."""
    default = live is None
    live = live if live is not None else liveness(fn, gpu_aware=True)
    packed = packed if packed is not None else allocate(fn, None if default else live)
    g = fn.analyses.get("interference") if default else None
    g = g if g is not None else interference_graph(fn, live)
    total = max(n_regs, packed.n_regs)
    rf = sorted((v for v in packed.phys), key=lambda v: (g.first_def[v], v))
    placer = _Placer(g, packed.phys, total, n_banks, _co_reads(fn, g.width))
    cursor = 0
    for v in rf:
        cursor = placer.place(v, cursor)
    _name_the_top(fn, placer, rf, total)
    return Allocation(placer.base, total, packed.pred_regs, packed.pred_phys, packed.width, packed.max_live,
                      packed.ordering + "+spread")


def _name_the_top(fn: Function, placer: _Placer, rf: list[str], total: int) -> None:
    """Move a value some instruction reads into the last register when none holds it
    (fewer values than registers, or the round robin left it free)."""
    named = {r for d in def_use(fn) for r in d.uses}
    top = max((placer.base[v] + placer.width[v] for v in rf if v in named), default=0)
    if top >= total:
        return
    for v in sorted((v for v in rf if v in named), key=lambda v: -placer.base[v]):
        w = placer.width[v]
        if (total - w) % w == 0 and total - w in placer.free_bases(v):
            placer.base[v] = total - w
            return
