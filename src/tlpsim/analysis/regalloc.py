"""Physical register allocation: PTX virtual registers -> 32-bit physical registers.

The interference graph comes from GPU-aware liveness (:mod:`tlpsim.analysis.liveness`):

* a register written at ``i`` (hard or soft write) interferes with every other
  register live after ``i`` and with the other registers ``i`` writes;
* registers that become live at a block entry without a write (the entry block's
  live-ins, and values GPU-aware liveness does not carry into a predecessor that
  cannot hold them) interfere with everything live at that entry.

Together these guarantee that two registers live at the same point (before or
after any instruction) never share a physical register.  Colouring is
Chaitin-Briggs without spilling: several greedy orders (smallest-last
elimination, maximum cardinality search -- optimal for the chordal graphs of
SSA-like code --, and first-definition order) each assign the lowest free aligned
base, and the order needing the fewest registers wins.  A value of ``w`` units
(``.b64``: 2, ``.b128``: 4) takes ``w`` consecutive registers starting at a
multiple of ``w``.  Predicates are coloured separately and not counted in
``n_regs``.  In unreachable code only the results of one instruction interfere.

Banks: :func:`bank_of` is GPGPU-Sim's default mapping ``(warp_id + reg) % n_banks``;
any function ``(phys_reg, warp_id, n_banks) -> bank`` can replace it
(:data:`BANK_FUNCTIONS` names the built-in ones).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.analysis.liveness import Liveness, def_use, liveness, register_units
from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.ir import Function

__all__ = ["BANK_FUNCTIONS", "Allocation", "BankFunction", "InterferenceGraph", "allocate", "bank_of",
           "bank_unshifted", "check_allocation", "compare_with_ptxas", "interference_graph"]

BankFunction = Callable[[int, int, int], int]


def bank_of(phys_reg: int, warp_id: int, n_banks: int) -> int:
    """GPGPU-Sim's register bank: ``(warp_id + reg) % n_banks`` (``bank_warp_shift``)."""
    return (warp_id + phys_reg) % n_banks


def bank_unshifted(phys_reg: int, warp_id: int, n_banks: int) -> int:
    """Every warp's register ``r`` in bank ``r % n_banks``."""
    return phys_reg % n_banks


BANK_FUNCTIONS: Mapping[str, BankFunction] = MappingProxyType({"gpgpusim": bank_of, "unshifted": bank_unshifted})


# ------------------------------------------------------------------ interference


@dataclass(frozen=True)
class InterferenceGraph:
    """Undirected graph over virtual registers; ``width`` in 32-bit units (0: predicate)."""

    adj: Mapping[str, frozenset[str]]
    width: Mapping[str, int]
    first_def: Mapping[str, int]  # index of the first instruction referencing the register

    def interferes(self, a: str, b: str) -> bool:
        return b in self.adj.get(a, ())

    @property
    def n_edges(self) -> int:
        return sum(len(v) for v in self.adj.values()) // 2


def interference_graph(fn: Function, live: Liveness | None = None) -> InterferenceGraph:
    """Interference of every register ``fn`` references (predicates only with predicates)."""
    live = live if live is not None else liveness(fn, gpu_aware=True)
    units = register_units(fn)
    adj: dict[str, set[str]] = {}
    first: dict[str, int] = {}
    for d in def_use(fn):
        for r in sorted(d.uses | d.defs):
            if r not in adj:
                adj[r] = set()
                first[r] = d.index

    def edge(a: str, b: str) -> None:
        if a != b and (units[a] == 0) == (units[b] == 0):
            adj[a].add(b)
            adj[b].add(a)

    cfg = kernel_cfg(fn)
    for b in cfg.reverse_postorder():
        blk = fn.blocks[b]
        entry_live = live.ins[blk.start]
        preds = [p for p in cfg.predecessors(b) if p in live.block_out]
        carried = (frozenset.intersection(*(live.block_out[p] for p in preds))
                   if preds and b != cfg.entry else frozenset())  # the kernel start precedes the entry
        for r in entry_live - carried:  # born at the block entry without a write
            for o in entry_live:
                edge(r, o)
        for i in range(blk.start, blk.end):
            defs = live.def_use[i].defs
            for r in defs:
                for o in live.outs[i]:
                    edge(r, o)
    for d in live.def_use:  # an instruction's results are distinct (unreachable code too)
        for r in d.defs:
            for o in d.defs:
                edge(r, o)
    return InterferenceGraph(MappingProxyType({r: frozenset(s) for r, s in adj.items()}),
                             MappingProxyType({r: units[r] for r in adj}), MappingProxyType(first))


# ------------------------------------------------------------------ colouring


def _greedy(order: Iterable[str], adj: Mapping[str, frozenset[str]], width: Mapping[str, int]) -> tuple[dict, int]:
    colour: dict[str, int] = {}
    top = 0
    for v in order:
        w = max(1, width[v])
        busy: set[int] = set()
        for n in adj[v]:
            c = colour.get(n)
            if c is not None:
                busy.update(range(c, c + max(1, width[n])))
        base = 0
        while any(u in busy for u in range(base, base + w)):
            base += w
        colour[v] = base
        top = max(top, base + w)
    return colour, top


def _smallest_last(nodes: list[str], adj, width) -> list[str]:
    """Chaitin/Briggs simplify order: repeatedly remove the node whose remaining
    neighbours occupy the fewest units; colour in reverse removal order."""
    deg = {v: sum(max(1, width[n]) for n in adj[v]) for v in nodes}
    key = {v: k for k, v in enumerate(nodes)}
    heap = [(deg[v], key[v], v) for v in nodes]
    heapq.heapify(heap)
    removed: set[str] = set()
    order = []
    while heap:
        d, _, v = heapq.heappop(heap)
        if v in removed or d != deg[v]:
            continue
        removed.add(v)
        order.append(v)
        for n in adj[v]:
            if n not in removed:
                deg[n] -= max(1, width[v])
                heapq.heappush(heap, (deg[n], key[n], n))
    return order[::-1]


def _mcs(nodes: list[str], adj) -> list[str]:
    """Maximum cardinality search: a perfect elimination order (reversed) for chordal graphs."""
    key = {v: k for k, v in enumerate(nodes)}
    weight = dict.fromkeys(nodes, 0)
    heap = [(0, key[v], v) for v in nodes]
    heapq.heapify(heap)
    done: set[str] = set()
    order = []
    while heap:
        w, _, v = heapq.heappop(heap)
        if v in done or -w != weight[v]:
            continue
        done.add(v)
        order.append(v)
        for n in adj[v]:
            if n not in done:
                weight[n] += 1
                heapq.heappush(heap, (-weight[n], key[n], n))
    return order


def _colour(nodes: list[str], g: InterferenceGraph) -> tuple[dict[str, int], int, str]:
    if not nodes:
        return {}, 0, "empty"
    nodes = sorted(nodes, key=lambda v: (g.first_def[v], v))
    adj, width = g.adj, g.width
    orders = {"smallest-last": _smallest_last(nodes, adj, width), "mcs": _mcs(nodes, adj), "program": nodes}
    best = None
    for name, order in orders.items():
        for wide_first in (False, True):
            o = sorted(order, key=lambda v: -width[v]) if wide_first else order
            colour, top = _greedy(o, adj, width)
            if best is None or top < best[1]:
                best = (colour, top, name + ("+wide-first" if wide_first else ""))
    return best


# ------------------------------------------------------------------ result


@dataclass(frozen=True)
class Allocation:
    """Virtual -> physical register map of one kernel.

    ``phys[v]`` is the first physical register of ``v``; ``v`` occupies
    ``width[v]`` consecutive registers.  ``n_regs`` is the registers per thread;
    ``pred_regs`` the predicate registers (mapped by ``pred_phys``).
    """

    phys: Mapping[str, int]
    n_regs: int
    pred_regs: int
    pred_phys: Mapping[str, int] = field(default_factory=dict)
    width: Mapping[str, int] = field(default_factory=dict)
    max_live: int = 0  # lower bound: max GPU-aware register pressure
    ordering: str = ""

    def __post_init__(self) -> None:
        for name in ("phys", "pred_phys", "width"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def regs_of(self, vreg: str) -> tuple[int, ...]:
        """Physical registers of ``vreg`` (empty for a predicate)."""
        if vreg not in self.phys:
            return ()
        base = self.phys[vreg]
        return tuple(range(base, base + self.width.get(vreg, 1)))

    def banks(self, vreg: str, warp_id: int, n_banks: int, bank_fn: BankFunction = bank_of) -> tuple[int, ...]:
        return tuple(bank_fn(r, warp_id, n_banks) for r in self.regs_of(vreg))

    def renumbered(self, mapping: Mapping[int, int], ordering: str) -> Allocation:
        """The same allocation with physical register ``r`` renamed ``mapping[r]``."""
        return Allocation({v: mapping[p] for v, p in self.phys.items()}, self.n_regs, self.pred_regs,
                          self.pred_phys, self.width, self.max_live, ordering)


def allocate(fn: Function, live: Liveness | None = None) -> Allocation:
    """Allocate ``fn``'s registers (run it on the flattened kernel); cached on the function
    when ``live`` is the default GPU-aware liveness."""
    default = live is None
    if default and "regalloc" in fn.analyses:
        return fn.analyses["regalloc"]
    live = live if live is not None else liveness(fn, gpu_aware=True)
    g = interference_graph(fn, live)
    rf = [v for v, w in g.width.items() if w > 0]
    preds = [v for v, w in g.width.items() if w == 0]
    phys, n_regs, how = _colour(rf, g)
    pphys, n_preds, _ = _colour(preds, g)
    alloc = Allocation(phys, n_regs, n_preds, pphys, {v: g.width[v] for v in rf},
                       max(live.pressure_profile, default=0), how)
    if default:
        fn.analyses["regalloc"] = alloc
        fn.analyses["interference"] = g  # spread_allocation starts from the same graph
    return alloc


def check_allocation(fn: Function, alloc: Allocation, live: Liveness | None = None) -> list[str]:
    """Problems of ``alloc`` (empty when valid): at every instruction, the registers
    live before it, and those live after it plus those it writes, must occupy
    disjoint physical registers; wide values must be aligned."""
    live = live if live is not None else liveness(fn, gpu_aware=True)
    errors: list[str] = []
    for v, p in alloc.phys.items():
        w = alloc.width.get(v, 1)
        if p % w or p + w > alloc.n_regs:
            errors.append(f"{v}: base {p} width {w} misaligned or beyond {alloc.n_regs}")

    def disjoint(i: int, where: str, regs: Iterable[str]) -> None:
        owner: dict[int, str] = {}
        powner: dict[int, str] = {}
        for v in sorted(regs):
            if v in alloc.pred_phys:
                slots, table = (alloc.pred_phys[v],), powner
            else:
                slots, table = alloc.regs_of(v), owner
            for s in slots:
                if s in table:
                    errors.append(f"instr {i} {where}: {v} and {table[s]} share register {s}")
                table[s] = v

    for i in range(len(fn.instructions)):
        disjoint(i, "live-in", live.ins[i])
        disjoint(i, "live-out+defs", live.outs[i] | live.def_use[i].defs)
    return errors


def compare_with_ptxas(program: Any) -> list[tuple[str, int, int | None]]:
    """``(kernel, our registers, ptxas registers)`` for every kernel of a
    :class:`~tlpsim.frontend.loader.Program` that can be flattened (kernels calling
    external functions such as ``vprintf`` are skipped); ptxas is None if unknown."""
    from tlpsim.frontend.inline import flatten_kernel

    rows = []
    for name, kernel in program.module.kernels.items():
        try:
            flat = flatten_kernel(program.module, kernel)
        except UnsupportedPTX:
            continue
        res = program.resources.get(name)
        rows.append((name, allocate(flat).n_regs, res.registers if res is not None else None))
    return rows
