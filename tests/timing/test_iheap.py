"""The timing core's integer heaps (timing/iheap.py) pop in sorted order, as heapq does."""

import heapq
import random

from tlpsim.timing.iheap import heap_pop, heap_push, new_heap


def test_pops_come_in_sorted_order_with_pushes_interleaved():
    rng = random.Random(7)
    h, ref = new_heap(), []
    for _ in range(20_000):
        if ref and rng.random() < 0.45:
            h, x = heap_pop(h)
            assert x == heapq.heappop(ref)
        else:
            x = rng.randrange(1 << 40) if rng.random() < 0.5 else rng.randrange(50)  # many repeats
            h = heap_push(h, x)
            heapq.heappush(ref, x)
        assert len(h) == len(ref) and (not ref or h[0] == ref[0])
    out = []
    while len(h):
        h, x = heap_pop(h)
        out.append(x)
    assert out == sorted(ref)
