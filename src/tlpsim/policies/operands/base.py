"""The OperandStorage extension point.

Decides when an issued instruction's source operands have been read (bank
conflicts, collector units), whether an instruction may issue at all this cycle
(e.g. a collector unit is free, or — for RegLess-style staging — its region is
resident), and counts register-file events for the energy model. It sees the
warp slot, the register ids and the cycle; never the SM.

Energy interface (read by tlpsim.power after each launch):

- `stats.reads` / `stats.writes`: 32-lane register accesses of the main RF banks.
- `structures`: the extra structures the mechanism adds, {name in the energy table:
  instances per SM} (e.g. {"rename_table": 1}); each leaks for the whole launch.
- `stats.events`: accesses of those structures, {name: count} (one count = one
  `access_energy_pj` of that structure's table entry).
- `gates_subarrays = True` and `stats.subarray_on_cycles` (sum over the SM's RF
  subarrays of the core cycles each was powered) / `stats.subarray_wakeups`: per
  subarray power gating; the RF's static energy then follows these counts instead
  of the ideal CTA-based gating. The wake-up latency is `sm.rf_subarray_wakeup_cycles`.

Speed: a storage whose per-issue work is exactly `tlpsim.timing.regbanks.RegisterBanks`
(the baseline) sets `compiled_banks` to it, and the SM calls those compiled methods
directly; any other storage is called through the methods below.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OperandStats:
    reads: int = 0            # 32-lane register reads
    writes: int = 0
    bank_conflict_cycles: int = 0
    collector_full: int = 0   # issue attempts refused for lack of a collector unit
    subarray_on_cycles: int = 0   # sum over RF subarrays of powered core cycles (when gates_subarrays)
    subarray_wakeups: int = 0     # gated subarrays woken
    events: dict = field(default_factory=dict)  # added structure -> accesses (energy-table names)


class OperandStorage:
    """Ideal storage: every operand is read in one cycle, no limits."""

    Params = None
    gates_subarrays = False       # True: stats.subarray_on_cycles drives the RF's static energy
    structures: dict = {}         # added structures {energy-table name: instances per SM}

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
