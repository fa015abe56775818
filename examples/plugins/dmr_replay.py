"""A Warped-DMR-like execution checker (a sketch, not Jeon's model).

- Intra-warp DMR: an arithmetic instruction whose active lanes fit in the lanes it
  leaves idle is verified on those idle lanes in the same cycle.
- Inter-warp DMR: a full-warp instruction goes to its scheduler's replay queue and
  is re-executed on a unit of its class when that unit is idle — found when another
  instruction issues (`instr_issued` + `unit_free_at`, then `occupy_unit`), so no
  per-cycle event is needed; a timer drains what is left after `drain_after` cycles.
- When the replay queue is full, the scheduler stalls one cycle (`stall_issue`) in
  which the oldest entry replays; a warp whose next instruction reads a result not
  yet verified is held (`hold_warp_until`) until its replay has run.

    tlpsim run sgemm --mode timing --plugin examples/plugins/dmr_replay.py \\
        --set 'sm.execution_checker={impl="dmr_replay", replayq_entries=4}'
"""
from collections import defaultdict, deque
from dataclasses import dataclass

from tlpsim.errors import ConfigError
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter, EnergyStructure

CHECKED_UNITS = ("sp", "sfu", "dp")


@register("execution_checker", "dmr_replay")
class ReplayChecker(ExecutionChecker):
    """Intra-warp DMR on idle lanes, inter-warp DMR through a replay queue."""

    @dataclass(frozen=True)
    class Params:
        replayq_entries: int = 10   # per warp scheduler
        drain_after: int = 16       # cycles after which queued entries are replayed without an issue nearby

    events = frozenset({"kernel_start", "instr_issued", "timer"})
    counters = {"intra_checks": Counter("warp instructions", "verified on idle lanes in the same cycle"),
                "replays": Counter("warp instructions", "re-executed on an idle unit from the replay queue"),
                "full_stalls": Counter("issue stalls", "stall cycles inserted because a replay queue was full"),
                "reader_holds": Counter("holds", "warps held: their next instruction reads an unverified result"),
                "queue_peak": Counter("entries", "most replay-queue entries of one scheduler", agg="max"),
                "queue_mean": Counter("entries", "replay-queue entries of all schedulers, cycle-weighted",
                                      agg="mean")}
    energy = {"dmr_replay_queue": EnergyStructure(access_pj=0.9, source="sketch estimate: a 10-entry queue of "
                                                                        "instruction + operands (not measured)")}

    def __init__(self, params=None, **context):
        super().__init__(params if params is not None else self.Params(), **context)
        if self.params.replayq_entries < 1 or self.params.drain_after < 1:
            raise ConfigError("dmr_replay: replayq_entries and drain_after must be >= 1")
        self.queues = defaultdict(deque)   # scheduler -> [(unit, warp slot, dst regs)]
        self.static = {}
        self.timer_at = None

    def on_kernel_start(self, kernel, now):
        self.static[kernel.kid] = kernel.static.instrs

    def watches(self, instr):
        return instr.unit in CHECKED_UNITS

    def on_instr_issued(self, warp, instr, mask, now):
        q = self.queues[warp.sched]
        self._replay_idle(q, warp.sched, now, busy=instr.unit)
        active = bin(mask).count("1")
        if active <= 32 - active:
            self.counts.intra_checks += 1
            return
        if len(q) >= self.params.replayq_entries:      # full: one stall cycle drains the oldest
            self.port.stall_issue(warp.sched)
            self._replay(q, warp.sched, q[0])
            self.counts.full_stalls += 1
        entry = (instr.unit, warp.slot, frozenset(instr.dst_regs))
        q.append(entry)
        self.port.count_energy("dmr_replay_queue")
        self._levels()
        pc = self.port.warp_pc(warp.slot) if self.port.warp(warp.slot) is warp else -1
        if pc >= 0 and entry[2].intersection(self.static[warp.kid][pc].src_regs):
            start = self._replay(q, warp.sched, entry)       # verify it first; the reader waits for it
            self.port.hold_warp_until(warp.slot, start + 1)
            self.counts.reader_holds += 1
        if q and self.timer_at is None:
            self.timer_at = now + self.params.drain_after
            self.port.wake_at(self.timer_at)

    def _replay_idle(self, q, sched, now, busy=None):
        """Replay queued entries on units of their class idle now (one per class)."""
        used = {busy}
        for entry in list(q):
            unit = entry[0]
            if unit not in used and self.port.unit_free_at(unit, sched) <= now:
                used.add(unit)
                self._replay(q, sched, entry)

    def _replay(self, q, sched, entry):
        q.remove(entry)
        self.counts.replays += 1
        self.port.count_energy("dmr_replay_queue")
        self._levels()
        return self.port.occupy_unit(entry[0], 1, sched)

    def _levels(self):
        self.counts.queue_peak = max(len(q) for q in self.queues.values())
        self.counts.queue_mean = sum(len(q) for q in self.queues.values())

    def on_timer(self, tag, now):
        self.timer_at = None
        for sched, q in self.queues.items():
            self._replay_idle(q, sched, now)
        if any(self.queues.values()):
            self.timer_at = now + self.params.drain_after
            self.port.wake_at(self.timer_at)
