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
from dataclasses import dataclass

FS_PER_US = 10**9


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


class Component:
    """A ticking unit. Subclasses implement `tick(cycle) -> bool` (progress made)."""

    name = "component"

    def __init__(self, domain: ClockDomain) -> None:
        self.domain = domain
        self.engine: Engine | None = None
        self.last_cycle = -1  # last cycle this component was ticked (or accounted)

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
        self._order: dict[int, int] = {}
        self._active: set[int] = set()
        self._timers: list[tuple[int, int, int]] = []  # (time, order, component index)
        self._ticking: int | None = None  # index of the component being ticked

    def add(self, comp: Component, active: bool = True) -> Component:
        comp.engine = self
        k = len(self.components)
        self.components.append(comp)
        self._order[id(comp)] = k
        if active:
            self._active.add(k)
        return comp

    def wake(self, comp: Component) -> None:
        k = self._order[id(comp)]
        if self._ticking is not None and k < self._ticking:
            # woken by a component after it in this cycle's sweep: a dense run already
            # ticked it (idle) this cycle, so it next ticks at the following cycle
            d = comp.domain
            if self.now % d.period_fs == 0:
                c = self.now // d.period_fs
                if comp.last_cycle < c:
                    comp.skipped(comp.last_cycle + 1, c)
                    comp.last_cycle = c
        self._active.add(k)

    def wake_at(self, comp: Component, cycle: int) -> None:
        self.wake_at_time(comp, comp.domain.time_of(cycle))

    def wake_at_time(self, comp: Component, t_fs: int) -> None:
        if self.dense:  # every component ticks every cycle anyway
            return
        k = self._order[id(comp)]
        heapq.heappush(self._timers, (t_fs, k, k))

    def _next_cycle_time(self, comp: Component) -> int:
        """Time of the first cycle of comp's domain strictly after its last tick and
        not before now."""
        d = comp.domain
        c = max(comp.last_cycle + 1, -(-self.now // d.period_fs))
        return d.time_of(c)

    def run(self, max_time_fs: int | None = None, stop=None) -> None:
        """Tick until `stop()` is true, every component sleeps with no timers pending
        (sparse) or none is busy (dense), or `max_time_fs` is reached."""
        comps = self.components
        n = len(comps)
        while True:
            if stop is not None and stop():
                return
            if self.dense:
                candidates = range(n)
            else:
                # move due timers into the active set
                while self._timers and self._timers[0][0] <= self.now:
                    self._active.add(heapq.heappop(self._timers)[2])
                if not self._active:
                    if not self._timers:
                        return
                    self.now = max(self.now, self._timers[0][0])
                    continue
                candidates = sorted(self._active)
            now = self.now
            t = None
            for k in candidates:
                c = comps[k]
                p = c.domain.period_fs
                nc = c.last_cycle + 1
                first = -(-now // p)
                tk = (nc if nc > first else first) * p
                if t is None or tk < t:
                    t = tk
            if self._timers and not self.dense:
                t = min(t, max(self._timers[0][0], self.now))
            if max_time_fs is not None and t > max_time_fs:
                self.now = max_time_fs
                return
            self.now = t
            if not self.dense:
                while self._timers and self._timers[0][0] <= t:
                    self._active.add(heapq.heappop(self._timers)[2])
                candidates = sorted(self._active)
            for k in candidates:
                comp = comps[k]
                d = comp.domain
                if t % d.period_fs:
                    continue
                cycle = t // d.period_fs
                if cycle <= comp.last_cycle:
                    continue
                if cycle > comp.last_cycle + 1:
                    comp.skipped(comp.last_cycle + 1, cycle - 1)
                comp.last_cycle = cycle
                self._ticking = k
                progress = comp.tick(cycle)
                if not progress and not self.dense:
                    self._active.discard(k)
            self._ticking = None
            if self.dense and stop is None and all(not self._has_work(c) for c in comps):
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
