"""Stalling issue through the port, with exact cycles on the hand-written kernel
straight.ptx (see test_contract_plugins.py for its instructions):

- `stall_issue(sched, n)`: the scheduler issues nothing in the n cycles after the
  call, the other scheduler is unaffected, and the stalled cycles are counted;
- an operand storage that refuses an issue and holds the warp ("refuse + hold +
  release when space frees"): the refusal cycle is a core stall, the held cycles
  that follow are classified like any cycle without a ready warp — the same with
  skip-ahead as with dense ticking.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.timing.port import PortError

STRAIGHT = (Path(__file__).parent / "straight.ptx").read_text()


def _run(threads: int, overrides: dict, dense: bool = False):
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True, **overrides})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=dense):
        out = tlpsim.zeros(threads, np.int32)
        rec = tlpsim.RawModule(STRAIGHT).get_function("straight")((1,), (threads,), (out,))
        t = np.arange(threads)
        assert (out.get() == (t + 7) * t + t + 7).all()
    return rec


class IssueLog(ExecutionChecker):
    """Records (cycle, scheduler, warp slot, pc) of every issue; stalls scheduler 0 for
    `n` cycles at its first issue."""

    events = frozenset({"instr_issued"})
    log: list = []
    n = 0

    def on_instr_issued(self, warp, instr, mask, now):
        type(self).log.append((now, warp.sched, warp.slot, instr.pc))
        if self.n and warp.sched == 0 and len([e for e in self.log if e[1] == 0]) == 1:
            self.port.stall_issue(0, self.n)


def _issues(plugin, n, dense=False):
    IssueLog.log, IssueLog.n = [], n
    name = plugin("execution_checker", IssueLog)
    rec = _run(96, {"sm.execution_checker": name}, dense)   # warps in slots 0, 2 on scheduler 0; 1 on 1
    return rec, list(IssueLog.log)


def test_stall_issue_stops_one_scheduler_for_exactly_n_cycles(plugin):
    base, free = _issues(plugin, 0)
    rec, log = _issues(plugin, 3)
    t0 = min(t for t, s, *_ in log if s == 0)
    assert t0 == min(t for t, s, *_ in free if s == 0)
    # without the stall scheduler 0 issues again in the very next cycle ...
    assert min(t for t, s, *_ in free if s == 0 and t > t0) == t0 + 1
    # ... with it, nothing in t0+1 .. t0+3, and again at t0+4
    assert min(t for t, s, *_ in log if s == 0 and t > t0) == t0 + 4
    # scheduler 1 is unaffected while scheduler 0 is stalled
    assert [e for e in log if e[1] == 1 and e[0] <= t0 + 3] == [e for e in free if e[1] == 1 and e[0] <= t0 + 3]
    stalls = sum(s["stall_reasons"].get("issue_stalled", 0) for s in rec.stats.per_sm)
    assert stalls == 3 and not any(s["stall_reasons"].get("issue_stalled") for s in base.stats.per_sm)
    dense, dlog = _issues(plugin, 3, dense=True)
    assert dlog == log and dense.stats.sm_cycles == rec.stats.sm_cycles


def test_stall_issue_rejects_a_bad_scheduler_or_length(plugin):
    class Bad(ExecutionChecker):
        events = frozenset({"kernel_start"})
        args = (2, 1)

        def on_kernel_start(self, kernel, now):
            self.port.stall_issue(*self.args)

    name = plugin("execution_checker", Bad)
    with pytest.raises(PortError, match=r"has warp schedulers 0\.\.1, not 2"):
        _run(32, {"sm.execution_checker": name})
    Bad.args = (0, 0)
    with pytest.raises(PortError, match="cycles must be positive, got 0"):
        _run(32, {"sm.execution_checker": name})


class HoldOnce(BankedRegisterFile):
    """Refuses pc 8 (the store; nothing else in flight): for 5 cycles without a hold
    (retried at `next_event`), then once more holding the warp, which a timer releases
    50 cycles later ("refuse + hold + release when space frees")."""

    events = frozenset({"timer"})
    refused: list = []

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        self.retry_at = None

    def try_read(self, warp, instr, now):
        if instr.pc == 8 and len(self.refused) < 2:
            if self.retry_at is None:
                self.retry_at = now + 5
                type(self).refused.append(now)
            if now < self.retry_at:
                return None
            type(self).refused.append(now)      # woken for nothing else: the hold must wake the SM
            self.port.hold_warp(warp.slot)
            self.port.wake_at(now + 50, warp.slot)
            return None
        return super().try_read(warp, instr, now)

    def next_event(self, now):
        if self.retry_at is not None and self.retry_at > now:
            return self.retry_at
        return super().next_event(now)

    def on_timer(self, slot, now):
        self.port.release_warp(slot)


def test_a_refusal_that_holds_the_warp_is_classified_alike_with_skip_ahead_and_dense(plugin):
    name = plugin("operand_storage", HoldOnce)
    runs = {}
    for dense in (False, True):
        base = _run(32, {}, dense)
        HoldOnce.refused = []
        runs[dense] = rec = _run(32, {"sm.operand_storage": name}, dense)
        t = HoldOnce.refused
        assert len(t) == 2 and t[1] == t[0] + 5
        b, h = base.stats.sm_cycles, rec.stats.sm_cycles
        # the store issues 55 cycles later: five refused cycles and the refusal that holds
        # are core stalls (refused issues), the 49 held cycles after it idle, as nothing is
        # in flight (skip-ahead used to count those as core stalls, the class of the cycle
        # it slept after)
        assert rec.stats.cycles - base.stats.cycles == 55
        assert h["active"] == b["active"] and h["mem_stall"] == b["mem_stall"]
        assert h["core_stall"] - b["core_stall"] == 6 and h["idle"] - b["idle"] == 49
        assert sum(s["stall_reasons"].get("collector_full", 0) for s in rec.stats.per_sm) == 5
    assert runs[False].stats.sm_cycles == runs[True].stats.sm_cycles
    assert runs[False].stats.per_sm == runs[True].stats.per_sm
