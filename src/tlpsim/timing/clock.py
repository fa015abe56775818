"""GPU-level components that serve plug-ins: timers of GPU-level plug-ins and the
sampling window of monitors. Both tick after every SM in the engine's order, so
what they command takes effect from the SMs' next cycle, in dense and skip-ahead
mode alike."""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any, Callable

from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.stats import CYCLE_CLASSES
from tlpsim.timing.views import SMWindow, WindowCounters


class PluginClock(Component):
    """Calls `callback(tag, cycle)` at the cycles GPU-level plug-ins asked for."""

    name = "plugin_clock"

    def __init__(self, domain: ClockDomain) -> None:
        super().__init__(domain)
        self.timers: list[tuple[int, int, Callable[[Any, int], Any], Any]] = []
        self.seq = 0

    def add(self, cycle: int, callback: Callable[[Any, int], Any], tag: Any) -> None:
        self.seq += 1
        heappush(self.timers, (cycle, self.seq, callback, tag))
        self.wake_at(cycle)

    def busy(self) -> bool:
        return False

    def tick(self, cycle: int) -> bool:
        timers = self.timers
        while timers and timers[0][0] <= cycle:
            _, _, cb, tag = heappop(timers)
            cb(tag, cycle)
        if timers:
            self.wake_at(timers[0][0])
        return False


class WindowMonitor(Component):
    """At the end of every `window` core cycles, the window's counters go to the
    subscribers of the `window` event (monitor plug-ins)."""

    name = "window_monitor"

    def __init__(self, domain: ClockDomain, gpu: Any, window: int, handlers: list[Callable[..., Any]]) -> None:
        super().__init__(domain)
        self.passive = True
        self.gpu = gpu
        self.window = max(int(window), 1)
        self.handlers = handlers
        self.first = 0
        self.base: dict | None = None

    def busy(self) -> bool:
        return False

    def start(self, cycle: int) -> None:
        """Begin windows at `cycle` (a run's start)."""
        self.first = cycle
        self.base = self._counters()
        self.wake_at(cycle + self.window - 1)

    def _counters(self) -> dict:
        gpu = self.gpu
        return {"sm": [sm.collect() for sm in gpu.sms], "mem": gpu.mem.counters(),
                "mem_wait": [sm.mem_wait_cycles for sm in gpu.sms]}

    def tick(self, cycle: int) -> bool:
        if self.base is None or cycle < self.first + self.window - 1:
            return False
        # the SMs and memory components that slept through part of the window are
        # accounted up to now, so the window sees their idle cycles (as a dense run would)
        gpu = self.gpu
        gpu.engine.settle()
        now = self._counters()
        base = self.base
        sms = []
        for k, sm in enumerate(gpu.sms):
            a, b = now["sm"][k], base["sm"][k]
            sl = sm.slots
            sms.append(SMWindow(
                sm=sm.id, cycles={c: a["cycles"][c] - b["cycles"][c] for c in CYCLE_CLASSES},
                warp_insts=a["warp_insts"] - b["warp_insts"], thread_insts=a["thread_insts"] - b["thread_insts"],
                issued=a["issued"] - b["issued"], issue_slots=a["issue_slots"] - b["issue_slots"],
                stall_reasons={r: n - b["stall_reasons"].get(r, 0) for r, n in a["stall_reasons"].items()
                               if n != b["stall_reasons"].get(r, 0)},
                l1d_accesses=a["l1d_accesses"] - b["l1d_accesses"], l1d_misses=a["l1d_misses"] - b["l1d_misses"],
                mem_requests=a["mem_requests"] - b["mem_requests"], ctas_done=a["ctas_done"] - b["ctas_done"],
                resident_ctas=sl.n_ctas, resident_warps=sl.n_warps, mem_blocked_warps=sm.issue.n_mem_blocked,
                resident_by_kernel=dict(sl.by_kernel),
                mem_wait_cycles=now["mem_wait"][k] - base["mem_wait"][k]))
        ma, mb = now["mem"], base["mem"]
        n = self.window
        mem = gpu.mem
        util = {
            "scheduler": _ratio(sum(s.issued for s in sms), sum(s.issue_slots for s in sms)),
            "l1d": _ratio(sum(s.l1d_accesses for s in sms), n * len(sms)),
            "l2": _ratio(ma["l2_busy_cycles"] - mb["l2_busy_cycles"], _cycles(gpu, gpu.l2_dom, n) * mem.n_slices),
            "icnt_up": _ratio(ma["icnt_up_flits"] - mb["icnt_up_flits"], _cycles(gpu, gpu.icnt_dom, n) * mem.n_slices),
            "icnt_down": _ratio(ma["icnt_down_flits"] - mb["icnt_down_flits"], _cycles(gpu, gpu.icnt_dom, n) * len(sms)),
            "dram": _ratio(ma["dram_busy_cycles"] - mb["dram_busy_cycles"], _cycles(gpu, gpu.dram_dom, n) * mem.n_parts),
        }
        counters = WindowCounters(self.first, cycle, sms, ma["l2_accesses"] - mb["l2_accesses"],
                                  ma["l2_hits"] - mb["l2_hits"], ma["dram_busy_cycles"] - mb["dram_busy_cycles"],
                                  ma["icnt_up_flits"] - mb["icnt_up_flits"],
                                  ma["icnt_down_flits"] - mb["icnt_down_flits"], util)
        for h in self.handlers:
            h(counters, cycle)
        self.base = now
        self.first = cycle + 1
        self.wake_at(cycle + self.window)
        return False


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def _cycles(gpu: Any, domain: ClockDomain, core_cycles: int) -> int:
    return max(core_cycles * gpu.core.period_fs // domain.period_fs, 1)
