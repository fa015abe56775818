"""CycleBuckets: entries come out a cycle at a time, earliest first, each cycle's in the
order added, whether they sat in the wheel or (when their slot held another cycle) in
the dict."""

import random

import pytest

from tlpsim.timing.buckets import WHEEL_SLOTS, CycleBuckets


def drain(b, upto):
    out = []
    while 0 <= b.next_cycle() <= upto:
        c, bucket = b.take()
        out.extend((c, x) for x in bucket)
        b.recycle(bucket)
    return out


def test_a_cycle_whose_slot_is_taken_keeps_its_order_in_the_dict():
    b = CycleBuckets()
    b.add(5, "a")
    b.add(5 + WHEEL_SLOTS, "far1")       # same slot, another cycle: the dict
    b.add(5, "b")
    assert len(b) == 3 and b.next_cycle() == 5
    assert drain(b, 5) == [(5, "a"), (5, "b")]
    b.add(5 + WHEEL_SLOTS, "far2")       # the slot is free now, but the cycle is in the dict
    assert b.entries() == [(5 + WHEEL_SLOTS, "far1"), (5 + WHEEL_SLOTS, "far2")]
    assert drain(b, 1000) == [(5 + WHEEL_SLOTS, "far1"), (5 + WHEEL_SLOTS, "far2")]
    assert len(b) == 0 and b.next_cycle() == -1


def test_equals_a_dict_of_lists_under_random_adds_and_takes():
    rng = random.Random(7)
    b, ref = CycleBuckets(), {}
    now, seq = 0, 0
    for step in range(20000):
        for _ in range(rng.randrange(3)):
            c = now + 1 + (rng.randrange(3 * WHEEL_SLOTS) if rng.random() < 0.1 else rng.randrange(12))
            b.add(c, seq)
            ref.setdefault(c, []).append(seq)
            seq += 1
        got = drain(b, now)
        want = [(c, x) for c in sorted(k for k in ref if k <= now) for x in ref.pop(c)]
        assert got == want, step
        assert len(b) == sum(map(len, ref.values()))
        now += 1


def test_negative_cycles_and_empty_takes_are_refused():
    b = CycleBuckets()
    with pytest.raises(ValueError, match="cycle -1"):
        b.add(-1, "x")
    with pytest.raises(IndexError):
        b.take()
