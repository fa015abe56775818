"""Bounded, timed FIFOs: the only way timing components exchange work.

An item pushed at time t becomes visible to the consumer at its first cycle at or
after t + `delay` consumer cycles, and the push sets a timer that wakes the
consumer then — so a consumer never sees data produced in the same cycle, and dense
and sparse ticking agree. A full queue refuses pushes (`can_push` first: pushing
into a full queue is a programming error); popping from a full queue wakes the
producer that was blocked on it (availability back-propagation).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Generic, TypeVar

from tlpsim.timing.engine import Component

T = TypeVar("T")


class TimedQueue(Generic[T]):
    """FIFO of (ready time, item) with a capacity in items."""

    def __init__(self, name: str, capacity: int, consumer: Component | None = None, delay: int = 1,
                 producer: Component | None = None) -> None:
        if capacity < 1:
            raise ValueError(f"queue {name}: capacity must be >= 1")
        self.name = name
        self.capacity = capacity
        self.consumer = consumer
        self.producer = producer
        self.delay = delay
        self._items: deque[tuple[int, Any]] = deque()
        self.pushes = 0
        self.full_refusals = 0

    def __len__(self) -> int:
        return len(self._items)

    def can_push(self) -> bool:
        ok = len(self._items) < self.capacity
        if not ok:
            self.full_refusals += 1
        return ok

    def push(self, item: T, now_fs: int) -> None:
        if len(self._items) >= self.capacity:
            raise RuntimeError(f"push into full queue {self.name}: the producer must check can_push() first")
        ready = now_fs
        c = self.consumer
        if c is not None:
            d = c.domain
            ready = d.time_of(d.cycle_at(now_fs) + self.delay)
            if c.engine is not None:
                c.engine.wake_at_time(c, ready)
        self._items.append((ready, item))
        self.pushes += 1

    def ready(self, now_fs: int) -> bool:
        return bool(self._items) and self._items[0][0] <= now_fs

    def peek(self) -> T:
        return self._items[0][1]

    def pop(self) -> T:
        was_full = len(self._items) >= self.capacity
        item = self._items.popleft()[1]
        if was_full and self.producer is not None:
            self.producer.wake()
        return item

    def next_ready_time(self) -> int | None:
        return self._items[0][0] if self._items else None
