"""Min-heaps of 64-bit integers in a `vec[i64]` (mypyc's unboxed vector, librt.vecs).

The timing core keeps its pending times in heaps of plain integers (engine timers,
crossbar arrivals and releases). In a Python list each entry is a heap-allocated int,
and `heapq` compares them through the generic object protocol; here the entries are
machine words and the compiled comparisons native (docs/compiled-core.md). Entries are
plain integers, so equal ones are interchangeable and the pop order is `heapq`'s.

A `vec` is a value: `push` and `pop` return the vector to keep, as `librt.vecs.append`
does (`h = heap_push(h, x)`).
"""

from __future__ import annotations

from librt.vecs import append, pop, vec
from mypy_extensions import i64


def new_heap() -> vec[i64]:
    return vec[i64]()


def heap_push(h: vec[i64], x: i64) -> vec[i64]:
    """`x` added (heapq.heappush's sift towards the root)."""
    h = append(h, x)
    pos: i64 = len(h) - 1
    while pos > 0:
        parent = (pos - 1) >> 1
        p = h[parent]
        if x < p:
            h[pos] = p
            pos = parent
        else:
            break
    h[pos] = x
    return h


def heap_pop(h: vec[i64]) -> tuple[vec[i64], i64]:
    """The smallest entry removed: (the heap, the entry). The heap must not be empty."""
    h, last = pop(h)
    n: i64 = len(h)
    if n == 0:
        return h, last
    top = h[0]
    pos: i64 = 0
    child: i64 = 1
    while child < n:
        right = child + 1
        if right < n and h[right] < h[child]:
            child = right
        c = h[child]
        if c < last:
            h[pos] = c
            pos = child
            child = 2 * pos + 1
        else:
            break
    h[pos] = last
    return h, top
