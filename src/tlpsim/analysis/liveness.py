"""Register liveness over the PTX IR: def/use sets, standard and GPU-aware liveness.

Registers only: special registers (``%tid.x``), symbols and immediates are not
variables.  Predicates take part (guards and ``setp`` results are ordinary
uses/defs) but are flagged: they live in the predicate file, not the RF, so they
count 0 towards register units.  Everything else counts ``ceil(bytes / 4)``
32-bit units (``.b64``/``.f64``: 2, ``.b128``: 4, 8/16-bit types: 1).
Operands: a ``Vec`` destination defines each element (``_`` sinks nothing); a
``Vec`` source, the base register of an ``Address`` and a guard are uses.

**Soft definitions** (RegLess, Kim et al., MICRO'17, section 4.4): a write under
a possibly partial active mask updates only the active lanes, so it must not end
the live range of the values other lanes hold.  With ``gpu_aware=True`` a write
of ``r`` at instruction ``i`` in block ``B`` is *soft* (does not kill) if

* it is guarded (``@p``) and some earlier value of ``r`` may reach ``i`` -- unless
  a later write in the same block under ``@!p`` completes it with no read of
  ``r`` or write of ``p`` in between; or
* ``r`` is *exposed* at ``B``: live in lanes that are inactive while the warp runs
  ``B``.  ``soft_rule`` chooses how that is decided:

  - ``"ipdom"`` (default): for every divergent branch block ``D`` (two or more
    successors, not ``.uni``) whose region -- the blocks reachable from ``D``'s
    successors before its immediate post-dominator ``R`` (the SIMT reconvergence
    point) -- contains ``B``: ``r`` is live into ``R`` (lanes that finished their
    path wait there; this covers lanes that left a loop, and a sibling path of an
    if/else that ran first) or into a successor ``S`` of ``D`` that does not
    dominate ``B`` (lanes that have not run their path yet).
  - ``"regless"``: Algorithm 2 of the paper verbatim: some strict dominator ``D``
    of ``B`` with no reconvergence point in between (no strict post-dominator of
    ``D`` dominates ``B``) branches to a successor ``S`` that does not dominate
    ``B`` and ``r`` is live on the edge ``D -> S``.  It misses writes in the body
    of a loop whose exit is at the bottom (the exiting block does not dominate
    the body) and values written first by a sibling path.
  - ``"mask"``: every write in a block that does not post-dominate the entry block
    (the active mask may be partial there) is soft if some earlier value of the
    register may reach it.  Most conservative: temporaries of loops inside
    divergent code stay live around the whole loop.

Exposure consults liveness, which depends on which writes are soft: we iterate
from standard liveness until the soft sets stop growing (least fixpoint).

A soft write of a register no path has defined yet (first write of a divergent
if/else arm) must not make the register live back to the kernel entry: in
GPU-aware mode liveness does not flow into a block's exit for registers that no
path from the entry through that block defines (``defined_out``).  At
instruction level the equation ``live_in(i) = use(i) | (live_out(i) - hard_def(i))``
holds exactly; at block ends ``live_out = union(live_in(succ)) & defined_out``.

Per-thread liveness does not include values that only *inactive* lanes need and
the current path never touches; :meth:`Liveness.warp_live_in` adds them (the
``"ipdom"`` exposure of the block), which is what whole-warp state operations --
context switches, register release -- must keep.  ``last_use_flags`` are
per-thread deaths; ``warp_last_use_flags`` additionally require the register not
to be exposed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from tlpsim.analysis.cfg import CFG
from tlpsim.analysis.dataflow import solve
from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.frontend.ir import Address, Function, Reg, Vec
from tlpsim.frontend.ptx_lex import TYPE_SIZE

__all__ = ["DefUse", "Liveness", "SoftRule", "def_use", "liveness", "register_units", "regs_in"]

SoftRule = Literal["ipdom", "regless", "mask"]
_RULES = ("ipdom", "regless", "mask")
_EMPTY: frozenset[str] = frozenset()
_ALL: frozenset[str] = frozenset({"<every register>"})  # "mask" rule: any earlier value is exposed


# ------------------------------------------------------------------ def / use


@dataclass(frozen=True, slots=True)
class DefUse:
    """Registers one instruction reads and writes (predicates included)."""

    index: int
    uses: frozenset[str]
    defs: frozenset[str]
    reads: tuple[str, ...]  # every register read in operand order (guard first), repeats kept
    guard: Reg | None


def regs_in(op, out: list[str]) -> None:
    """Append the names of the registers `op` names (an address's base, a vector's elements)."""
    cls = op.__class__
    if cls is Reg:
        out.append(op.name)
    elif cls is Address:
        if op.base.__class__ is Reg:
            out.append(op.base.name)
    elif cls is Vec:
        for e in op.elems:
            regs_in(e, out)


def def_use(fn: Function) -> tuple[DefUse, ...]:
    """Per-instruction def/use sets, cached on the function."""
    cached = fn.analyses.get("def_use")
    if cached is not None:
        return cached
    out = []
    for ins in fn.instructions:
        reads: list[str] = []
        if ins.guard is not None:
            reads.append(ins.guard.name)
        for op in ins.srcs:
            regs_in(op, reads)
        defs: list[str] = []
        for op in ins.dsts:
            regs_in(op, reads if op.__class__ is Address else defs)  # an address base is read
        out.append(DefUse(ins.index, frozenset(reads), frozenset(defs), tuple(reads), ins.guard))
    result = tuple(out)
    fn.analyses["def_use"] = result
    return result


def register_units(fn: Function) -> Mapping[str, int]:
    """32-bit register units of every declared or referenced register (predicates 0;
    ``.v2``/``.v4`` register declarations multiply)."""
    cached = fn.analyses.get("register_units")
    if cached is not None:
        return cached
    vec: dict[str, int] = {}
    for d in fn.reg_decls:
        if d.vec > 1:
            names = [d.prefix] if d.count is None else [f"{d.prefix}{k}" for k in range(d.count)]
            vec.update(dict.fromkeys(names, d.vec))
    units: dict[str, int] = {}
    for name, rtype in fn.reg_types.items():
        units[name] = 0 if rtype == "pred" else max(1, -(-TYPE_SIZE.get(rtype, 4) * vec.get(name, 1) // 4))
    for du in def_use(fn):
        for r in du.uses | du.defs:
            units.setdefault(r, 1)  # undeclared (the parser rejects this): assume one register
    result = MappingProxyType(units)
    fn.analyses["register_units"] = result
    return result


# ------------------------------------------------------------------ result


@dataclass(frozen=True, eq=False)
class Liveness:
    """Instruction- and block-level liveness of one function (immutable).

    Instructions in blocks unreachable from the entry have empty live sets.
    """

    function: str
    gpu_aware: bool
    soft_rule: str  # "none" when not gpu_aware
    def_use: tuple[DefUse, ...]
    units: Mapping[str, int]
    block_of: tuple[int, ...]
    block_in: Mapping[int, frozenset[str]]
    block_out: Mapping[int, frozenset[str]]  # live at the block's last instruction's exit
    defined_out: Mapping[int, frozenset[str]] | None  # GPU-aware only: may hold a value at block exit
    soft: tuple[frozenset[str], ...]  # per instruction: its soft definitions
    exposed: Mapping[int, frozenset[str]]  # per block: live in lanes inactive there ("ipdom")
    ins: tuple[frozenset[str], ...]
    outs: tuple[frozenset[str], ...]
    pressure_profile: tuple[int, ...]  # per instruction, 32-bit units, see pressure()

    # -- sets
    def live_in(self, i: int, rf_only: bool = False) -> frozenset[str]:
        return self._rf(self.ins[i]) if rf_only else self.ins[i]

    def live_out(self, i: int, rf_only: bool = False) -> frozenset[str]:
        return self._rf(self.outs[i]) if rf_only else self.outs[i]

    def warp_live_in(self, i: int, rf_only: bool = False) -> frozenset[str]:
        """Registers any lane of the warp may still need when the warp is about to
        issue ``i``: ``live_in(i)`` plus the block's exposure."""
        s = self.ins[i] | self.exposed.get(self.block_of[i], _EMPTY)
        return self._rf(s) if rf_only else s

    def uses(self, i: int) -> frozenset[str]:
        return self.def_use[i].uses

    def defs(self, i: int) -> frozenset[str]:
        """All registers written by ``i`` (hard and soft)."""
        return self.def_use[i].defs

    def soft_defs(self, i: int) -> frozenset[str]:
        return self.soft[i]

    def hard_defs(self, i: int) -> frozenset[str]:
        return self.def_use[i].defs - self.soft[i]

    def is_predicate(self, reg: str) -> bool:
        return self.units.get(reg, 1) == 0

    def _rf(self, regs: Iterable[str]) -> frozenset[str]:
        return frozenset(r for r in regs if self.units.get(r, 1))

    # -- counts (32-bit units; predicates 0)
    def count_units(self, regs: Iterable[str]) -> int:
        return sum(self.units.get(r, 1) for r in regs)

    def live_in_units(self, i: int) -> int:
        return self.count_units(self.ins[i])

    def live_out_units(self, i: int) -> int:
        return self.count_units(self.outs[i])

    def pressure(self, i: int) -> int:
        """Registers needed at ``i``: ``max(|live_in|, |live_out + defs|)`` in 32-bit units."""
        return self.pressure_profile[i]

    @property
    def max_pressure(self) -> int:
        """A lower bound on the registers any allocation needs."""
        return max(self.pressure_profile, default=0)

    # -- last uses
    def reads(self, i: int) -> tuple[str, ...]:
        """The registers ``i`` reads, in operand order (guard first), with repeats."""
        return self.def_use[i].reads

    def last_uses(self, i: int) -> frozenset[str]:
        """Registers read by ``i`` whose value is dead after ``i`` (per thread)."""
        return self.def_use[i].uses - self.outs[i]

    def last_use_flags(self, i: int) -> tuple[bool, ...]:
        """Per read operand of ``i`` (see :meth:`reads`): dead after this read."""
        out = self.outs[i]
        return tuple(r not in out for r in self.def_use[i].reads)

    def warp_last_use_flags(self, i: int) -> tuple[bool, ...]:
        """Like :meth:`last_use_flags`, but dead for every lane of the warp,
        including lanes waiting on another divergent path."""
        out, exp = self.outs[i], self.exposed.get(self.block_of[i], _EMPTY)
        return tuple(r not in out and r not in exp for r in self.def_use[i].reads)

    # -- debugging / golden output
    def dump(self, fn: Function) -> str:
        """One line per instruction: ``idx  instr  | in={..} out={..} soft={..}``."""
        lines = [(f"liveness {self.function} gpu_aware={self.gpu_aware} rule={self.soft_rule} "
                  f"max_pressure={self.max_pressure}")]
        for ins in fn.instructions:
            i = ins.index
            s = f"  {i:4d} {ins!s:40s} | in={_fmt(self.ins[i])} out={_fmt(self.outs[i])}"
            lines.append(s + (f" soft={_fmt(self.soft[i])}" if self.soft[i] else ""))
        return "\n".join(lines)


def _fmt(regs: Iterable[str]) -> str:
    return "{" + ",".join(sorted(regs)) + "}"


# ------------------------------------------------------------------ analysis


def _union(vals: Iterable[frozenset[str]]) -> frozenset[str]:
    return _EMPTY.union(*vals)


def _block_liveness(fn: Function, cfg: CFG[int], du: tuple[DefUse, ...], soft: Mapping[int, frozenset[str]],
                    defined_out: Mapping[int, frozenset[str]] | None):
    """Block-level liveness (``out`` already filtered by ``defined_out``)."""
    ue: dict[int, frozenset[str]] = {}
    kill: dict[int, frozenset[str]] = {}
    for b in cfg.reverse_postorder():
        blk = fn.blocks[b]
        u: set[str] = set()
        k: set[str] = set()
        for i in range(blk.end - 1, blk.start - 1, -1):
            hard = du[i].defs - soft[i] if i in soft else du[i].defs
            u -= hard
            u |= du[i].uses
            k |= hard
        ue[b], kill[b] = frozenset(u), frozenset(k)
    if defined_out is None:
        res = solve(cfg, "backward", _EMPTY, _EMPTY, _union, lambda b, out: ue[b] | (out - kill[b]))
        return res.in_, res.out
    res = solve(cfg, "backward", _EMPTY, _EMPTY, _union,
                lambda b, out: ue[b] | ((out & defined_out[b]) - kill[b]))
    return res.in_, {b: out & defined_out[b] for b, out in res.out.items()}


def _defined_out(fn: Function, cfg: CFG[int], du: tuple[DefUse, ...]) -> Mapping[int, frozenset[str]]:
    """Registers some definition may reach at the end of each block."""
    gen = {b: _union(du[i].defs for i in range(fn.blocks[b].start, fn.blocks[b].end))
           for b in cfg.reverse_postorder()}
    return solve(cfg, "forward", _EMPTY, _EMPTY, _union, lambda b, v: v | gen[b]).out


def _divergent(fn: Function, cfg: CFG[int], b: int) -> bool:
    return len(cfg.successors(b)) > 1 and not fn.instructions[fn.blocks[b].end - 1].has("uni")


def _watch_regless(fn: Function, cfg: CFG[int]) -> dict[int, tuple[int, ...]]:
    """Algorithm 2, lines 2-11: per block B, the successors S whose edge liveness
    decides whether a write in B is soft."""
    doms, pdoms = cfg.dominators(), cfg.post_dominators()
    out: dict[int, tuple[int, ...]] = {}
    for b in cfg.reverse_postorder():
        dom_b, watch = doms[b], []
        for d in dom_b:
            if d == b or not _divergent(fn, cfg, d):
                continue
            if any(p != d and p in dom_b for p in pdoms[d]):
                continue  # the paths reconverge between d and b
            watch.extend(s for s in cfg.successors(d) if not cfg.dominates(s, b))
        out[b] = tuple(sorted(set(watch)))
    return out


def _watch_ipdom(fn: Function, cfg: CFG[int]) -> dict[int, tuple[int, ...]]:
    """Per block B: blocks whose live-in registers inactive lanes may hold while the
    warp runs B (reconvergence points and other successors of open divergent branches)."""
    ipdom = cfg.immediate_post_dominators()
    watch: dict[int, set[int]] = {b: set() for b in cfg.reverse_postorder()}
    for d in cfg.reverse_postorder():
        if not _divergent(fn, cfg, d):
            continue
        r, succs = ipdom[d], cfg.successors(d)
        seen, work = set(), [s for s in succs if s != r]
        while work:  # the divergent region of d: reachable before reconvergence at r
            n = work.pop()
            if n in seen:
                continue
            seen.add(n)
            work.extend(s for s in cfg.successors(n) if s != r and s not in seen)
        for b in seen:
            if r is not None:
                watch[b].add(r)
            watch[b].update(s for s in succs if s != r and not cfg.dominates(s, b))
    return {b: tuple(sorted(w)) for b, w in watch.items()}


def _completed_guard(fn: Function, du: tuple[DefUse, ...], i: int, reg: str) -> bool:
    """A guarded write of ``reg`` at ``i`` followed in its block by a write under the
    complementary guard, with no read of ``reg`` and no write of the guard between."""
    g = du[i].guard
    for j in range(i + 1, fn.blocks[fn.instructions[i].block].end):
        dj = du[j]
        if reg in dj.uses:
            return False
        if reg in dj.defs:
            return dj.guard is not None and dj.guard.name == g.name and dj.guard.neg != g.neg
        if g.name in dj.defs:
            return False
    return False


def _soft_defs(fn: Function, cfg: CFG[int], du: tuple[DefUse, ...], exposed: Mapping[int, frozenset[str]],
               defined_out: Mapping[int, frozenset[str]]) -> dict[int, frozenset[str]]:
    soft: dict[int, frozenset[str]] = {}
    preds = {b: [p for p in cfg.predecessors(b) if p in defined_out] for b in cfg.reverse_postorder()}
    for b in cfg.reverse_postorder():
        blk, exp = fn.blocks[b], exposed[b]
        defined = set(_union(defined_out[p] for p in preds[b]))
        for i in range(blk.start, blk.end):
            d = du[i]
            if d.defs:
                s = [r for r in d.defs if r in exp or r in defined and (
                    exp is _ALL or d.guard is not None and not _completed_guard(fn, du, i, r))]
                if s:
                    soft[i] = frozenset(s)
                defined |= d.defs
    return soft


def liveness(fn: Function, gpu_aware: bool = True, soft_rule: SoftRule = "ipdom") -> Liveness:
    """Liveness of ``fn`` (run it on the flattened kernel); cached on the function.

    ``gpu_aware=False`` is textbook liveness (every write kills); ``True`` treats
    soft definitions as non-killing, see the module docstring for ``soft_rule``.
    """
    if soft_rule not in _RULES:
        raise ValueError(f"soft_rule must be one of {_RULES}, not {soft_rule!r}")
    rule = soft_rule if gpu_aware else "none"
    key = ("liveness", rule)
    cached = fn.analyses.get(key)
    if cached is not None:
        return cached
    cfg = kernel_cfg(fn)
    du = def_use(fn)
    rpo = cfg.reverse_postorder()
    soft: dict[int, frozenset[str]] = {}
    defined_out = _defined_out(fn, cfg, du) if gpu_aware else None
    block_in, block_out = _block_liveness(fn, cfg, du, soft, defined_out)
    watch_ipdom = _watch_ipdom(fn, cfg)
    if gpu_aware:
        if rule == "mask":
            entry_pdom = cfg.post_dominators()[cfg.entry]
            exposed: dict[int, frozenset[str]] = {b: _EMPTY if b in entry_pdom else _ALL for b in rpo}
        watch = watch_ipdom if rule == "ipdom" else _watch_regless(fn, cfg) if rule == "regless" else None
        while True:
            if watch is not None:
                exposed = {b: _union(block_in[w] for w in watch[b]) for b in rpo}
            new = _soft_defs(fn, cfg, du, exposed, defined_out)
            for i, s in soft.items():  # keep it monotone
                new[i] = new.get(i, _EMPTY) | s
            if new == soft:
                break
            soft = new
            block_in, block_out = _block_liveness(fn, cfg, du, soft, defined_out)
    units = register_units(fn)
    n = len(fn.instructions)
    ins: list[frozenset[str]] = [_EMPTY] * n
    outs: list[frozenset[str]] = [_EMPTY] * n
    pressure = [0] * n
    for b in rpo:
        blk = fn.blocks[b]
        live = block_out[b]
        for i in range(blk.end - 1, blk.start - 1, -1):
            outs[i] = live
            d = du[i]
            live = d.uses | (live - (d.defs - soft[i] if i in soft else d.defs))
            ins[i] = live
            pressure[i] = max(sum(units[r] for r in live), sum(units[r] for r in outs[i] | d.defs))
    warp_exposed = {b: _union(block_in[w] for w in watch_ipdom[b]) for b in rpo}
    result = Liveness(
        function=fn.name, gpu_aware=bool(gpu_aware), soft_rule=rule, def_use=du, units=units,
        block_of=tuple(ins_.block for ins_ in fn.instructions),
        block_in=MappingProxyType(dict(block_in)), block_out=MappingProxyType(dict(block_out)),
        defined_out=None if defined_out is None else MappingProxyType(dict(defined_out)),
        soft=tuple(soft.get(i, _EMPTY) for i in range(n)), exposed=MappingProxyType(warp_exposed),
        ins=tuple(ins), outs=tuple(outs), pressure_profile=tuple(pressure))
    fn.analyses[key] = result
    return result
