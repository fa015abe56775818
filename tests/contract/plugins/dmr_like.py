"""Warped-DMR-like execution checker (a test of the port, not Jeon's model): an
issued arithmetic instruction whose active lanes fit in the idle half of the warp
is verified on those idle lanes in the same cycle; the others are queued and
re-executed one per cycle on their unit when it is free."""

from collections import deque

from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter


@register("execution_checker", "contract_dmr")
class IdleLaneChecker(ExecutionChecker):
    """Intra-warp DMR on idle lanes, inter-warp DMR on an idle unit."""

    events = frozenset({"instr_issued", "timer", "kernel_end"})
    counters = {"intra_checks": Counter("warp instructions", "verified on idle lanes, same cycle"),
                "inter_checks": Counter("warp instructions", "re-executed later on an idle unit"),
                "unchecked": Counter("warp instructions", "still queued when the kernel ended")}

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        self.queue: deque = deque()

    def watches(self, instr):
        return instr.unit in ("sp", "sfu")

    def on_instr_issued(self, warp, instr, mask, now):
        if bin(mask).count("1") <= 16:
            self.counts.intra_checks += 1
            return
        if not self.queue:
            self.port.wake_at(now + 1)
        self.queue.append((instr.unit, warp.sched))

    def on_timer(self, tag, now):
        if not self.queue:   # drained at the end of a kernel
            return
        unit, sched = self.queue[0]
        if self.port.unit_free_at(unit, sched) <= now:
            self.port.occupy_unit(unit, 1, sched)
            self.queue.popleft()
            self.counts.inter_checks += 1
        if self.queue:
            self.port.wake_at(now + 1)

    def on_kernel_end(self, kernel, now):
        self.counts.unchecked += len(self.queue)
        self.queue.clear()
