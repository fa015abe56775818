"""Entries due at a cycle, taken out one cycle at a time in the order they were added:
the writebacks an SM has scheduled, the packets a crossbar is delivering.

A dict of lists keyed by cycle costs, per distinct cycle, a boxed key (cycles past 256
are heap objects), a new list, a hash insert and a delete (docs/compiled-core.md).
Nearly every entry here is due a few cycles ahead, so a cycle's entries sit in slot
`cycle mod WHEEL_SLOTS` of a wheel whose lists are reused; a cycle whose slot holds
another cycle goes to a dict instead (rare). A heap of the distinct cycles (unboxed,
iheap.py) orders them. Each cycle's entries are in exactly one place, so the order
within a cycle is the order added.
"""

from __future__ import annotations

from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64

from tlpsim.timing.iheap import heap_pop, heap_push, new_heap

WHEEL_SLOTS: Final = 64   # a power of two: the slot is cycle & (WHEEL_SLOTS - 1)


class CycleBuckets:
    """Entries by the (non-negative) cycle they are due; `take` gives the earliest
    cycle's entries, and `recycle` hands that list back once it has been read."""

    def __init__(self) -> None:
        self._slots: list[list[Any]] = [[] for _ in range(WHEEL_SLOTS)]
        self._slot_cycle = vec[i64]([-1] * WHEEL_SLOTS)  # the cycle a slot holds (-1: none)
        self._far: dict[int, list[Any]] = {}
        self._cycles = new_heap()
        self._spare: list[Any] | None = None
        self.n = 0  # entries

    def __len__(self) -> int:
        return self.n

    def next_cycle(self) -> int:
        """The earliest cycle with entries (-1: none)."""
        return int(self._cycles[0]) if len(self._cycles) else -1

    def add(self, cycle: int, item: Any) -> None:
        if cycle < 0:
            raise ValueError(f"an entry due at cycle {cycle}: cycles are >= 0")
        self.n += 1
        k = cycle & (WHEEL_SLOTS - 1)
        held = self._slot_cycle[k]
        if held == cycle:
            self._slots[k].append(item)
            return
        far = self._far
        # (a cycle with entries in the dict keeps adding there: its order stays whole)
        if held < 0 and (not far or cycle not in far):
            self._slot_cycle[k] = cycle
            self._slots[k].append(item)
            self._cycles = heap_push(self._cycles, cycle)
            return
        bucket = far.get(cycle)
        if bucket is None:
            far[cycle] = [item]
            self._cycles = heap_push(self._cycles, cycle)
        else:
            bucket.append(item)

    def take(self) -> tuple[int, list[Any]]:
        """(the earliest cycle, its entries in the order added), removed; there must be
        one. The list is the caller's until it passes it to `recycle`."""
        if not len(self._cycles):
            raise IndexError("take() from empty CycleBuckets")
        self._cycles, c64 = heap_pop(self._cycles)
        c = int(c64)
        k = c & (WHEEL_SLOTS - 1)
        if self._slot_cycle[k] == c:
            bucket = self._slots[k]
            spare = self._spare
            self._slots[k] = spare if spare is not None else []
            self._spare = None
            self._slot_cycle[k] = -1
        else:
            bucket = self._far[c]
            del self._far[c]  # (not dict.pop: docs/compiled-core.md)
        self.n -= len(bucket)
        return c, bucket

    def recycle(self, bucket: list[Any]) -> None:
        """A list `take` gave, read: emptied and kept for a slot."""
        bucket.clear()
        self._spare = bucket

    def entries(self) -> list[tuple[int, Any]]:
        """(cycle, entry) pairs, earliest cycle first (for reports and tests)."""
        out: list[tuple[int, Any]] = []
        for c in sorted(int(x) for x in self._cycles):
            k = c & (WHEEL_SLOTS - 1)
            bucket = self._slots[k] if self._slot_cycle[k] == c else self._far[c]
            out.extend((c, item) for item in bucket)
        return out
