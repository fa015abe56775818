"""Register release points for register-file virtualization (RFV): Jeon, "Register
File Virtualization and Warped-DMR" (PhD thesis), sections 2.4-2.5.

RFV renames architected registers to a shared pool of physical registers and
frees a register as soon as its value is dead, so other warps can use it.  The
compiler tells the hardware where values die:

* **Per-instruction release flags** (``pir``, section 2.5.2): one bit per source
  operand -- "the register can be released after this read".  A flag is set when
  the physical register(s) of the operand hold no value *any lane of the warp*
  may still need (:meth:`~tlpsim.analysis.liveness.Liveness.warp_live_in`
  semantics: lanes waiting on another divergent path or at the reconvergence
  point keep their values), so a register read on both sides of a divergent
  branch is never released inside either side.  A register read twice by one
  instruction is flagged at its last operand only; predicates are never flagged
  (they are not in the register file).
* **Loop-carried values are never released inside their loop** (Figure 2.6(d)):
  a register live around a back edge of a loop (live into the header and out of
  a latch) is released only when all iterations are complete -- by a per-branch
  release list at the block the loop exits to, or at its last use after the loop.
* **Per-branch release lists** (``pbr``, section 2.5.3): at the start of a block,
  the registers live after some predecessor (or carried around a loop the edge
  leaves) that no lane needs any more -- typically the reconvergence point of a
  divergent branch, where registers used on only one path, or on both paths,
  die.  ``BranchRelease.reconvergence`` says whether the block is the
  reconvergence point of a divergent branch (the thesis only emits pbrs there).
* **Dead writes** (a value never read) are listed apart: a pir cannot express
  them; the timing model may free them at writeback.

Flags are computed per physical register of the kernel's allocation (the
architected registers RFV renames) and also per virtual register.

**Renaming table** (section 2.5.4): the table holds ``table_bytes`` (1 KB, 25% of
a full table) of ``ceil(log2(physical registers per SM))``-bit entries (10 bits
for 1024 warp registers of a 128 KB RF) for every resident warp (48 on the
Fermi baseline), so ``capacity = floor(8 * table_bytes / (entry_bits * warps))``
registers per warp (17) can be renamed.  Candidates are the physical registers
that are released somewhere, sorted by estimated lifetime per value instance
(instructions a value stays live after its write, i.e. "between the write point
and the next release point", divided by the number of writes), then by value
instances (fewer first), then register number; the first ``capacity`` are
renamed, the rest (the lowest ids once renumbered) are exempt and never
released.

**Metadata** (section 2.5.2-2.5.3): a pir instruction carries 18 three-bit flags
and a pbr lists up to 9 registers.  For code-size figures we count
``flag_instructions = ceil(n_instr / 18) + reconvergence points``
(:attr:`ReleasePoints.flag_instructions`); per-block pir placement and the pbr
instructions the lists actually need are reported too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tlpsim.analysis.analyzed import AnalyzedKernel, register_analysis
from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.analysis.liveness import Liveness, liveness
from tlpsim.analysis.regalloc import Allocation, allocate
from tlpsim.frontend.ir import Function

__all__ = ["BranchRelease", "ReleasePoints", "Renaming", "RenamingParams", "loop_carried", "release_points",
           "select_renaming"]

_EMPTY: frozenset[str] = frozenset()
PIR_SPAN = 18  # instructions covered by one pir flag instruction
PBR_REGS = 9  # registers listed by one pbr instruction


@dataclass(frozen=True)
class RenamingParams:
    table_bytes: int = 1024  # renaming table per SM (section 2.5.4: 1 KB)
    rf_bytes: int = 128 * 1024  # register file per SM (physical registers = rf_bytes / (warp_size * 4))
    warp_size: int = 32
    warps: int = 48  # resident warps per SM (warps per CTA x concurrent CTAs; Fermi: 48)

    @property
    def entry_bits(self) -> int:
        return max(1, math.ceil(math.log2(self.rf_bytes // (self.warp_size * 4))))

    @property
    def capacity(self) -> int:
        """Registers per warp the table can rename."""
        return (8 * self.table_bytes) // (self.entry_bits * max(1, self.warps))


@dataclass(frozen=True)
class Renaming:
    capacity: int
    candidates: tuple[int, ...]  # physical registers released somewhere, best first
    renamed: frozenset[int]
    n_exempt: int  # registers never renamed (the hardware's N)
    lifetime: Mapping[int, int]  # instructions after which the register holds a live value
    instances: Mapping[int, int]  # static writes
    releases: Mapping[int, int]  # release points (pir operands and pbr entries)


@dataclass(frozen=True)
class BranchRelease:
    block: int
    index: int  # first instruction of the block: released before it issues
    registers: frozenset[str]
    phys: tuple[int, ...]
    reconvergence: bool
    branches: tuple[int, ...]  # divergent branches reconverging here


@dataclass(frozen=True)
class ReleasePoints:
    function: str
    flags: tuple[tuple[bool, ...], ...]  # per instruction, per Liveness.reads operand
    released: tuple[frozenset[str], ...]  # virtual registers read here and dead for the warp after
    released_phys: tuple[tuple[int, ...], ...]  # physical registers freed after each instruction
    dead_writes: tuple[frozenset[str], ...]
    branch_releases: tuple[BranchRelease, ...]
    loop_carried: Mapping[int, frozenset[str]]  # loop header block -> carried registers
    held_by_loops: int  # releases suppressed because the value is loop-carried
    reconvergence_points: tuple[int, ...]  # instruction indices
    block_lengths: tuple[int, ...]
    renaming: Renaming
    phys_of: Mapping[str, tuple[int, ...]]  # virtual register -> physical registers
    reads: tuple[tuple[str, ...], ...]  # per instruction: the operands ``flags`` refer to

    @property
    def n_instructions(self) -> int:
        return len(self.flags)

    @property
    def pir_instructions(self) -> int:
        return math.ceil(self.n_instructions / PIR_SPAN)

    @property
    def pir_instructions_per_block(self) -> int:
        """pir instructions at the start of every block and every 18 instructions."""
        return sum(math.ceil(n / PIR_SPAN) for n in self.block_lengths)

    @property
    def pbr_instructions(self) -> int:
        return len(self.reconvergence_points)

    @property
    def pbr_instructions_needed(self) -> int:
        """pbr instructions the non-empty release lists need (9 registers each)."""
        return sum(math.ceil(len(b.phys) / PBR_REGS) for b in self.branch_releases if b.phys)

    @property
    def flag_instructions(self) -> int:
        """``ceil(n / 18) + reconvergence points`` (for code-size figures)."""
        return self.pir_instructions + self.pbr_instructions

    @property
    def code_size_increase(self) -> float:
        return self.flag_instructions / self.n_instructions if self.n_instructions else 0.0

    def flags_for(self, phys: Iterable[int]) -> tuple[tuple[bool, ...], ...]:
        """The pir flags restricted to operands whose registers are all in ``phys``
        (e.g. ``renaming.renamed``: exempt registers are never released)."""
        keep = frozenset(phys)
        out = []
        for i, fl in enumerate(self.flags):
            out.append(tuple(f and set(self.phys_of.get(r, ())) <= keep for f, r in zip(fl, self.reads[i])))
        return tuple(out)

    def summary(self) -> Mapping[str, float]:
        flags = sum(sum(f) for f in self.flags)
        renamed_flags = sum(sum(f) for f in self.flags_for(self.renaming.renamed))
        return MappingProxyType({
            "instructions": self.n_instructions, "release_flags": flags,
            "release_flags_renamed": renamed_flags,
            "phys_released": sum(len(p) for p in self.released_phys),
            "branch_releases": len(self.branch_releases),
            "branch_released_regs": sum(len(b.phys) for b in self.branch_releases),
            "dead_writes": sum(len(d) for d in self.dead_writes), "held_by_loops": self.held_by_loops,
            "reconvergence_points": len(self.reconvergence_points),
            "pir_instructions": self.pir_instructions, "pbr_instructions": self.pbr_instructions,
            "flag_instructions": self.flag_instructions, "code_size_increase": self.code_size_increase,
            "pir_instructions_per_block": self.pir_instructions_per_block,
            "pbr_instructions_needed": self.pbr_instructions_needed,
            "renaming_capacity": self.renaming.capacity, "renamed": len(self.renaming.renamed),
            "exempt": self.renaming.n_exempt,
        })


def _wlo(live: Liveness, i: int) -> frozenset[str]:
    return live.outs[i] | live.exposed.get(live.block_of[i], _EMPTY)


def loop_carried(fn: Function, live: Liveness) -> dict[int, frozenset[str]]:
    """Per natural loop (by header block): RF registers live around one of its back
    edges -- needed by some lane at the header and after a latch."""
    out: dict[int, frozenset[str]] = {}
    for h, lp in kernel_cfg(fn).loops().items():
        after_latch = _EMPTY.union(*(_wlo(live, fn.blocks[la].end - 1) for la in lp.latches
                                     if fn.blocks[la].end > fn.blocks[la].start))
        carried = after_latch & live.warp_live_in(fn.blocks[h].start)
        out[h] = frozenset(r for r in carried if not live.is_predicate(r))
    return out


def _divergent(fn: Function, cfg, b: int) -> bool:
    return len(cfg.successors(b)) > 1 and not fn.instructions[fn.blocks[b].end - 1].has("uni")


def release_points(fn: Function, live: Liveness | None = None, alloc: Allocation | None = None,
                   renaming: RenamingParams | None = None) -> ReleasePoints:
    """RFV release flags of ``fn`` (the flattened kernel) under ``alloc``."""
    live = live if live is not None else liveness(fn)
    alloc = alloc if alloc is not None else allocate(fn)
    renaming = renaming if renaming is not None else RenamingParams()
    cfg = kernel_cfg(fn)
    reach = cfg.reachable()
    loops = cfg.loops()
    phys_of = {v: alloc.regs_of(v) for v in alloc.phys}

    def phys(regs: Iterable[str]) -> set[int]:
        return {p for r in regs for p in phys_of.get(r, ())}

    carried = loop_carried(fn, live)
    blocked_v: dict[int, frozenset[str]] = {}
    for b in reach:
        blocked_v[b] = _EMPTY.union(*(carried[h] for h, lp in loops.items() if b in lp.body))
    flags: list[tuple[bool, ...]] = []
    released: list[frozenset[str]] = []
    released_p: list[tuple[int, ...]] = []
    dead_writes: list[frozenset[str]] = []
    held = 0
    for ins in fn.instructions:
        i, b = ins.index, ins.block
        d = live.def_use[i]
        if b not in reach:
            flags.append((False,) * len(d.reads))
            released.append(_EMPTY)
            released_p.append(())
            dead_writes.append(_EMPTY)
            continue
        wlo, blocked = _wlo(live, i), blocked_v[b]
        rf_uses = {r for r in d.uses if r in phys_of}
        dead = {r for r in rf_uses if r not in wlo}
        held += len(dead & blocked)
        dead -= blocked
        live_p = phys(wlo) | phys(blocked)
        rel_p = {p for p in phys(dead) if p not in live_p}
        rel_v = frozenset(r for r in dead if set(phys_of[r]) <= rel_p)  # the whole register is freed
        last = {r: k for k, r in enumerate(d.reads)}
        flags.append(tuple(r in rel_v and last[r] == k for k, r in enumerate(d.reads)))
        released.append(frozenset(dead))
        released_p.append(tuple(sorted(rel_p)))
        dead_writes.append(frozenset(r for r in d.defs if r in phys_of and r not in wlo and r not in blocked))

    # per-branch release lists
    reconv: dict[int, list[int]] = {}  # block -> divergent branches reconverging there
    ipdom = cfg.immediate_post_dominators()
    for b in reach:
        if _divergent(fn, cfg, b) and ipdom.get(b) is not None:
            reconv.setdefault(ipdom[b], []).append(fn.blocks[b].end - 1)
    branch: list[BranchRelease] = []
    for b in cfg.reverse_postorder():
        blk = fn.blocks[b]
        if b == cfg.entry or blk.start >= blk.end:
            continue
        cand: set[str] = set()
        for p in cfg.predecessors(b):
            pb = fn.blocks[p]
            if p in reach and pb.end > pb.start:
                cand |= _wlo(live, pb.end - 1)
            for h, lp in loops.items():
                if p in lp.body and b not in lp.body:
                    cand |= carried[h]
        wli = live.warp_live_in(blk.start)
        dying = frozenset(r for r in cand - wli - blocked_v[b] if r in phys_of)
        dp = phys(dying) - phys(wli) - phys(blocked_v[b])
        if dying or b in reconv:
            branch.append(BranchRelease(b, blk.start, dying, tuple(sorted(dp)), b in reconv,
                                        tuple(sorted(reconv.get(b, ())))))
    points = tuple(sorted(fn.blocks[b].start for b in reconv))

    result = ReleasePoints(
        function=fn.name, flags=tuple(flags), released=tuple(released), released_phys=tuple(released_p),
        dead_writes=tuple(dead_writes), branch_releases=tuple(branch),
        loop_carried=MappingProxyType(carried), held_by_loops=held, reconvergence_points=points,
        block_lengths=tuple(len(blk) for blk in fn.blocks),
        renaming=select_renaming(fn, live, alloc, released_p, branch, renaming),
        phys_of=MappingProxyType(phys_of), reads=tuple(d.reads for d in live.def_use))
    return result


def select_renaming(fn: Function, live: Liveness, alloc: Allocation, released_phys: Iterable[Iterable[int]],
                    branch: Iterable[BranchRelease], params: RenamingParams | None = None) -> Renaming:
    """Section 2.5.4: pick the registers to rename under the table-size limit."""
    params = params if params is not None else RenamingParams()
    reach = kernel_cfg(fn).reachable()
    lifetime = dict.fromkeys(range(alloc.n_regs), 0)
    instances = dict.fromkeys(range(alloc.n_regs), 0)
    releases = dict.fromkeys(range(alloc.n_regs), 0)
    for ins in fn.instructions:
        if ins.block not in reach:
            continue
        for p in {p for r in _wlo(live, ins.index) for p in alloc.regs_of(r)}:
            lifetime[p] += 1
        for p in {p for r in live.def_use[ins.index].defs for p in alloc.regs_of(r)}:
            instances[p] += 1
    for ps in released_phys:
        for p in ps:
            releases[p] += 1
    for br in branch:
        for p in br.phys:
            releases[p] += 1
    cands = sorted((p for p in range(alloc.n_regs) if releases[p]),
                   key=lambda p: (lifetime[p] / max(1, instances[p]), instances[p], p))
    renamed = frozenset(cands[:params.capacity])
    return Renaming(params.capacity, tuple(cands), renamed, alloc.n_regs - len(renamed),
                    MappingProxyType(lifetime), MappingProxyType(instances), MappingProxyType(releases))


@register_analysis("release_points")
def _release_points(ak: AnalyzedKernel) -> ReleasePoints:
    return release_points(ak.fn, ak.liveness, ak.allocation)
