"""EXPARS instruction bundles (Yu et al., "Improving Thread-level Parallelism in
GPUs Through Expanding Register File to Scratchpad Memory", TACO 2018, sections
3.2 and 3.3.4).

EXPARS keeps a CTA's hottest registers (EXPARS index ``< Start_Reg``, see
:mod:`tlpsim.analysis.weights`) in the register file and the rest in the
scratchpad (SPM).  The compiler cuts the code into *bundles*, each preceded by a
``PREF`` instruction whose bit vector names the registers the bundle uses; before
a warp may issue a bundle, the register prefetcher copies the bundle's
SPM-resident registers into the operand cache (OC).

The paper's bundle rules (1)-(4) are lost from our copy; only rule (5) survives
("a bundle should not span beyond a basic block").  We use, in this order:

1. **Basic blocks**: a bundle never spans a block (rule 5).
2. **Operand cache**: the SPM-resident physical registers a bundle reads or
   writes must fit the warp's share of the OC.  The OC is 2 KB per SM (section
   3.3.7) of 128-byte lines (one architectural register of a warp), i.e. 16
   lines, organised as 4 sets x 4 banks with bank = ``Reg % 4`` and set =
   ``(Reg // 4) % 4`` (Figure 8): register ``Reg`` of a warp can only live in line
   ``Reg % 16``.  So (a) two SPM registers of one bundle with the same
   ``Reg % 16`` conflict and end the bundle, and (b) a bundle may use at most
   ``budget = 16 lines / concurrent_bundles`` SPM registers, where
   ``concurrent_bundles = 2`` -- the Fermi SM of the paper has two warp
   schedulers (Table 2), so each can have one warp's bundle resident: **8
   registers per warp**.
3. **Length cap**: at most ``max_length = 32`` instructions, so a bundle holds its
   OC lines for a bounded time and a PREF (one 64-bit instruction, a 63-bit
   vector on Fermi) costs at most ~3% of code size in capped straight-line code.
4. **Long latency**: a global, local or generic load, a texture/surface read, a
   global atomic or a waiting barrier *ends* its bundle (it is the bundle's last
   instruction), so a warp does not keep OC lines while it waits.

A single instruction that alone breaks rule 2 is a bundle of its own, flagged
``over_budget``.

**Start_Reg**: the compiler does not know the CTA size, hence not the split the
resource allocator picks at run time (section 3.4).  But if a bundle satisfies
rule 2 for a split ``s``, it satisfies it for every larger split (its SPM
registers only shrink), so by default bundles are formed for the smallest split
EXPARS can choose: at most ``tau * R_CTA`` registers go to the SPM (Eq. 1-2,
``tau = 0.8``), so ``Start_Reg >= ceil((1 - tau) * n_regs)``.  Pass ``start_reg``
to form bundles for one split.

Per bundle: ``registers`` -- EXPARS-ordered physical registers referenced;
``spm_registers`` -- those ``>= start_reg``; ``prefetch`` -- the SPM registers
holding a value the bundle needs on entry (read, or merged by a soft write);
SPM registers only written first get an OC line without a fetch.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from statistics import mean
from types import MappingProxyType

from tlpsim.analysis.analyzed import AnalyzedKernel, register_analysis
from tlpsim.analysis.liveness import Liveness, liveness
from tlpsim.analysis.switch_points import is_barrier
from tlpsim.analysis.weights import RegisterWeights, register_weights
from tlpsim.frontend.ir import Function, Instruction

__all__ = ["Bundle", "BundleParams", "Bundles", "bundles", "default_start_reg", "is_long_latency"]


@dataclass(frozen=True)
class BundleParams:
    """Bundle limits (see the module docstring for their sources)."""

    oc_bytes: int = 2048  # operand cache per SM (section 3.3.7)
    warp_size: int = 32
    concurrent_bundles: int = 2  # bundles resident in the OC at once: one per warp scheduler (Fermi: 2)
    direct_mapped: bool = True  # register Reg of a warp can only use OC line Reg % lines (Figure 8)
    max_length: int = 32
    tau: float = 0.8  # max fraction of a CTA's registers EXPARS puts in the SPM

    def __post_init__(self) -> None:
        if self.lines < 1 or self.concurrent_bundles < 1 or self.max_length < 1:
            raise ValueError("BundleParams: oc_bytes must hold a line; concurrent_bundles and max_length >= 1")
        if not 0 < self.tau < 1:
            raise ValueError(f"BundleParams.tau must be in (0, 1), not {self.tau}")

    @property
    def lines(self) -> int:
        """OC lines (one warp register, ``warp_size * 4`` bytes, each)."""
        return self.oc_bytes // (self.warp_size * 4)

    @property
    def budget(self) -> int:
        """SPM registers one bundle may use."""
        return max(1, self.lines // self.concurrent_bundles)


@dataclass(frozen=True)
class Bundle:
    index: int
    block: int
    start: int
    end: int  # exclusive
    registers: tuple[int, ...]  # EXPARS-ordered physical registers referenced
    spm_registers: tuple[int, ...]  # those >= start_reg (the PREF bit vector)
    prefetch: tuple[int, ...]  # SPM registers fetched into the OC before the bundle issues
    ends: str  # "block", "budget", "conflict", "length", "long_latency"
    over_budget: bool = False

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Bundles:
    function: str
    params: BundleParams
    start_reg: int
    n_regs: int
    bundles: tuple[Bundle, ...]
    bundle_of: tuple[int, ...]  # instruction -> bundle index

    def __len__(self) -> int:
        return len(self.bundles)

    def __iter__(self) -> Iterator[Bundle]:
        return iter(self.bundles)

    def __getitem__(self, k: int) -> Bundle:
        return self.bundles[k]

    def at(self, instruction: int) -> Bundle:
        return self.bundles[self.bundle_of[instruction]]

    def summary(self) -> Mapping[str, float]:
        bs = self.bundles
        if not bs:
            return MappingProxyType({"bundles": 0, "instructions": 0})
        n = sum(len(b) for b in bs)
        ends = Counter(b.ends for b in bs)
        with_spm = sum(bool(b.spm_registers) for b in bs)
        return MappingProxyType({
            "bundles": len(bs), "instructions": n, "start_reg": self.start_reg, "n_regs": self.n_regs,
            "budget": self.params.budget, "avg_instructions": n / len(bs),
            "avg_registers": mean(len(b.registers) for b in bs),
            "avg_spm_registers": mean(len(b.spm_registers) for b in bs),
            "avg_prefetch": mean(len(b.prefetch) for b in bs),
            "bundles_with_spm": with_spm, "over_budget": sum(b.over_budget for b in bs),
            **{f"ends_{k}": ends.get(k, 0) for k in ("block", "budget", "conflict", "length", "long_latency")},
            "pref_instructions": len(bs), "code_size_increase": len(bs) / n,
        })


def is_long_latency(ins: Instruction) -> bool:
    """Global/local/generic loads, texture and surface reads, atomics outside shared
    memory and waiting barriers: the warp stalls for a long time after them."""
    if ins.base in ("ld", "ldu"):
        return ins.space in (None, "global", "local")
    if ins.base in ("atom", "red"):
        return ins.space != "shared"
    if ins.base in ("tex", "tld4", "suld"):
        return True
    return is_barrier(ins)


def default_start_reg(n_regs: int, tau: float = BundleParams.tau) -> int:
    """The smallest Start_Reg EXPARS may choose: at most ``tau * n_regs`` registers
    in the scratchpad."""
    return max(0, n_regs - math.floor(tau * n_regs))


def bundles(fn: Function, weights: RegisterWeights | None = None, live: Liveness | None = None,
            start_reg: int | None = None, params: BundleParams | None = None) -> Bundles:
    """EXPARS bundles of ``fn`` (the flattened kernel) for the split ``start_reg``
    (default: :func:`default_start_reg`) of the EXPARS-ordered allocation in
    ``weights`` (default :func:`~tlpsim.analysis.weights.register_weights`)."""
    weights = weights if weights is not None else register_weights(fn)
    live = live if live is not None else liveness(fn)
    params = params if params is not None else BundleParams()
    alloc = weights.allocation
    if start_reg is None:
        start_reg = default_start_reg(alloc.n_regs, params.tau)
    if start_reg < 0:
        raise ValueError(f"start_reg must be >= 0, not {start_reg}")
    du = live.def_use
    regs = [sorted({p for r in d.uses | d.defs for p in alloc.regs_of(r)}) for d in du]
    hard = [d.defs - s for d, s in zip(du, live.soft)]
    budget, lines = params.budget, params.lines
    out: list[Bundle] = []

    def close(block: int, s: int, e: int, ends: str, over: bool) -> None:
        used = sorted({p for j in range(s, e) for p in regs[j]})
        spm = [p for p in used if p >= start_reg]
        # values live on entry: read (or soft-written) before any hard write in the bundle
        written: set[str] = set()
        fetch: set[int] = set()
        for j in range(s, e):
            fetch.update(p for r in du[j].uses | live.soft[j] if r not in written
                         for p in alloc.regs_of(r) if p >= start_reg)
            written |= hard[j]
        out.append(Bundle(len(out), block, s, e, tuple(used), tuple(spm), tuple(sorted(fetch)), ends, over))

    for blk in fn.blocks:
        s = blk.start
        spm: set[int] = set()
        for j in range(blk.start, blk.end):
            new = {p for p in regs[j] if p >= start_reg}
            merged = spm | new
            slots = Counter(p % lines for p in merged)
            reason = ("length" if j - s >= params.max_length else
                      "budget" if len(merged) > budget else
                      "conflict" if params.direct_mapped and max(slots.values(), default=0) > 1 else "")
            if reason and j > s:
                close(blk.index, s, j, reason, False)
                s, spm = j, set()
                merged = new
                slots = Counter(p % lines for p in merged)
            over = ("budget" if len(merged) > budget else
                    "conflict" if params.direct_mapped and max(slots.values(), default=0) > 1 else "")
            spm = merged
            if over or is_long_latency(fn.instructions[j]):  # (over: j == s, one instruction alone)
                close(blk.index, s, j + 1, over or "long_latency", bool(over))
                s, spm = j + 1, set()
        if s < blk.end:
            close(blk.index, s, blk.end, "block", False)
    bundle_of = [0] * len(fn.instructions)
    for b in out:
        bundle_of[b.start:b.end] = [b.index] * len(b)
    return Bundles(fn.name, params, start_reg, alloc.n_regs, tuple(out), tuple(bundle_of))


@register_analysis("bundles")
def _bundles(ak: AnalyzedKernel) -> Bundles:
    return bundles(ak.fn, ak.weights, ak.liveness)
