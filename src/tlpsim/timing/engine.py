"""The timing engine: clock domains and smart ticking (Akita-style).

Time is an integer number of femtoseconds, so clock domains with unrelated
frequencies (core, interconnect, L2, DRAM) interleave exactly. A component's
`tick(cycle)` returns whether it made progress; one that made none goes to sleep
and costs nothing until something wakes it — a push into one of its input queues
(`wake`) or a timer it set (`wake_at`). When every component sleeps, time jumps to
the earliest timer. `dense=True` ticks every component every cycle of its domain:
the slow reference the fast mode is tested against, so components must make no
state change in a tick without work, and must back-fill per-cycle statistics over
skipped cycles (see `Component.skipped`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from mypy_extensions import mypyc_attr

# Final: C statics in the compiled core, not a dictionary lookup per call
heappush: Final = heapq.heappush
heappop: Final = heapq.heappop

FS_PER_US: Final = 10**9


@dataclass(frozen=True)
class ClockDomain:
    """A clock: cycle n of this domain starts at time n * period_fs."""

    name: str
    period_fs: int

    @classmethod
    def from_mhz(cls, name: str, mhz: float) -> "ClockDomain":
        return cls(name, int(round(FS_PER_US / mhz)))

    def cycle_at(self, t_fs: int) -> int:
        """The last cycle that started at or before t."""
        return t_fs // self.period_fs

    def time_of(self, cycle: int) -> int:
        return cycle * self.period_fs


@mypyc_attr(allow_interpreted_subclasses=True)  # components are written in plain Python too
class Component:
    """A ticking unit. Subclasses implement `tick(cycle) -> bool` (progress made)."""

    name = "component"

    def __init__(self, domain: ClockDomain) -> None:
        self.domain = domain
        # a passive component (timeline sampling, monitor windows) only observes: its
        # timers alone do not keep a skip-ahead run going once everything else sleeps
        self.passive = False
        self.engine: Engine | None = None
        self.last_cycle = -1  # last cycle this component was ticked (or accounted)
        self._k = -1          # index in the engine (tick order)
        self.ticks = 0        # cycles actually ticked (the rest were skipped asleep)

    def tick(self, cycle: int) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def skipped(self, first: int, last: int) -> None:
        """Called before a tick for the cycles [first, last] the component slept
        through, so per-cycle statistics can be back-filled."""

    def wake(self) -> None:
        if self.engine is not None:
            self.engine.wake(self)

    def wake_at(self, cycle: int) -> None:
        if self.engine is not None:
            self.engine.wake_at(self, cycle)


class Engine:
    """Runs components until nothing is left to do (or a cycle limit is hit)."""

    def __init__(self, dense: bool = False) -> None:
        self.dense = dense
        self.now = 0
        self.components: list[Component] = []
        # components that tick at their next cycle, as a bit mask (bit k: components[k]):
        # walking its bits visits them in tick order without sorting a set each step
        self._active = 0
        # timers: a heap of the distinct times that have any, and per time the indices of
        # the components to wake (one entry per (component, time)); many components wake
        # at the same clock edge, so this keeps the heap small and its entries plain ints
        self._timers: list[int] = []
        self._timer_comps: dict[int, list[int]] = {}
        # the time of the latest timer set and its list there (many components set timers
        # for the same clock edge in a row): found without a dictionary lookup
        self._last_t = -1
        self._last_ks: list[int] = []
        self._ticking: int | None = None  # index of the component being ticked
        self._live_timers = 0  # pending timers of non-passive components
        self.stop_requested = False  # set by a component (request_stop): run() returns before the next step

    def add(self, comp: Component, active: bool = True) -> Component:
        comp.engine = self
        k = len(self.components)
        self.components.append(comp)
        comp._k = k
        if active:
            self._active |= 1 << k
        return comp

    def request_stop(self) -> None:
        """End run() before its next time step (the cheap form of its `stop` callback)."""
        self.stop_requested = True

    def wake(self, comp: Component) -> None:
        k = comp._k
        if self._ticking is not None and k < self._ticking:
            # woken by a component after it in this cycle's sweep: a dense run already
            # ticked it (idle) this cycle, so it next ticks at the following cycle
            d = comp.domain
            if self.now % d.period_fs == 0:
                c = self.now // d.period_fs
                if comp.last_cycle < c:
                    comp.skipped(comp.last_cycle + 1, c)
                    comp.last_cycle = c
        self._active |= 1 << k

    def wake_at(self, comp: Component, cycle: int) -> None:
        self.wake_at_time(comp, comp.domain.time_of(cycle))

    def wake_at_time(self, comp: Component, t_fs: int) -> None:
        if self.dense:  # every component ticks every cycle anyway
            return
        # (a component may set the same timer twice: waking it twice is waking it once)
        if not comp.passive:
            self._live_timers += 1
        if t_fs == self._last_t:
            self._last_ks.append(comp._k)
            return
        ks = self._timer_comps.get(t_fs)
        if ks is None:
            ks = self._timer_comps[t_fs] = [comp._k]
            heappush(self._timers, t_fs)
        else:
            ks.append(comp._k)
        self._last_t = t_fs
        self._last_ks = ks

    def _pop_due_timers(self, t_fs: int) -> None:
        timers, comps, by_time = self._timers, self.components, self._timer_comps
        active = self._active
        if self._last_t <= t_fs:
            self._last_t = -1  # its list is about to leave the dictionary
        while timers and timers[0] <= t_fs:
            t = heappop(timers)
            ks = by_time[t]  # (not dict.pop: docs/compiled-core.md)
            del by_time[t]
            for k in ks:
                if not comps[k].passive:
                    self._live_timers -= 1
                active |= 1 << k
        self._active = active

    def _next_cycle_time(self, comp: Component) -> int:
        """Time of the first cycle of comp's domain strictly after its last tick and
        not before now."""
        d = comp.domain
        c = max(comp.last_cycle + 1, -(-self.now // d.period_fs))
        return d.time_of(c)

    def run(self, max_time_fs: int | None = None, stop: Callable[[], bool] | None = None,
            until_stop_request: bool = False) -> None:
        """Tick until `stop()` is true or a component calls request_stop(), every
        component sleeps with no timers pending (sparse) or — unless `stop` is given or
        `until_stop_request` is set — none is busy (dense), or `max_time_fs` is reached."""
        comps = self.components
        n = len(comps)
        dense = self.dense
        timers = self._timers
        everyone = (1 << n) - 1
        self.stop_requested = False
        while True:
            if self.stop_requested or (stop is not None and stop()):
                return
            if dense:
                candidates = everyone
            else:
                if timers and timers[0] <= self.now:
                    self._pop_due_timers(self.now)
                if not self._active:
                    if not timers or not self._live_timers:
                        return  # asleep for good (only observers' timers left)
                    self.now = max(self.now, timers[0])
                    continue
                candidates = self._active
            now = self.now
            # the next time step: the earliest next cycle of any candidate (or a timer)
            t = -1
            m = candidates
            while m:
                low = m & -m
                m ^= low
                c = comps[low.bit_length() - 1]
                p = c.domain.period_fs
                nc = c.last_cycle + 1
                first = -(-now // p)
                tk = (nc if nc > first else first) * p
                if t < 0 or tk < t:
                    t = tk
            if timers and not dense:
                t0 = timers[0]
                if t0 < t:
                    t = t0 if t0 > now else now
            if max_time_fs is not None and t > max_time_fs:
                self.now = max_time_fs
                return
            self.now = t
            if not dense:
                if timers and timers[0] <= t:
                    self._pop_due_timers(t)
                candidates = self._active
            # in index order; a component woken meanwhile ticks from the next step
            m = candidates
            while m:
                low = m & -m
                m ^= low
                k = low.bit_length() - 1
                comp = comps[k]
                p = comp.domain.period_fs
                if t % p:
                    continue
                cycle = t // p
                last = comp.last_cycle
                if cycle <= last:
                    continue
                if cycle > last + 1:
                    comp.skipped(last + 1, cycle - 1)
                comp.last_cycle = cycle
                comp.ticks += 1
                self._ticking = k
                if not comp.tick(cycle) and not dense:
                    self._active &= ~low
            self._ticking = None
            if dense and stop is None and not until_stop_request and all(not self._has_work(c) for c in comps):
                return

    def settle(self) -> None:
        """Account every component's slept cycles up to now (before reading stats)."""
        for comp in self.components:
            d = comp.domain
            c = self.now // d.period_fs
            if c > comp.last_cycle:
                comp.skipped(comp.last_cycle + 1, c)
                comp.last_cycle = c

    @staticmethod
    def _has_work(comp: Component) -> bool:
        busy = getattr(comp, "busy", None)
        return bool(busy()) if busy is not None else False
