"""Baseline register file: single-ported banks behind operand-collector units
(GPGPU-Sim style). An issued instruction takes a collector unit of its pipeline
class; its source registers are read from their banks, one read per bank per
cycle, so two sources in one bank serialise (a bank conflict); the collector is
released when its operands are read. Bank of a register: (warp slot + register)
mod banks, as GPGPU-Sim maps it."""

from __future__ import annotations

from dataclasses import dataclass

from tlpsim.policies.operands.base import OperandStorage
from tlpsim.policies.registry import register


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
        self.bank_free = [0] * p.banks  # first cycle each bank can be read again
        self.cap = {"sp": p.collectors_sp, "dp": p.collectors_sp, "sfu": p.collectors_sfu,
                    "ldst": p.collectors_mem}
        self.busy: dict[str, list[int]] = {k: [] for k in self.cap}  # release cycles of taken collectors

    def _collectors(self, unit: str, now: int) -> list[int]:
        taken = self.busy.get(unit)
        if taken is None:
            return []
        if taken and min(taken) <= now:
            taken[:] = [c for c in taken if c > now]
        return taken

    def can_issue(self, slot: int, unit: str, src_regs: tuple, now: int) -> bool:
        taken = self._collectors(unit, now)
        if unit in self.cap and len(taken) >= self.cap[unit]:
            self.stats.collector_full += 1
            return False
        return True

    def read(self, slot: int, unit: str, src_regs: tuple, now: int) -> int:
        nb = self.params.banks
        done = now + 1
        first_free = now + 1  # operands are read starting the cycle after issue
        for r in src_regs:
            b = (slot + r) % nb
            t = max(first_free, self.bank_free[b])
            if t > first_free:
                self.stats.bank_conflict_cycles += t - first_free
            self.bank_free[b] = t + 1
            done = max(done, t + 1)
        self.stats.reads += len(src_regs)
        taken = self.busy.get(unit)
        if taken is not None:
            taken.append(done)
        return done

    def try_read(self, slot: int, unit: str, src_regs: tuple, now: int) -> int | None:
        # can_issue + read fused: this runs once per issued instruction
        taken = self.busy.get(unit)
        if taken is not None:
            if taken:
                for c in taken:
                    if c <= now:
                        taken[:] = [c for c in taken if c > now]
                        break
                if len(taken) >= self.cap[unit]:
                    self.stats.collector_full += 1
                    return None
        nb = self.params.banks
        bank_free = self.bank_free
        first_free = done = now + 1  # operands are read starting the cycle after issue
        conflicts = 0
        for r in src_regs:
            b = (slot + r) % nb
            t = bank_free[b]
            if t > first_free:
                conflicts += t - first_free
            else:
                t = first_free
            bank_free[b] = t + 1
            if t + 1 > done:
                done = t + 1
        st = self.stats
        st.bank_conflict_cycles += conflicts
        st.reads += len(src_regs)
        if taken is not None:
            taken.append(done)
        return done

    def write(self, slot: int, dst_regs: tuple, cycle: int) -> int:
        self.stats.writes += len(dst_regs)
        return cycle

    def next_event(self, now: int) -> int | None:
        future = [c for taken in self.busy.values() for c in taken if c > now]
        return min(future) if future else None
