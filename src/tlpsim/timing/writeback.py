"""Writeback and the scoreboard: results due at a cycle clear their destination
registers' pending bits, so dependent instructions may issue.

Pipelines schedule a writeback when an instruction issues (its latency is known);
the LD/ST unit schedules one when a load's last data arrives. At its cycle the
result is written to the operand storage, which returns when the write completes
(a bank whose write ports are taken delays it); the registers stay pending until
then. A storage whose writes take ports that operand reads use (the banks with
`sm.rf_bank_writes_block_reads`, or a plug-in with `books_writes`) is told of each
write when it is scheduled, so the reads booked meanwhile leave it its cycle.
Entries hold the warp object, so a slot reused by a new warp is safe.
"""

from __future__ import annotations

from operator import index
from typing import TYPE_CHECKING, Any, Final, cast

from tlpsim.timing.buckets import CycleBuckets
from tlpsim.timing.regbanks import RegisterBanks
from tlpsim.timing.static import StaticInstr

if TYPE_CHECKING:
    from tlpsim.timing.issue import IssueStage
    from tlpsim.timing.warp import Warp

FROM_MEM: Final = 1   # the result comes from the memory system (clears pending_mem too)
WRITTEN: Final = 2    # the operand storage took the write already; only the scoreboard is left


class Writeback:
    issue: IssueStage   # wired by the SM

    def __init__(self, operands: Any, banks: RegisterBanks | None, events: Any) -> None:
        # the writebacks due, by cycle: per cycle its entries (warp, static instr, flags,
        # dynamic position) in the order scheduled
        self.due = CycleBuckets()
        self.operands = operands
        self.banks = banks        # the compiled baseline banks, called natively when they are the storage
        self.events = events
        # who books the writes ahead (None: no one): the compiled banks, or a plug-in storage
        self.book_banks: RegisterBanks | None = banks if banks is not None and banks.writes_block_reads else None
        self.book_plugin: Any = operands if banks is None and getattr(operands, "books_writes", False) else None

    def __len__(self) -> int:
        return len(self.due)

    def next_cycle(self) -> int:
        return self.due.next_cycle()

    def schedule(self, w: Warp, si: StaticInstr, cycle: int, flags: int, pos: int) -> None:
        """Write `si`'s destinations for `w` at `cycle` (no timer: this runs inside the
        SM's tick, and an SM that goes to sleep sets one for its earliest writeback)."""
        if not flags & WRITTEN:
            if self.book_banks is not None:
                self.book_banks.book_write(w.slot, w.sched, si.dst_regs, cycle)
            elif self.book_plugin is not None:
                self.book_plugin.book_write(w.view, si, cycle)
        self.due.add(cycle, (w, si, flags, pos))

    def tick(self, now: int, warps: list[Warp | None]) -> bool:
        """Perform the writebacks due at `now`; True when any was performed (entries of
        warps that exited meanwhile are dropped)."""
        due = self.due
        nxt = due.next_cycle()
        if nxt < 0 or nxt > now:
            return False
        banks, issue = self.banks, self.issue
        handlers = self.events.writeback
        progress = False
        while 0 <= nxt <= now:
            # a cycle's entries in the order scheduled; what this loop schedules is due
            # after now (a write delayed by its bank), so never in the cycle it empties
            _, bucket = due.take()
            for w, si, flags, pos in cast("list[tuple[Warp, StaticInstr, int, int]]", bucket):
                if w.done and warps[w.slot] is not w:
                    continue
                progress = True
                if not flags & WRITTEN:
                    if banks is not None:
                        t = banks.write(w.slot, w.sched, si.dst_regs, now)
                    else:
                        t = self._plugin_write(w, si, now)
                    if t > now:  # the write itself completes later: registers stay pending
                        self.schedule(w, si, t, flags | WRITTEN, pos)
                        continue
                mask = si.dst_mask
                w.pending &= ~mask
                if flags & FROM_MEM:
                    w.pending_mem &= ~mask
                    if not w.pending_mem:
                        w.view.waiting_mem = False
                issue.update_ready(w)
                if handlers:
                    vc = w.vclass[pos] if w.vclass is not None else -1
                    for h in handlers:
                        h(w.view, si, vc, now)
            due.recycle(bucket)
            nxt = due.next_cycle()
        return progress

    def _plugin_write(self, w: Warp, si: Any, now: int) -> int:
        """The operand-storage plug-in's write: the cycle the write completes (an int >= now)."""
        t = self.operands.write(w.view, si, now)
        c = as_cycle(t)
        if c >= now:
            return c
        from tlpsim.plugin_guard import bad_return

        raise bad_return(self.operands, "write", f"must return the cycle the write completes, an int >= now "
                                                 f"({now}); it returned {t!r}")



def as_cycle(value: Any) -> int:
    """`value` as a cycle (an int, or an integer type such as NumPy's); -1 when it is not one."""
    if isinstance(value, bool):
        return -1
    try:
        return index(value)
    except TypeError:
        return -1
