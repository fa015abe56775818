"""EXPARS-like register split: a sketch on the port, not Kim et al.'s model.

- `expars_alloc` (resource allocator) admits a CTA the register file cannot hold
  by splitting its registers: per thread, those below a split point stay in the RF,
  the rest go to spare scratchpad (`SplitGrant`, its typed grant). CTAs the
  baseline admits keep every register in the RF.
- `expars_storage` (operand storage) reads each CTA's split from `CTAView.grant` when
  the CTA is admitted. A source or destination at or above the split (and below the
  CTA's reservation: names past it, under sm.register_count = 'ptxas_exact', hold
  nothing on the card) is read or written through the shared-memory banks: `cycles_per_access` bank cycles per warp
  register (`smem_access`, contending with shared-memory instructions), and 32
  lane accesses of the energy table's `smem` structure (`structures`).

    tlpsim run spmv --mode timing --plugin examples/plugins/expars_like.py --set sm.registers=16384 \\
        --set sm.resource_allocator=expars_alloc --set sm.operand_storage=expars_storage
"""
from dataclasses import dataclass

from tlpsim.policies.alloc.base import BaselineAllocator
from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter
from tlpsim.timing.views import Grant

ALL_IN_RF = 1 << 30              # a split above every register


@dataclass
class SplitGrant(Grant):
    split: int = ALL_IN_RF       # first register (per thread) held in the scratchpad
    spm_bytes: int = 0           # scratchpad bytes holding the CTA's registers (counted in `smem` too)
    top: int = ALL_IN_RF         # first register past the CTA's reservation (per thread)


@register("resource_allocator", "expars_alloc")
class SplitAllocator(BaselineAllocator):
    """Baseline admission, then CTAs whose upper registers live in spare scratchpad."""

    @dataclass(frozen=True)
    class Params:
        extra_ctas: int = 4      # CTA slots beyond the baseline's
        extra_warps: int = 32    # warp slots beyond the baseline's
        min_rf_regs: int = 8     # registers per thread a split CTA keeps in the RF at least

    counters = {"split_ctas": Counter("CTAs", "CTAs admitted with registers in the scratchpad"),
                "spm_bytes": Counter("bytes", "scratchpad bytes allocated to registers, summed over CTAs")}

    def max_contexts(self):
        ctas, warps = super().max_contexts()
        return ctas + self.params.extra_ctas, warps + self.params.extra_warps

    def _split(self, kres):
        """(registers per thread kept in the RF, scratchpad bytes, registers reserved per thread)
        for one more CTA, or None."""
        n, u, lim = self.need(kres), self.used, self.limits
        ctas, warps = self.max_contexts()
        if self.ctas >= ctas or u.warps + n.warps > warps:
            return None
        per_thread = n.regs // n.threads
        g = lim.reg_granularity
        in_rf = min(per_thread, (lim.registers - u.regs) // n.threads // g * g)
        spm = (per_thread - in_rf) * 4 * n.threads
        if in_rf < min(self.params.min_rf_regs, per_thread) or u.smem + n.smem + spm > lim.shared_bytes:
            return None
        return in_rf, spm, per_thread

    def fits(self, kres):
        return super().fits(kres) or self._split(kres) is not None

    def allocate(self, kres, slot):
        if super().fits(kres):
            g = super().allocate(kres, slot)
            return SplitGrant(g.threads, g.warps, g.regs, g.smem)
        in_rf, spm, top = self._split(kres)
        n = self.need(kres)
        g = SplitGrant(n.threads, n.warps, in_rf * n.threads, n.smem + spm, split=in_rf, spm_bytes=spm, top=top)
        u = self.used
        u.threads, u.warps, u.regs, u.smem = u.threads + g.threads, u.warps + g.warps, u.regs + g.regs, u.smem + g.smem
        self.ctas += 1
        self.counts.split_ctas += 1
        self.counts.spm_bytes += spm
        return g


@register("operand_storage", "expars_storage")
class SplitStorage(BankedRegisterFile):
    """Banked RF below each CTA's split; the shared-memory banks at and above it."""

    @dataclass(frozen=True)
    class Params(BankedRegisterFile.Params):
        cycles_per_access: int = 1   # shared-memory bank cycles per warp register read or written

    events = frozenset({"cta_admitted"})
    counters = {"spm_reads": Counter("warp registers", "source operands read from the scratchpad"),
                "spm_writes": Counter("warp registers", "results written to the scratchpad"),
                "spm_cycles": Counter("cycles", "shared-memory bank cycles taken by register accesses")}
    structures = {"smem": 0}         # the table's scratchpad banks (already powered: no extra instances)

    def __init__(self, params=None, n_warp_slots=48, **context):
        super().__init__(params, n_warp_slots, **context)
        self.split: dict[int, tuple[int, int]] = {}   # CTA slot -> registers [first, top) in the scratchpad

    def on_cta_admitted(self, cta, now):
        self.split[cta.slot] = (getattr(cta.grant, "split", ALL_IN_RF), getattr(cta.grant, "top", ALL_IN_RF))

    def _in_rf(self, warp, regs):
        # names at or past the reservation (sm.register_count = 'ptxas_exact': values the card's
        # code does not keep in registers) take no scratchpad room: they stay with the RF's
        first, top = self.split.get(warp.cta, (ALL_IN_RF, ALL_IN_RF))
        return tuple(r for r in regs if r < first or r >= top)

    def try_read(self, warp, instr, now):
        in_rf = self._in_rf(warp, instr.src_regs)
        unit = "ldst" if instr.kind == 1 else instr.unit   # memory instructions take a memory collector
        ready = self.banks.try_read(warp.slot, warp.sched, unit, in_rf, now)
        n = len(instr.src_regs) - len(in_rf)
        if ready is None or not n:
            return ready
        self.counts.spm_reads += n
        return max(ready, self._scratchpad(n))

    def write(self, warp, instr, now):
        in_rf = self._in_rf(warp, instr.dst_regs)
        done = self.banks.write(warp.slot, warp.sched, in_rf, now)
        n = len(instr.dst_regs) - len(in_rf)
        if not n:
            return done
        self.counts.spm_writes += n
        return max(done, self._scratchpad(n))

    def book_write(self, warp, instr, cycle):
        # (sm.rf_bank_writes_block_reads) only the registers in the RF take a bank's port
        self.banks.book_write(warp.slot, warp.sched, self._in_rf(warp, instr.dst_regs), cycle)

    def _scratchpad(self, n):
        """Take the shared-memory banks for `n` warp registers; the cycle they are done."""
        cycles = n * self.params.cycles_per_access
        self.counts.spm_cycles += cycles
        self.port.count_energy("smem", 32 * n)         # one 32-bit bank access per lane
        return self.port.smem_access(cycles)
