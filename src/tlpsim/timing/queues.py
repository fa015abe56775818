"""Bounded, timed FIFOs: the only way timing components exchange work.

An item pushed at time t becomes visible to the consumer at its first cycle at or
after t + `delay` consumer cycles, and the push sets a timer that wakes the
consumer then — so a consumer never sees data produced in the same cycle. Likewise
space freed by a pop becomes usable only from the next time step (`held_units`
counts this step's pops), so a producer ticking before or after the consumer in the
same cycle sees the same thing and dense and sparse ticking agree. A full queue
refuses pushes (`can_push` first: pushing into a full queue is a programming
error); popping from a full queue wakes the blocked producer at its next cycle
(availability back-propagation).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from tlpsim.timing.duering import DueRing
from tlpsim.timing.engine import Component, Engine

T = TypeVar("T")


class TimedQueue(Generic[T]):
    """FIFO of (ready time, item) with a capacity in items."""

    # consumer/producer: a Component or a stand-in with `domain` and `engine` (the
    # crossbar's input ports), hence Any
    def __init__(self, name: str, capacity: int, consumer: Any = None, delay: int = 1,
                 producer: Any = None) -> None:
        if capacity < 1:
            raise ValueError(f"queue {name}: capacity must be >= 1")
        self.name = name
        self.capacity = capacity
        self.consumer = consumer
        self.producer = producer
        self.delay = delay
        # the entries, with their ready times and units, unboxed (a deque of tuples cost a
        # tuple, a boxed time and a generic method call per push and pop)
        self._ring = DueRing()
        self.pushes = 0
        self.full_refusals = 0
        self._eng: Any = None    # the engine of the connected components, once known
        self._engine: Engine | None = None  # the same when it is the Engine (not a stand-in): read natively
        self._head_t = -1   # ready time of the head item (-1: empty), kept for ready() to compare natively
        self._free_t = -1   # time step of the latest pops, and the units they freed
        self._freed = 0

    def __len__(self) -> int:
        return len(self._ring)

    def _append(self, ready: int, item: Any, units: int) -> None:
        ring = self._ring
        if not len(ring):
            self._head_t = ready
        ring.append(ready, item, units)

    def _popleft(self) -> tuple[Any, int]:
        """The head item and its units, removed."""
        ring = self._ring
        units = ring.head_units()
        item = ring.popleft()
        self._head_t = ring.head_due() if len(ring) else -1
        return item, units

    # capacity accounting in "units" (items here; flits in FlitQueue)
    def units_of(self, item: Any = None) -> int:
        """Units an item takes (None: the largest item)."""
        return 1

    def used_units(self) -> int:
        return len(self._ring)

    def _engine_now(self) -> int | None:
        eng = self._eng
        if eng is None:
            for c in (self.consumer, self.producer):
                if c is not None and c.engine is not None:
                    eng = self._eng = c.engine  # components join one engine for good
                    if isinstance(eng, Engine):
                        self._engine = eng
                    break
            else:
                return None
        return eng.now

    def _now(self) -> int:
        """The engine's time, -1 while the queue does not know its engine: a plain int,
        not `_engine_now`'s optional one, which the compiled core boxes on every call."""
        e = self._engine
        if e is not None:
            return e.now
        t = self._engine_now()
        return -1 if t is None else t

    def held_units(self) -> int:
        """Units not reusable now: queued items plus what was popped this time step."""
        n = self.used_units()
        if self._freed:
            e = self._engine
            if e is not None:
                if e.now == self._free_t:
                    n += self._freed
            else:
                eng = self._eng
                if (eng.now if eng is not None else self._engine_now()) == self._free_t:
                    n += self._freed
        return n

    def can_push(self, item: Any = None) -> bool:
        need = self.units_of(item)
        ok = self.held_units() + need <= self.capacity
        if not ok:
            self.full_refusals += 1
            p = self.producer
            if self.used_units() + need <= self.capacity and p is not None and p.engine is not None:
                # refused only because of this step's pops: the room is there next cycle
                d = p.domain
                now = self._engine_now() or 0
                p.engine.wake_at_time(p, d.time_of(d.cycle_at(now) + 1))
        return ok

    def push(self, item: T, now_fs: int) -> None:
        if self.used_units() + self.units_of(item) > self.capacity:
            raise RuntimeError(f"push into full queue {self.name}: the producer must check can_push() first")
        ready = self._notify_consumer(now_fs)
        self._append(ready, item, 1)
        self._on_push(item)
        self.pushes += 1

    def _notify_consumer(self, now_fs: int) -> int:
        """Ready time of an item pushed at now_fs (`delay` consumer cycles later); the
        consumer is woken for it."""
        c = self.consumer
        if isinstance(c, Component):  # (narrowed: the compiled core reads it natively)
            p = c.domain.period_fs
            ready = (now_fs // p + self.delay) * p
            ce = c.engine
            if ce is not None:
                ce.wake_at_time(c, ready)
            return ready
        if c is not None:  # a stand-in with `domain` and `engine` (a crossbar's input port)
            p = c.domain.period_fs
            ready = (now_fs // p + self.delay) * p
            if c.engine is not None:
                c.engine.wake_at_time(c, ready)
            return ready
        return now_fs

    def ready(self, now_fs: int) -> bool:
        t = self._head_t
        return t >= 0 and t <= now_fs

    def peek(self) -> T:
        return self._ring.head()

    def pop(self) -> T:
        blocking = self.capacity - self.used_units() < self.units_of(None)
        item = self._popleft()[0]
        self._on_pop(item)
        e = self._engine
        if e is not None:
            t = e.now
            if t != self._free_t:
                self._free_t, self._freed = t, 0
            self._freed += self.units_of(item)
            if blocking:
                self._wake_producer(t)
            return item
        eng = self._eng
        now = eng.now if eng is not None else self._engine_now()
        if now is not None:
            if now != self._free_t:
                self._free_t, self._freed = now, 0
            self._freed += self.units_of(item)
        if blocking:
            self._wake_producer(now)
        return item

    def _wake_producer(self, now: int | None) -> None:
        """A pop freed room in a full queue: usable from the producer's next cycle."""
        p = self.producer
        t = now if now is not None else 0
        if isinstance(p, Component):  # (narrowed: the compiled core reads it natively)
            pe = p.engine
            if pe is not None:
                per = p.domain.period_fs
                pe.wake_at_time(p, (t // per + 1) * per)
        elif p is not None and p.engine is not None:
            per = p.domain.period_fs
            p.engine.wake_at_time(p, (t // per + 1) * per)

    def _on_push(self, item: Any) -> None:
        pass

    def _on_pop(self, item: Any) -> None:
        pass

    def next_ready_time(self) -> int | None:
        return self._head_t if self._head_t >= 0 else None

    def head_ready_time(self) -> int:
        """Ready time of the head item (the queue must not be empty)."""
        return self._head_t
