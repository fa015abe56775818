"""The ExecutionChecker extension point: redundant execution for error detection
(Warped-DMR intra-warp and inter-warp DMR, lane shuffling).

A checker subscribes to `instr_issued` (optionally narrowed with `watches(instr)`),
which reports each issued instruction with its executed-lane mask. It may verify
the instruction in the same cycle on the lanes the mask leaves idle (counting it
with its own counters), or queue it and re-execute it later on an idle unit of the
same class: `port.unit_free_at(unit, sched)` says when one is free and
`port.occupy_unit(unit, cycles, sched)` takes it (or `lanes=mask` takes only some
lanes). It may stall dependent instructions until a check completes
(`port.delay_writeback(cycles)` from `on_instr_issued`, or
`port.hold_warp_until(slot, cycle)`), and drains its queue from timers
(`port.wake_at`). Checks and coverage are its declared counters; a replay queue or
comparator is a declared energy structure.

Context keywords: `port` (`SMPort`), `config`.
"""

from __future__ import annotations

from typing import Any

from tlpsim.policies.registry import interface
from tlpsim.timing.plugin import Plugin

__all__ = ["ExecutionChecker"]


@interface("execution_checker")
class ExecutionChecker(Plugin):
    """Base: checks nothing."""

    def __init__(self, params: Any = None, **context: Any) -> None:
        super().__init__(params, **context)
