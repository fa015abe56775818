"""A FIFO of (due cycle, item) pairs with the cycles unboxed: the timed queues between
units (`TimedQueue`, which also keeps each entry's units here) and the pipelines inside
a unit (the L2 slice's ROP FIFOs, the LD/ST unit's queue and L1D latency pipeline).

A `deque` of tuples costs, per entry, a tuple and a boxed cycle, and per test or
head read a generic call (truthiness and indexing of a deque go through the object
protocol in the compiled core: docs/compiled-core.md). Here the items sit in a ring
of list slots and their cycles in a `vec[i64]` beside it; the head's cycle is a
native read. Entries leave in the order they came (FIFO), whatever their cycles.
"""

from __future__ import annotations

from typing import Any

from librt.vecs import vec
from mypy_extensions import i64


class DueRing:
    """FIFO of (due cycle, item), each entry with a count of units beside it (a
    queue's flits; 1 unless given); grows as needed (its owner bounds it)."""

    def __init__(self) -> None:
        self._items: list[Any] = [None] * 8
        self._due = vec[i64]([0] * 8)
        self._units = vec[i64]([0] * 8)
        self._mask = 7
        self._head = 0
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def head_due(self) -> int:
        """The head entry's cycle (the ring must not be empty)."""
        if not self._n:
            raise IndexError("head_due() of an empty DueRing")
        return int(self._due[self._head])

    def head(self) -> Any:
        """The head entry's item (the ring must not be empty)."""
        if not self._n:
            raise IndexError("head() of an empty DueRing")
        return self._items[self._head]

    def head_units(self) -> int:
        """The head entry's units (the ring must not be empty)."""
        if not self._n:
            raise IndexError("head_units() of an empty DueRing")
        return int(self._units[self._head])

    def append(self, due: int, item: Any, units: int = 1) -> None:
        n = self._n
        if n > self._mask:
            self._grow()
        k = (self._head + n) & self._mask
        self._items[k] = item
        self._due[k] = due
        self._units[k] = units
        self._n = n + 1

    def popleft(self) -> Any:
        """The head entry's item, removed."""
        n = self._n
        if not n:
            raise IndexError("popleft() from an empty DueRing")
        h = self._head
        item = self._items[h]
        self._items[h] = None
        self._head = (h + 1) & self._mask
        self._n = n - 1
        return item

    def entries(self) -> list[tuple[int, Any]]:
        """(due, item) pairs, head first (for reports and tests)."""
        return [(int(self._due[(self._head + j) & self._mask]), self._items[(self._head + j) & self._mask])
                for j in range(self._n)]

    def _grow(self) -> None:
        size = 2 * (self._mask + 1)
        items: list[Any] = [None] * size
        due = vec[i64]([0] * size)
        units = vec[i64]([0] * size)
        h, m = self._head, self._mask
        for j in range(self._n):
            k = (h + j) & m
            items[j] = self._items[k]
            due[j] = self._due[k]
            units[j] = self._units[k]
        self._items, self._due, self._units = items, due, units
        self._mask = size - 1
        self._head = 0
