"""The MSHR's open-addressing table (timing/mshr.py) against a dict: the same entries
after any sequence of allocations and fills, including probe runs that wrap around the
table and deletions from the middle of a run (backward shift)."""

import random

import pytest

from tlpsim.timing.mshr import MSHR


@pytest.mark.parametrize("entries", [1, 4, 32, 256])
def test_table_holds_exactly_the_lines_a_dict_would(entries):
    rng = random.Random(entries)
    m, ref = MSHR(entries, 4), {}
    for step in range(20_000):
        # scattered lines, and lines that share their low bits (slice-interleaved
        # addresses: long probe runs)
        addr = rng.choice([rng.randrange(1 << 20) << 7, (rng.randrange(64) * 2048) << 7])
        if rng.random() < 0.5:
            if m.can_allocate(addr):
                assert addr not in ref and len(ref) < entries
                m.allocate(addr, step, 0xF)
                ref[addr] = step
            else:
                assert addr in ref or len(ref) >= entries
        elif ref:
            line = rng.choice(list(ref))
            assert m.fill(line, 0xF) == [ref.pop(line)]
        assert len(m) == len(ref) and m.lookup(addr) == (addr in ref)
        assert all(m.lookup(line) for line in list(ref)[-4:])
    assert m.lines().keys() == ref.keys()


def test_partial_fill_keeps_the_entry_and_releases_only_complete_waiters():
    m = MSHR(2, 4)
    m.allocate(0x1000, "a", 0b0011)
    assert m.merge(0x1000, "b", 0b0101, fetch=0b0100)
    assert m.fill(0x1000, 0b0001) == []          # a waits for sectors 0-1, b for sectors 0 and 2
    assert m.pending(0x1000) == 0b0110
    assert m.fill(0x1000, 0b0010) == ["a"] and m.lookup(0x1000)
    assert m.fill(0x1000, 0b0100) == ["b"] and not m.lookup(0x1000) and len(m) == 0
