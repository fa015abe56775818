"""DueRing: a FIFO of (due cycle, item) whatever the cycles' order, growing past its
first ring, with clear errors when read empty."""

import pytest

from tlpsim.timing.duering import DueRing


def test_fifo_order_with_unsorted_cycles_and_growth():
    r = DueRing()
    assert len(r) == 0
    for k in range(5):
        r.append(100 - k, f"a{k}")
    assert (r.head_due(), r.head()) == (100, "a0")
    assert [r.popleft() for _ in range(3)] == ["a0", "a1", "a2"]
    for k in range(20):                 # wraps the 8 slots, then doubles twice
        r.append(k, k)
    assert len(r) == 22
    assert r.entries()[:3] == [(97, "a3"), (96, "a4"), (0, 0)]
    assert [r.popleft() for _ in range(22)] == ["a3", "a4"] + list(range(20))
    assert len(r) == 0


def test_empty_reads_are_clear_errors():
    r = DueRing()
    for op in (r.head_due, r.head, r.popleft):
        with pytest.raises(IndexError, match="empty DueRing"):
            op()
