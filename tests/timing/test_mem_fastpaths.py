"""The memory side's shortcuts agree with the definitions they stand in for:
tabulated flits and bytes with `MemRequest.packet_bytes()`, `partition_of` with a
full `decode`, `access_if_hit` with `probe` + `access`, and a FlitQueue's restated
queue operations with the capacity rules of `TimedQueue`."""

from __future__ import annotations

import random

import pytest

from tlpsim.timing.addrmap import AddressMap
from tlpsim.timing.cache import HIT, CacheArray
from tlpsim.timing.engine import ClockDomain, Component, Engine
from tlpsim.timing.icnt import FlitQueue, flit_sizes, packet_flits
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE, MemRequest

GTX480_MAP = "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS"


@pytest.mark.parametrize("flit_bytes", [1, 8, 16, 32, 40, 136])
def test_flit_and_byte_tables_match_packet_bytes(flit_bytes):
    sizes = flit_sizes(flit_bytes)
    for kind in (READ, WRITE, ATOMIC):
        for reply in (False, True):
            for mask in range(16):
                pkt = MemRequest(kind, 0, mask, 0, is_reply=reply)
                nbytes = pkt.packet_bytes()
                assert sizes.bytes_of(pkt) == nbytes
                assert sizes.of(pkt) == packet_flits(pkt, flit_bytes) == max(1, -(-nbytes // flit_bytes))


@pytest.mark.parametrize("n_channels,n_sub", [(6, 1), (6, 2), (8, 2), (8, 4)])
def test_partition_of_is_the_decoded_sub_partition(n_channels, n_sub):
    m = AddressMap.from_gpgpusim(GTX480_MAP, n_channels, n_sub)
    rng = random.Random(n_channels * 10 + n_sub)
    for _ in range(3000):
        a = rng.getrandbits(36) << 7
        assert m.partition_of(a) == m.decode(a).sub_partition


def test_access_if_hit_is_probe_then_access():
    # two arrays fed the same random line accesses: one through probe/access, one
    # trying access_if_hit first; their states, stats and LRU order stay equal
    kw = dict(size_bytes=4 * 128 * 4, assoc=4, line_bytes=128, sector_bytes=64)
    slow, fast = CacheArray(**kw), CacheArray(**kw)
    rng = random.Random(7)
    for _ in range(4000):
        addr, mask = rng.randrange(24) * 128, rng.randrange(1, 16)
        hit = fast.access_if_hit(addr, mask)
        assert hit == (slow.probe(addr, mask) == HIT)
        if hit:
            slow.access(addr, mask)
            continue
        if rng.random() < 0.5:       # miss: allocate and fill in both, or in neither
            for arr in (slow, fast):
                if arr.victim(addr)[0]:
                    arr.fill(addr, arr.access(addr, mask).missing)
    assert slow.stats == fast.stats
    for s in range(slow.n_sets):
        assert slow.set_lines(s) == fast.set_lines(s)
        assert [slow.state(a) for a in slow.set_lines(s)] == [fast.state(a) for a in fast.set_lines(s)]


class _Idle(Component):
    def tick(self, cycle: int) -> bool:
        return False


def test_flit_queue_counts_flits_and_holds_popped_room_for_the_step():
    dom = ClockDomain("icnt", 1000)
    eng = Engine()
    prod, cons = eng.add(_Idle(dom), active=False), eng.add(_Idle(dom), active=False)
    q = FlitQueue("q", 10, 32, consumer=cons, producer=prod)   # largest packet: 136 B = 5 flits
    write = MemRequest(WRITE, 0, 0xF, 0)                         # 8 + 128 B -> 5 flits
    read = MemRequest(READ, 0, 0x1, 0)                           # header only -> 1 flit
    q.push(write, 0)
    q.push(read, 0)
    assert (q.used_units(), len(q), q.head_flits()) == (6, 2, 5)
    assert q.can_push(read) and not q.can_push()                 # 6 + 5 > 10
    assert q.full_refusals == 1
    eng.now = 1000                                               # both visible from cycle 1
    assert q.ready(1000) and not q.ready(999)
    assert q.pop() is write
    assert (q.used_units(), q.held_units()) == (1, 6)            # the 5 popped flits are held this step
    assert not q.can_push()
    eng.now = 2000
    assert q.held_units() == 1 and q.can_push()
    with pytest.raises(RuntimeError, match="full queue q"):
        for _ in range(10):
            q.push(write, 2000)


class _Trace:
    """The memory table of a trace: per row a state space and a set of sector ids."""

    def __init__(self, rows: list[list[int]]) -> None:
        import numpy as np

        self.mem_space = np.zeros(len(rows), dtype=np.int8)
        self.sectors = np.array([s for r in rows for s in r], dtype=np.uint64)
        self.mem_sector_offsets = np.concatenate(([0], np.cumsum([len(r) for r in rows]))).astype(np.int64)

    def bank_degrees(self, banks: int):
        import numpy as np

        return np.ones(self.mem_space.size, dtype=np.int16)


@pytest.mark.parametrize("ascending", [True, False])
def test_mem_rows_accesses_are_each_rows_lines_with_their_sector_masks(ascending):
    from tlpsim.timing.warp import MemRows

    rng = random.Random(7)
    rows = []
    for _ in range(400):
        secs = rng.sample(range(1 << 12), rng.choice((0, 1, 2, 4, 8, 32)))
        rows.append(sorted(secs) if ascending else secs)
    rows += [[], [5], [4, 5, 6, 7], [3, 4]]
    got = MemRows(_Trace(rows))
    for k, secs in enumerate(rows):
        lines: dict[int, int] = {}
        for s in secs:  # the definition: one access per 128-byte line, its 32-byte sectors as a mask
            lines[s >> 2] = lines.get(s >> 2, 0) | (1 << (s & 3))
        assert got.accesses(k) == [(line << 7, mask) for line, mask in sorted(lines.items())]
    assert list(MemRows(_Trace([])).line_offsets) == [0]  # an empty table: no rows, no accesses
