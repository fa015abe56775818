"""An operand storage: the baseline banked register file, except that registers at
or above `threshold` sit in a slower structure that takes `extra_cycles` more to
read (a two-level register file in its simplest form). It declares the structure
for the energy model and counts its reads.

    tlpsim run sgemm --mode timing --plugin examples/plugins/slow_high_registers.py \
        --set 'sm.operand_storage={impl="slow_high_registers", threshold=32, extra_cycles=2}'
"""
from dataclasses import dataclass

from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter, EnergyStructure


@register("operand_storage", "slow_high_registers")
class SlowHighRegisters(BankedRegisterFile):
    """Banked RF; registers >= threshold take extra_cycles more to read."""

    @dataclass(frozen=True)
    class Params(BankedRegisterFile.Params):
        threshold: int = 32
        extra_cycles: int = 2

    counters = {"slow_reads": Counter("warp registers", "operands read from the slow structure")}
    energy = {"slow_rf": EnergyStructure(access_pj=6.0, source="example figure, not measured: a larger, "
                                                               "slower SRAM than one RF bank")}

    def try_read(self, warp, instr, now):
        ready = super().try_read(warp, instr, now)
        slow = sum(1 for r in instr.src_regs if r >= self.params.threshold)
        if ready is None or not slow:
            return ready
        self.counts.slow_reads += slow
        self.port.count_energy("slow_rf", slow)
        return ready + self.params.extra_cycles
