"""The OperandStorage extension point.

Decides when an issued instruction's source operands have been read (bank
conflicts, collector units), whether an instruction may issue at all this cycle
(e.g. a collector unit is free, or — for RegLess-style staging — its region is
resident), and counts register-file events for the energy model. It sees the
warp slot, the register ids and the cycle; never the SM.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class OperandStats:
    reads: int = 0            # 32-lane register reads
    writes: int = 0
    bank_conflict_cycles: int = 0
    collector_full: int = 0   # issue attempts refused for lack of a collector unit


class OperandStorage:
    """Ideal storage: every operand is read in one cycle, no limits."""

    Params = None

    def __init__(self, params=None, n_warp_slots: int = 48, **_sm) -> None:
        self.params = params
        self.n_warp_slots = n_warp_slots
        self.stats = OperandStats()

    def can_issue(self, slot: int, unit: str, src_regs: tuple, now: int) -> bool:
        return True

    def read(self, slot: int, unit: str, src_regs: tuple, now: int) -> int:
        """Operands of an instruction issued at `now` are read; return the cycle the
        instruction can start executing."""
        self.stats.reads += len(src_regs)
        return now + 1

    def try_read(self, slot: int, unit: str, src_regs: tuple, now: int) -> int | None:
        """`can_issue` then `read` in one call (the SM's issue path): the start cycle,
        or None when the instruction cannot issue now."""
        if not self.can_issue(slot, unit, src_regs, now):
            return None
        return self.read(slot, unit, src_regs, now)

    def write(self, slot: int, dst_regs: tuple, cycle: int) -> int:
        """Results written back at `cycle`; return the cycle the write completes."""
        self.stats.writes += len(dst_regs)
        return cycle

    def next_event(self, now: int) -> int | None:
        """Earliest future cycle at which can_issue may change (for sleeping SMs)."""
        return None
