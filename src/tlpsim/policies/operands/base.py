"""The OperandStorage extension point.

Decides when an issued instruction's source operands have been read (bank
conflicts, collector units), whether an instruction may issue at all this cycle
(e.g. a collector unit is free, or — for RegLess-style staging — its region is
resident), when a result's write completes, and counts register-file events for the
energy model. It sees the warp's view (slot, CTA, dynamic warp id, scheduler), the
static instruction with its physical source and destination registers
(`instr.src_regs`, `instr.dst_regs`: 32-bit registers from the analyses' allocator,
a 64-bit value as two) and the cycle; never the SM. Everything else — holding warps
until operands are staged, memory requests for spills and fills, scratchpad bank
cycles — goes through its port (`self.port`, a `tlpsim.timing.port.SMPort`).

Contract (the SM respects every returned cycle):

- `try_read(warp, instr, now)` at issue: None refuses the issue this cycle (the warp
  stays ready and is tried again); otherwise the cycle the instruction may start
  executing (its operands are read; >= now + 1).
- `write(warp, instr, now)` at writeback: the cycle the write completes (>= now);
  the destinations stay pending in the scoreboard until then.
- `next_event(now)`: the earliest future cycle at which `try_read` may answer
  differently (for a sleeping SM), or None.
- `reserve_ports(now, cycles)`: the register file's ports are taken for `cycles`
  cycles (a context switcher moving state through them); returns the cycle it ends.
- `book_write(warp, instr, cycle)`, called only when `books_writes` is true: `instr`'s
  results are due to be written at `cycle` (> the current cycle), said when the
  writeback is scheduled (at issue for a pipeline's result, when the data is due for a
  load's), so a storage whose writes take ports that its reads use can keep the reads
  it books from then on out of that cycle (the baseline with
  `sm.rf_bank_writes_block_reads`). `write` is still called at that cycle.

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

from typing import Any

from tlpsim.policies.registry import interface
from tlpsim.timing.plugin import Plugin
from tlpsim.timing.regbanks import OperandStats

__all__ = ["REGISTER_NAMES", "OperandStats", "OperandStorage"]

#: an operand storage's `register_names` declarations
REGISTER_NAMES = ("named", "reserved")


@interface("operand_storage")
class OperandStorage(Plugin):
    """Ideal storage: every operand is read in one cycle, no limits.

    Context keywords: `n_warp_slots` (the SM's warp slots), `port`, `config`."""

    gates_subarrays = False       # True: stats.subarray_on_cycles drives the RF's static energy
    # which register names it copes with (`REGISTER_NAMES`): "named" = any name an instruction
    # carries, up to `KernelInfo.named_regs` (a storage keyed by name: banks, renaming);
    # "reserved" = only names below `KernelInfo.regs_per_thread` (one that places registers by
    # their position in the reservation, e.g. a split at a register index): refused under
    # sm.register_count = 'ptxas_exact', where instructions may name more registers than reserved
    register_names = "named"
    books_writes = False          # True: book_write is told of each write when it is scheduled
    structures: dict = {}         # added structures {energy-table name: instances per SM}

    @classmethod
    def config_problems(cls, config: Any, key: str) -> list[str]:
        names = cls.register_names
        if names not in REGISTER_NAMES:
            return [f"{key}: register_names must be one of {', '.join(REGISTER_NAMES)}, got {names!r}"]
        if names == "reserved" and config.sm.register_count == "ptxas_exact":
            return [f"{key}: {cls.__name__} declares register_names = 'reserved' (it places registers by their "
                    f"position in the RF's reservation), but sm.register_count = 'ptxas_exact' reserves ptxas's "
                    f"count while instructions may name more (KernelInfo.named_regs); set "
                    f"sm.register_count = 'ptxas', or handle every name and declare register_names = 'named'"]
        return []

    def __init__(self, params: Any = None, n_warp_slots: int = 48, **context: Any) -> None:
        super().__init__(params, **context)
        self.n_warp_slots = n_warp_slots
        self.stats = OperandStats()

    def try_read(self, warp: Any, instr: Any, now: int) -> int | None:
        """Operands of `instr` issued by `warp` at `now`: the cycle it may start
        executing, or None when it cannot issue now."""
        self.stats.reads += len(instr.src_regs)
        return now + 1

    def write(self, warp: Any, instr: Any, now: int) -> int:
        """`instr`'s results are written back at `now`; the cycle the write completes."""
        self.stats.writes += len(instr.dst_regs)
        return now

    def book_write(self, warp: Any, instr: Any, cycle: int) -> None:
        """`instr`'s results for `warp` are due to be written at `cycle` (only called
        when `books_writes` is true)."""

    def next_event(self, now: int) -> int | None:
        """Earliest future cycle at which try_read may answer differently (for sleeping SMs)."""
        return None

    def reserve_ports(self, now: int, cycles: int) -> int:
        """The storage's ports are busy for `cycles` cycles (context moves); returns the end."""
        return now + cycles
