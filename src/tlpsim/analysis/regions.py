"""RegLess regions: Algorithm 1 of Kloosterman et al., "RegLess: Just-in-Time
Operand Staging for GPUs" (MICRO'17), section 4.

The kernel (flattened) is cut into *regions*: runs of instructions inside one basic
block (regions never span blocks, section 4.1) that the hardware schedules
atomically.  Before a warp issues a region its *input* registers are preloaded
into the operand staging unit (OSU); registers born and dead inside the region
(*interior*) never leave the OSU.

**Algorithm 1** (``CreateRegions``): the worklist starts with the basic blocks; a
region that is not valid is split at ``FindSplitPoint`` into a valid first part
and a rest that is examined again.  ``IsValid`` requires

* ``max_live`` -- the peak number of physical registers the region holds in the
  OSU at once -- at most :attr:`RegionParams.max_live` (line 18);
* the peak per OSU bank at most :attr:`RegionParams.bank_capacity` (line 20);
  bank of physical register ``r`` is ``r % n_banks`` (the paper adds the warp id,
  a rotation that leaves the per-bank peak unchanged);
* no global load together with its first use (line 22): a load of ``.global``
  (or generic) memory and the first later instruction of its block that reads or
  rewrites one of its results (what the scoreboard waits for).

``FindSplitPoint`` (lines 28-32), with ``p`` the first instruction of the second part:
``upper`` is the largest ``p`` whose first part is valid; ``lower`` the smallest
``p <= upper`` leaving the fewest load/first-use pairs together, raised to
``start + min_length`` (the paper's ``startPC + 48`` bytes, "at least six
instructions") but never past ``upper``; the split is the ``p`` in
``[lower, upper]`` with the fewest input + output registers of both parts
(ties: the larger first part).  A single instruction that alone breaks a limit
becomes a region of its own, flagged ``over_limit``.

**Occupancy** (what ``max_live`` counts): while instruction ``i`` of region ``R``
issues, the OSU must hold ``i``'s operands and every live value that ``R`` still
reads (or merges with a soft write) at or after ``i``.  Values merely passing
through (live but untouched in ``R``) are not held; an output is evictable after
its last reference in ``R``.  Counts are physical registers of the kernel's
allocation (RegLess ran on ptxas's registers); predicates live in the predicate
file and are not counted anywhere here.

**Per region** (section 4.3): ``inputs`` -- registers live at the start and
referenced in the region, plus registers it soft-defines ("registers with a soft
definition in a region are annotated for preloading", section 4.4); ``preload`` --
the same, in order of first reference; ``outputs`` -- registers it writes that
the warp (any lane, :meth:`~tlpsim.analysis.liveness.Liveness.warp_live_in`)
still needs after it; ``interior`` -- the other registers it references.
Annotations, all from warp-wide liveness:

* ``erase``: ``(instruction, register)`` where a value dies for the whole warp;
* ``evict``: the last reference in the region of a value that is still live
  (an input or output becomes eligible for eviction to L1);
* ``invalidating_reads``: inputs whose preloaded value dies in the region (the
  preload is its last read from L1, so the L1 copy is dropped);
* ``invalidate``: at the start of a block's first region, registers live after
  some predecessor (or carried around an exited loop) but dead here -- dead "due
  to control flow" (Figure 6, ``r3``).

Defaults: the paper's 512-register OSU configuration is 128 registers per
scheduler shard in 8 banks, so ``bank_capacity = 16``; the maximum per region is
not given ("so that one region cannot take up too large a fraction of the OSU"),
we use a quarter of a shard, ``max_live = 32`` (several Rodinia kernels had
regions with 20 or more concurrent live registers, section 6.6).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from statistics import mean, pstdev
from types import MappingProxyType

from tlpsim.analysis.analyzed import AnalyzedKernel, register_analysis
from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.analysis.liveness import Liveness, liveness
from tlpsim.analysis.regalloc import Allocation, allocate
from tlpsim.analysis.switch_points import is_global_load
from tlpsim.frontend.ir import Function

__all__ = ["Region", "RegionParams", "Regions", "regions", "warp_live_out"]

_EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RegionParams:
    """Limits of Algorithm 1 (see the module docstring for the defaults' sources)."""

    max_live: int = 32  # registers one region may hold in the OSU (line 18)
    bank_capacity: int = 16  # registers per OSU bank (line 20): 128 per shard / 8 banks
    n_banks: int = 8  # OSU banks (section 5.2)
    min_length: int = 6  # "startPC + 48": six 8-byte instructions (line 31)
    include_generic_loads: bool = True  # generic ld may read global memory: keep it from its use

    def __post_init__(self) -> None:
        for name in ("max_live", "bank_capacity", "n_banks", "min_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"RegionParams.{name} must be >= 1, not {getattr(self, name)}")


@dataclass(frozen=True)
class Region:
    """One region ``[start, end)`` of block ``block`` (registers are virtual names)."""

    index: int
    block: int
    start: int
    end: int  # exclusive
    inputs: frozenset[str]
    outputs: frozenset[str]
    interior: frozenset[str]
    preload: tuple[str, ...]
    max_live: int  # peak physical registers held in the OSU
    bank_usage: tuple[int, ...]  # peak per OSU bank
    input_regs: int  # physical registers preloaded
    output_regs: int  # physical registers written back if evicted
    interior_regs: int  # physical registers of interior values
    erase: tuple[tuple[int, str], ...]
    evict: tuple[tuple[int, str], ...]
    invalidating_reads: frozenset[str]
    invalidate: frozenset[str]
    ends: str  # why it ends: "block", "max_live", "bank", "load_use"
    over_limit: bool = False  # a single instruction that alone breaks a limit

    def __len__(self) -> int:
        return self.end - self.start

    @property
    def last(self) -> int:
        return self.end - 1

    @property
    def metadata_instructions(self) -> int:
        """Metadata instructions of section 5.4: a header (bank usage and up to 3
        preloads/invalidations; we assume 3 more per extra instruction) and one
        last-use flag instruction per 9 instructions; a region of at most 4
        instructions with at most 2 preloads/invalidations uses one combined one."""
        n_pi = len(self.preload) + len(self.invalidate)
        if len(self) <= 4 and n_pi <= 2:
            return 1
        return 1 + math.ceil(max(0, n_pi - 3) / 3) + math.ceil(len(self) / 9)


@dataclass(frozen=True)
class Regions:
    """The regions of one kernel, in instruction order, and their statistics."""

    function: str
    params: RegionParams
    regions: tuple[Region, ...]
    region_of: tuple[int, ...]  # instruction -> region index
    max_pressure: int = 0  # the kernel's max live registers (GPU-aware, 32-bit units)

    def __len__(self) -> int:
        return len(self.regions)

    def __iter__(self) -> Iterator[Region]:
        return iter(self.regions)

    def __getitem__(self, k: int) -> Region:
        return self.regions[k]

    def at(self, instruction: int) -> Region:
        return self.regions[self.region_of[instruction]]

    @property
    def boundaries(self) -> tuple[int, ...]:
        """First instruction of every region."""
        return tuple(r.start for r in self.regions)

    def summary(self) -> Mapping[str, float]:
        """Numbers comparable to RegLess Table 2 / Figure 19 (averages per region)."""
        rs = self.regions
        if not rs:
            return MappingProxyType({"regions": 0, "instructions": 0})
        ends = Counter(r.ends for r in rs)
        n = sum(len(r) for r in rs)
        meta = sum(r.metadata_instructions for r in rs)
        return MappingProxyType({
            "regions": len(rs), "instructions": n,
            "avg_instructions": n / len(rs),
            "avg_live": mean(r.max_live for r in rs), "std_live": pstdev(r.max_live for r in rs),
            "max_live": max(r.max_live for r in rs),
            "avg_inputs": mean(r.input_regs for r in rs), "avg_outputs": mean(r.output_regs for r in rs),
            "avg_interior": mean(r.interior_regs for r in rs),
            "over_limit": sum(r.over_limit for r in rs),
            **{f"ends_{k}": ends.get(k, 0) for k in ("block", "max_live", "bank", "load_use")},
            "metadata_instructions": meta, "code_size_increase": meta / n if n else 0.0,
        })


def warp_live_out(live: Liveness, i: int) -> frozenset[str]:
    """Registers some lane of the warp may still need after ``i`` (per-thread
    live-out plus the values lanes waiting on other paths hold)."""
    return live.outs[i] | live.exposed.get(live.block_of[i], _EMPTY)


# ------------------------------------------------------------------ algorithm


@dataclass
class _Kernel:
    """Per-kernel tables shared by the region computations."""

    fn: Function
    live: Liveness
    params: RegionParams
    phys: Mapping[str, tuple[int, ...]]  # RF registers only
    rf: frozenset[str] = _EMPTY  # their names
    refs: list[frozenset[str]] = field(default_factory=list)  # RF registers read or written
    reads: list[frozenset[str]] = field(default_factory=list)  # RF registers read or soft-written
    first_use: dict[int, int] = field(default_factory=dict)  # global load -> first in-block use

    def __post_init__(self) -> None:
        live, phys = self.live, self.phys
        self.rf = frozenset(phys)
        for d, soft in zip(live.def_use, live.soft):
            self.refs.append(frozenset(r for r in d.uses | d.defs if r in phys))
            self.reads.append(frozenset(r for r in d.uses | soft if r in phys))
        for blk in self.fn.blocks:
            for i in range(blk.start, blk.end):
                if not is_global_load(self.fn.instructions[i], self.params.include_generic_loads):
                    continue
                dst = live.def_use[i].defs
                j = next((j for j in range(i + 1, blk.end) if dst & (live.def_use[j].uses | live.def_use[j].defs)),
                         None)
                if dst and j is not None:
                    self.first_use[i] = j

    def nphys(self, regs: Iterable[str]) -> int:
        return len({p for r in regs for p in self.phys.get(r, ())})

    def grow(self, s: int, e: int) -> tuple[int, str, int, tuple[int, ...]]:
        """Extend ``[s, k)`` one instruction at a time up to ``e`` while it is valid.
        Returns ``(p, reason, peak, bank_peaks)``: ``[s, p)`` is the longest valid
        prefix (at least one instruction), ``reason`` why ``[s, p+1)`` is not
        ("" when ``p == e``), and the occupancy peaks of ``[s, p)``."""
        live, prm, phys = self.live, self.params, self.phys
        nb = prm.n_banks
        occ: list[Counter] = []  # per offset: physical register -> number of values held there
        held: list[set[str]] = []
        peak, bank_peak = 0, [0] * nb
        pending: dict[str, int] = {}  # results of loads in the region whose first use has not come
        touched: set[int] = set()

        def hold(j: int, r: str) -> None:
            held[j - s].add(r)
            for p in phys[r]:
                occ[j - s][p] += 1
            touched.add(j)

        for k in range(s, e):
            if k > s and pending.keys() & (live.def_use[k].uses | live.def_use[k].defs):
                return k, "load_use", peak, tuple(bank_peak)
            occ.append(Counter())
            held.append(set())
            touched.clear()
            for r in self.refs[k]:
                hold(k, r)
            for r in self.reads[k]:  # the value read at k stays in the OSU from where it lives
                j = k - 1
                while j >= s and r not in held[j - s] and r in live.outs[j]:
                    hold(j, r)
                    j -= 1
            new_peak, new_bank = peak, list(bank_peak)
            for j in touched:
                c = occ[j - s]
                new_peak = max(new_peak, len(c))
                per_bank = Counter(p % nb for p in c)
                for b, v in per_bank.items():
                    new_bank[b] = max(new_bank[b], v)
            reason = ("max_live" if new_peak > prm.max_live else
                      "bank" if max(new_bank, default=0) > prm.bank_capacity else "")
            if reason and k > s:
                return k, reason, peak, tuple(bank_peak)
            peak, bank_peak = new_peak, new_bank
            for r in list(pending):
                if r in live.def_use[k].uses or r in live.def_use[k].defs:
                    del pending[r]
            if k in self.first_use:
                pending.update(dict.fromkeys(live.def_use[k].defs, k))
            if reason:  # one instruction over a limit: a region of its own
                return k + 1, "over:" + reason, peak, tuple(bank_peak)
        return e, "", peak, tuple(bank_peak)

    def inputs(self, s: int, e: int) -> frozenset[str]:
        refs = _EMPTY.union(*self.refs[s:e])
        soft = _EMPTY.union(*(self.live.soft[j] for j in range(s, e)))
        return frozenset((self.live.ins[s] & refs) | (soft & refs))

    def outputs(self, s: int, e: int) -> frozenset[str]:
        defs = _EMPTY.union(*(self.live.def_use[j].defs for j in range(s, e)))
        return frozenset(r for r in defs & warp_live_out(self.live, e - 1) if r in self.phys)

    def split_point(self, s: int, e: int, upper: int) -> int:
        """FindSplitPoint: the start of the second part, in ``[s + 1, upper]``."""
        pairs = [(i, j) for i, j in self.first_use.items() if s <= i and j < e]
        together = {p: sum(1 for i, j in pairs if p <= i) for p in range(s + 1, upper + 1)}
        best = min(together.values())
        lower = min(p for p, n in together.items() if n == best)
        lower = min(max(s + self.params.min_length, lower), upper)
        live = self.live
        # first part [s, p): inputs grow with p, outputs are recomputed against live-out(p-1)
        cost1: dict[int, int] = {}
        defs: set[str] = set()
        ins_s = live.ins[s]
        inp: set[str] = set()
        for j in range(s, upper):
            d = live.def_use[j]
            inp |= (self.refs[j] & ins_s) | (live.soft[j] & self.refs[j])
            defs |= d.defs & self.rf
            p = j + 1
            if p >= lower:
                cost1[p] = self.nphys(inp) + self.nphys(defs & warp_live_out(live, j))
        # second part [p, e): walk backwards from e
        cost2: dict[int, int] = {}
        refs2: set[str] = set()
        soft2: set[str] = set()
        defs2: set[str] = set()
        wlo_end = warp_live_out(live, e - 1)
        for p in range(e - 1, lower - 1, -1):
            refs2 |= self.refs[p]
            soft2 |= live.soft[p] & self.refs[p]
            defs2 |= live.def_use[p].defs & self.rf
            if p <= upper:
                cost2[p] = self.nphys((live.ins[p] & refs2) | soft2) + self.nphys(defs2 & wlo_end)
        return min(range(lower, upper + 1), key=lambda p: (cost1[p] + cost2[p], -p))

    def annotate(self, index: int, block: int, s: int, e: int, ends: str, peak: int,
                 banks: tuple[int, ...], invalidate: frozenset[str]) -> Region:
        live = self.live
        inputs, outputs = self.inputs(s, e), self.outputs(s, e)
        referenced = _EMPTY.union(*self.refs[s:e])
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for j in range(s, e):
            for r in self.refs[j]:
                first.setdefault(r, j)
                last[r] = j
        erase, evict, inval_reads = [], [], set()
        from_preload = set(inputs)
        for j in range(s, e):
            wlo = warp_live_out(live, j)
            for r in sorted(self.refs[j]):
                if r not in wlo:
                    erase.append((j, r))
                    if r in from_preload and r in self.reads[j]:
                        inval_reads.add(r)
                elif last[r] == j:
                    evict.append((j, r))
            from_preload -= live.def_use[j].defs - live.soft[j]
        over = ends.startswith("over:")
        interior = frozenset(referenced - inputs - outputs)
        return Region(
            index=index, block=block, start=s, end=e, inputs=inputs, outputs=outputs,
            interior=interior, interior_regs=self.nphys(interior),
            preload=tuple(sorted(inputs, key=lambda r: (first[r], r))),
            max_live=peak, bank_usage=banks, input_regs=self.nphys(inputs), output_regs=self.nphys(outputs),
            erase=tuple(erase), evict=tuple(evict), invalidating_reads=frozenset(inval_reads),
            invalidate=invalidate, ends=ends.removeprefix("over:") or "block", over_limit=over)


def _dead_on_entry(fn: Function, live: Liveness, phys: Mapping[str, tuple[int, ...]]) -> dict[int, frozenset[str]]:
    """Per block: registers live after a predecessor (or carried around a loop the
    edge leaves) that no lane needs at the block's start."""
    cfg = kernel_cfg(fn)
    reach = cfg.reachable()
    loops = cfg.loops()
    out: dict[int, frozenset[str]] = {}
    for b in cfg.reverse_postorder():
        blk = fn.blocks[b]
        if b == cfg.entry or blk.start >= blk.end:
            continue
        cand: set[str] = set()
        for p in cfg.predecessors(b):
            if p not in reach:
                continue
            pb = fn.blocks[p]
            if pb.end > pb.start:
                cand |= warp_live_out(live, pb.end - 1)
            for lp in loops.values():  # values carried around a loop the edge leaves
                if p in lp.body and b not in lp.body:
                    cand |= live.warp_live_in(fn.blocks[lp.header].start) & _EMPTY.union(
                        *(warp_live_out(live, fn.blocks[la].end - 1) for la in lp.latches
                          if fn.blocks[la].end > fn.blocks[la].start))
        dead = frozenset(r for r in cand - live.warp_live_in(blk.start) if r in phys)
        if dead:
            out[b] = dead
    return out


def regions(fn: Function, live: Liveness | None = None, alloc: Allocation | None = None,
            params: RegionParams | None = None) -> Regions:
    """RegLess regions of ``fn`` (run it on the flattened kernel); cached on the
    function for the default liveness, allocation and parameters."""
    default = live is None and alloc is None and params is None
    if default and "regions" in fn.analyses:
        return fn.analyses["regions"]
    live = live if live is not None else liveness(fn)
    alloc = alloc if alloc is not None else allocate(fn)
    params = params if params is not None else RegionParams()
    phys = {v: alloc.regs_of(v) for v in alloc.phys}
    k = _Kernel(fn, live, params, MappingProxyType(phys))
    dead = _dead_on_entry(fn, live, phys)
    out: list[Region] = []
    for blk in fn.blocks:
        s, e = blk.start, blk.end
        while s < e:  # Algorithm 1: the worklist holds the rest of this block
            p, reason, peak, banks = k.grow(s, e)
            if not reason:
                reason = "block"
            elif p < e and not reason.startswith("over:"):
                p = k.split_point(s, e, p)
                _, _, peak, banks = k.grow(s, p)
            inval = dead.get(blk.index, _EMPTY) if s == blk.start else _EMPTY
            out.append(k.annotate(len(out), blk.index, s, p, reason, peak, banks, inval))
            s = p
    region_of = [0] * len(fn.instructions)
    for r in out:
        region_of[r.start:r.end] = [r.index] * len(r)
    result = Regions(fn.name, params, tuple(out), tuple(region_of), live.max_pressure)
    if default:
        fn.analyses["regions"] = result
    return result


@register_analysis("regions")
def _regions(ak: AnalyzedKernel) -> Regions:
    return regions(ak.fn, ak.liveness, ak.allocation)
