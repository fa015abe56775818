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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from librt.vecs import append, vec
from mypy_extensions import i64, mypyc_attr

from tlpsim.timing.iheap import heap_pop, heap_push, new_heap

FS_PER_US: Final = 10**9
# a timer is one integer, time << TIMER_K_BITS | component index, in one heap of machine
# words (iheap.py): 4,096 components, and times below 2**51 fs (2.2 s of simulated time)
TIMER_K_BITS: Final = 12
MAX_COMPONENTS: Final = 1 << TIMER_K_BITS
MAX_TIMER_FS: Final = 1 << (63 - TIMER_K_BITS)


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
        self.engine: Engine | None = None
        self._passive = False
        self.last_cycle = -1  # last cycle this component was ticked (or accounted)
        self._k = -1          # index in the engine (tick order)
        self.ticks = 0        # cycles actually ticked (the rest were skipped asleep)

    @property
    def passive(self) -> bool:
        """A passive component (timeline sampling, monitor windows) only observes: its
        timers alone do not keep a skip-ahead run going once everything else sleeps."""
        return self._passive

    @passive.setter
    def passive(self, value: bool) -> None:
        self._passive = value
        if self.engine is not None:  # (the engine keeps a copy per component)
            self.engine._passive[self._k] = value

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


class _Domain:
    """The components of one clock period (bit k: component k)."""

    def __init__(self, period: i64, members: int) -> None:
        self.period = period
        self.members = members


class Engine:
    """Runs components until nothing is left to do (or a cycle limit is hit)."""

    def __init__(self, dense: bool = False) -> None:
        self.dense = dense
        self.now = 0
        self.components: list[Component] = []
        # components that tick at their next cycle, as a bit mask (bit k: components[k]):
        # walking its bits visits them in tick order without sorting a set each step
        self._active = 0
        # timers: one heap entry per (time, component), time << TIMER_K_BITS | index, so
        # the earliest time is the first entry's and no dictionary of times is needed
        self._timers = new_heap()  # unboxed (iheap.py)
        self._ticking: i64 = -1  # index of the component being ticked (-1: none)
        self._live_timers = 0  # pending timers of non-passive components
        self.stop_requested = False  # set by a component (request_stop): run() returns before the next step
        # per component (index k), unboxed: its clock period (fixed), and copies of its
        # `passive` flag and last_cycle. The step loop reads these instead of each
        # candidate component's attributes (a list read, a type check and boxed divisions
        # per candidate and step); the `passive` setter and _set_last, through which
        # every write of a last_cycle goes, keep the copies equal
        self._period = vec[i64]()
        self._passive = vec[bool]()
        self._last = vec[i64]()
        # the clock domains (by period) and their members (bit k): a step looks at each
        # domain once, not at each active component, to find the next time; and it
        # visits only the components that tick in it
        self._domains: list[_Domain] = []
        # the components whose last cycle is the one starting at time `_swept_at` (ticked
        # or accounted in that step): at an edge of its domain the others tick
        self._swept = 0
        self._swept_at: i64 = -1

    def add(self, comp: Component, active: bool = True) -> Component:
        k = len(self.components)
        if k >= MAX_COMPONENTS:
            raise ValueError(f"an engine runs at most {MAX_COMPONENTS} components; {comp.name!r} would be one more")
        comp.engine = self
        self.components.append(comp)
        comp._k = k
        self._period = append(self._period, comp.domain.period_fs)
        self._passive = append(self._passive, comp.passive)
        self._last = append(self._last, comp.last_cycle)
        p = comp.domain.period_fs
        for dom in self._domains:
            if dom.period == p:
                dom.members |= 1 << k
                break
        else:
            self._domains.append(_Domain(p, 1 << k))
        if active:
            self._active |= 1 << k
        return comp

    def request_stop(self) -> None:
        """End run() before its next time step (the cheap form of its `stop` callback)."""
        self.stop_requested = True

    def wake(self, comp: Component) -> None:
        k = comp._k
        if k < self._ticking:
            # woken by a component after it in this cycle's sweep: a dense run already
            # ticked it (idle) this cycle, so it next ticks at the following cycle
            d = comp.domain
            if self.now % d.period_fs == 0:
                c = self.now // d.period_fs
                if comp.last_cycle < c:
                    comp.skipped(comp.last_cycle + 1, c)
                    self._set_last(comp, c)
        self._active |= 1 << k

    def _set_last(self, comp: Component, cycle: int) -> None:
        """Record that `comp` has been ticked or accounted up to `cycle`."""
        comp.last_cycle = cycle
        k = comp._k
        self._last[k] = cycle
        if cycle * self._period[k] == self.now:
            self._note_swept(k)

    def _note_swept(self, k: i64) -> None:
        """Component k's last cycle is now the one starting at the current time."""
        if self._swept_at != self.now:
            self._swept_at = self.now
            self._swept = 0
        self._swept |= 1 << int(k)

    def account_to(self, comp: Component, cycle: int) -> None:
        """Back-fill `comp`'s statistics for the cycles it slept through up to `cycle`
        (nothing if it is already there): `skipped`, then its last cycle moves on."""
        if cycle > comp.last_cycle:
            comp.skipped(comp.last_cycle + 1, cycle)
            self._set_last(comp, cycle)

    def wake_at(self, comp: Component, cycle: int) -> None:
        self.wake_at_time(comp, comp.domain.time_of(cycle))

    def wake_at_time(self, comp: Component, t_fs: int) -> None:
        if self.dense:  # every component ticks every cycle anyway
            return
        # (a component may set the same timer twice: waking it twice is waking it once)
        if t_fs >= MAX_TIMER_FS:
            raise OverflowError(f"{comp.name}: a timer at {t_fs} fs is past the engine's limit of simulated time "
                                f"({MAX_TIMER_FS} fs)")
        k = comp._k
        if not self._passive[k]:
            self._live_timers += 1
        self._timers = heap_push(self._timers, t_fs << TIMER_K_BITS | k)

    def _pop_due_timers(self, t_fs: int) -> None:
        timers, passive = self._timers, self._passive
        active = self._active
        bound: i64 = (t_fs + 1) << TIMER_K_BITS
        kmask: i64 = MAX_COMPONENTS - 1
        live = self._live_timers
        while len(timers) and timers[0] < bound:
            timers, key = heap_pop(timers)
            k = key & kmask
            if not passive[k]:
                live -= 1
            active |= 1 << int(k)
        self._live_timers = live
        self._timers = timers
        self._active = active

    def run(self, max_time_fs: int | None = None, stop: Callable[[], bool] | None = None,
            until_stop_request: bool = False) -> None:
        """Tick until `stop()` is true or a component calls request_stop(), every
        component sleeps with no timers pending (sparse) or — unless `stop` is given or
        `until_stop_request` is set — none is busy (dense), or `max_time_fs` is reached."""
        comps = self.components
        n = len(comps)
        dense = self.dense
        everyone = (1 << n) - 1
        self.stop_requested = False
        while True:
            if self.stop_requested or (stop is not None and stop()):
                return
            if dense:
                candidates = everyone
            else:
                if len(self._timers) and self._timers[0] >> TIMER_K_BITS <= self.now:
                    self._pop_due_timers(self.now)
                if not self._active:
                    if not len(self._timers) or not self._live_timers:
                        return  # asleep for good (only observers' timers left)
                    self.now = max(self.now, int(self._timers[0]) >> TIMER_K_BITS)
                    continue
                candidates = self._active
            now: i64 = self.now
            period, lastc = self._period, self._last
            domains = self._domains
            swept = self._swept if self._swept_at == now else 0
            # the next time step: the earliest next cycle of any domain with a candidate
            # (at an edge, now itself while one of them has not ticked at it) or a timer
            t: i64 = -1
            for dom in domains:
                members = dom.members
                if not candidates & members:
                    continue
                p = dom.period
                r = now % p
                if r:
                    td = now - r + p
                elif candidates & members & ~swept:
                    td = now
                else:
                    td = now + p
                if t < 0 or td < t:
                    t = td
            timers = self._timers  # (a vec is a value: re-read after any push or pop)
            if len(timers) and not dense:
                t0 = timers[0] >> TIMER_K_BITS
                if t0 < t:
                    t = t0 if t0 > now else now
            if max_time_fs is not None and t > max_time_fs:
                self.now = max_time_fs
                return
            self.now = t
            if not dense:
                if len(timers) and timers[0] >> TIMER_K_BITS <= t:
                    self._pop_due_timers(t)
                candidates = self._active
            if self._swept_at != t:
                self._swept_at = t
                self._swept = 0
            # the candidates at an edge of their domain that have not ticked at it, in
            # index order; a component woken meanwhile ticks from the next step
            edge = 0
            for dom in domains:
                if t % dom.period == 0:
                    edge |= dom.members
            m = candidates & edge & ~self._swept
            while m:
                low = m & -m
                m ^= low
                k: i64 = low.bit_length() - 1
                cycle = t // period[k]
                last = lastc[k]
                if cycle <= last:
                    continue
                comp = comps[k]
                if cycle > last + 1:
                    comp.skipped(last + 1, cycle - 1)
                comp.last_cycle = cycle
                lastc[k] = cycle
                self._swept |= low
                comp.ticks += 1
                self._ticking = k
                if not comp.tick(cycle) and not dense:
                    self._active &= ~low
            self._ticking = -1
            if dense and stop is None and not until_stop_request and all(not self._has_work(c) for c in comps):
                return

    def settle(self) -> None:
        """Account every component's slept cycles up to now (before reading stats)."""
        for comp in self.components:
            self.account_to(comp, self.now // comp.domain.period_fs)

    @staticmethod
    def _has_work(comp: Component) -> bool:
        busy = getattr(comp, "busy", None)
        return bool(busy()) if busy is not None else False
