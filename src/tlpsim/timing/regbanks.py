"""Single-ported register banks behind operand-collector units: the arithmetic of
the baseline OperandStorage plug-in (`policies/operands/banked_rf.py`), kept here so
it is compiled with the timing core. The plug-in owns the policy surface
(parameters, registration, statistics record); this class does the per-issue work.

An issued instruction takes a collector unit of its pipeline class; its source
registers are read from their banks starting the cycle after issue, one read per
bank per cycle, so two sources in one bank serialise (a bank conflict); the
collector is released when its operands are read. Bank of a register: (warp slot +
register) mod banks, as GPGPU-Sim maps it.
"""

from __future__ import annotations

from typing import Any


class RegisterBanks:
    def __init__(self, n_banks: int, collectors: dict[str, int], stats: Any) -> None:
        self.n_banks = n_banks
        self.bank_free = [0] * n_banks  # first cycle each bank can be read again
        self.cap: dict[str, int] = dict(collectors)
        self.busy: dict[str, list[int]] = {k: [] for k in self.cap}  # release cycles of taken collectors
        self.stats = stats              # the plug-in's OperandStats

    def _collectors(self, unit: str, now: int) -> list[int]:
        taken = self.busy.get(unit)
        if taken is None:
            return []
        if taken and min(taken) <= now:
            taken[:] = [c for c in taken if c > now]
        return taken

    def can_issue(self, slot: int, unit: str, src_regs: tuple[int, ...], now: int) -> bool:
        taken = self._collectors(unit, now)
        if unit in self.cap and len(taken) >= self.cap[unit]:
            self.stats.collector_full += 1
            return False
        return True

    def read(self, slot: int, unit: str, src_regs: tuple[int, ...], now: int) -> int:
        done = self._read_banks(slot, src_regs, now)
        taken = self.busy.get(unit)
        if taken is not None:
            taken.append(done)
        return done

    def try_read(self, slot: int, unit: str, src_regs: tuple[int, ...], now: int) -> int | None:
        """can_issue + read in one call (once per issued instruction)."""
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
        done = self._read_banks(slot, src_regs, now)
        if taken is not None:
            taken.append(done)
        return done

    def _read_banks(self, slot: int, src_regs: tuple[int, ...], now: int) -> int:
        nb = self.n_banks
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
        if conflicts:
            st.bank_conflict_cycles += conflicts
        st.reads += len(src_regs)
        return done

    def write(self, slot: int, dst_regs: tuple[int, ...], cycle: int) -> int:
        self.stats.writes += len(dst_regs)
        return cycle

    def next_event(self, now: int) -> int | None:
        future = [c for taken in self.busy.values() for c in taken if c > now]
        return min(future) if future else None
