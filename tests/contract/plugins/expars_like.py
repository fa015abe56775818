"""EXPARS-like operand storage (a test of the port, not Kim et al.'s model): the
physical registers at or above `threshold` live in the scratchpad; reading or
writing one takes `cycles_per_access` shared-memory bank cycles, contending with
the warps' shared-memory instructions, and the instruction's operands are ready
only when those cycles end."""

from dataclasses import dataclass

from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter


@register("operand_storage", "contract_expars")
class ScratchpadSplit(BankedRegisterFile):
    """Banked RF for registers below `threshold`; the scratchpad's banks for the rest."""

    @dataclass(frozen=True)
    class Params(BankedRegisterFile.Params):
        threshold: int = 8            # first physical register kept in the scratchpad
        cycles_per_access: int = 1    # shared-memory bank cycles per warp register access

    counters = {"spm_reads": Counter("warp registers", "source operands read from the scratchpad"),
                "spm_writes": Counter("warp registers", "results written to the scratchpad"),
                "spm_cycles": Counter("cycles", "shared-memory bank cycles used by register accesses")}

    def _spm(self, regs) -> int:
        return sum(1 for r in regs if r >= self.params.threshold)

    def try_read(self, warp, instr, now):
        ready = super().try_read(warp, instr, now)
        n = self._spm(instr.src_regs)
        if ready is None or not n:
            return ready
        cycles = n * self.params.cycles_per_access
        self.counts.spm_reads += n
        self.counts.spm_cycles += cycles
        return max(ready, self.port.smem_access(cycles))

    def write(self, warp, instr, now):
        done = super().write(warp, instr, now)
        n = self._spm(instr.dst_regs)
        if not n:
            return done
        cycles = n * self.params.cycles_per_access
        self.counts.spm_writes += n
        self.counts.spm_cycles += cycles
        return max(done, self.port.smem_access(cycles))
