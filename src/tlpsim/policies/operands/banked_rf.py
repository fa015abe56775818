"""Baseline register file: single-ported banks behind operand-collector units
(GPGPU-Sim style). An issued instruction takes a collector unit of its pipeline
class; its source registers are read from their banks, one read per bank per
cycle, so two sources in one bank serialise (a bank conflict); the collector is
released when its operands are read. Bank of a register: (warp slot + register)
mod banks, as GPGPU-Sim maps it.

The per-issue arithmetic is `tlpsim.timing.regbanks.RegisterBanks` (compiled with
the timing core); this plug-in declares the parameters and delegates to it. A
subclass that overrides a method gets its override: only this exact class binds
the compiled methods directly."""

from __future__ import annotations

from dataclasses import dataclass

from tlpsim.policies.operands.base import OperandStorage
from tlpsim.policies.registry import register
from tlpsim.timing.regbanks import RegisterBanks


@register("operand_storage", "baseline")
class BankedRegisterFile(OperandStorage):
    @dataclass(frozen=True)
    class Params:
        banks: int = 16
        collectors_sp: int = 6    # collector units for SP/INT/DP instructions
        collectors_sfu: int = 8
        collectors_mem: int = 2

    def __init__(self, params=None, n_warp_slots: int = 48, banks: int | None = None,
                 collectors: dict | None = None) -> None:
        # the SM config supplies banks and collector counts; explicit Params override them
        if params is None:
            c = collectors or {}
            params = self.Params(banks=banks or 16, collectors_sp=c.get("sp", 6), collectors_sfu=c.get("sfu", 8),
                                 collectors_mem=c.get("ldst", 2))
        super().__init__(params, n_warp_slots)
        p = self.params
        self.banks = RegisterBanks(p.banks, {"sp": p.collectors_sp, "dp": p.collectors_sp,
                                             "sfu": p.collectors_sfu, "ldst": p.collectors_mem}, self.stats)
        self.compiled_banks: RegisterBanks | None = None
        if type(self) is BankedRegisterFile:
            # the SM's calls go straight to the compiled methods (no Python frame per
            # issue); a subclass keeps its overrides and is called as a plug-in
            b = self.compiled_banks = self.banks
            self.can_issue, self.read, self.try_read = b.can_issue, b.read, b.try_read  # type: ignore[method-assign]
            self.write, self.next_event = b.write, b.next_event  # type: ignore[method-assign]

    def can_issue(self, slot: int, unit: str, src_regs: tuple, now: int) -> bool:
        return self.banks.can_issue(slot, unit, src_regs, now)

    def read(self, slot: int, unit: str, src_regs: tuple, now: int) -> int:
        return self.banks.read(slot, unit, src_regs, now)

    def try_read(self, slot: int, unit: str, src_regs: tuple, now: int) -> int | None:
        return self.banks.try_read(slot, unit, src_regs, now)

    def write(self, slot: int, dst_regs: tuple, cycle: int) -> int:
        return self.banks.write(slot, dst_regs, cycle)

    def next_event(self, now: int) -> int | None:
        return self.banks.next_event(now)
