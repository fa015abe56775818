"""L2 slice against a mock requester (the SM side of the crossbar) and a mock
DRAM channel with a fixed turnaround: exact latencies derived from the parameters.

Timing terms (every queue has the default 1-cycle delay): a request pushed by the
requester at cycle p is accepted by the slice at p + 1 and looked up at
p + 1 + L (L = hit_latency). A hit reply is pushed then and seen by the requester
at p + L + 2. A miss pushes its DRAM read at p + 1 + L; the mock DRAM sees it one
cycle later and answers D cycles after that; the slice sees the data one cycle
later and fills, and replies in the next cycle (GPGPU-Sim's cache_cycle sends ready
MSHR entries before it fills): the requester sees it at p + L + D + 5.
"""

import random
from collections import deque

import pytest

from tlpsim.timing.cache import CachePolicy
from tlpsim.timing.engine import ClockDomain, Component, Engine
from tlpsim.timing.l2 import L2Slice
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE, MemRequest
from tlpsim.timing.queues import TimedQueue

DOM = ClockDomain("l2", 1000)
LINE = 128
MODE = {"dense": False}


@pytest.fixture(autouse=True, params=["sparse", "dense"])
def engine_mode(request):
    """Every exact-timing test runs with idle skipping and with the dense reference engine."""
    MODE["dense"] = request.param == "dense"
    yield
    MODE["dense"] = False


class Requester(Component):
    """Mock SM: pushes scheduled requests, records when each reply becomes visible.
    Takes at most one reply per cycle, and only on cycles that are multiples of
    `pop_every` and not before `pop_from`."""

    name = "sm"

    def __init__(self, out, inp, schedule, pop_from=0, pop_every=1):
        super().__init__(DOM)
        self.out, self.inp = out, inp
        self.todo = deque(sorted(schedule, key=lambda s: s[0]))
        self.pop_from, self.pop_every = pop_from, pop_every
        self.sent, self.got = {}, {}

    def busy(self):
        return bool(self.todo or len(self.inp))

    def _next_pop(self, cycle):
        c = max(cycle, self.pop_from)
        return -(-c // self.pop_every) * self.pop_every

    def tick(self, cycle):
        now = DOM.time_of(cycle)
        progress = False
        if self.inp.ready(now):
            if self._next_pop(cycle) == cycle:
                r = self.inp.pop()
                assert r.is_reply and r.token not in self.got
                self.got[r.token] = cycle
                progress = True
            else:
                self.wake_at(self._next_pop(cycle))
        while self.todo and self.todo[0][0] <= cycle and self.out.can_push():
            r = self.todo.popleft()[1]
            self.out.push(r, now)
            self.sent[r.token] = cycle
            progress = True
        if self.todo and self.todo[0][0] > cycle:
            self.wake_at(self.todo[0][0])
        return progress

    def latency(self, tok):
        return self.got[tok] - self.sent[tok]


class MockDRAM(Component):
    """Takes one request every `every` cycles; answers reads `delay` cycles after
    taking them; writes complete silently."""

    name = "dram"

    def __init__(self, inp, out, delay, every=1):
        super().__init__(DOM)
        self.inp, self.out, self.delay, self.every = inp, out, delay, every
        self.inflight = deque()
        self.log = []                 # (cycle taken, kind, addr, mask)
        self.next_take = 0

    def busy(self):
        return bool(self.inflight or len(self.inp))

    def tick(self, cycle):
        now = DOM.time_of(cycle)
        progress = False
        while self.inflight and self.inflight[0][0] <= cycle and self.out.can_push():
            r = self.inflight.popleft()[1]
            r.is_reply = True
            self.out.push(r, now)
            progress = True
        if self.inp.ready(now):
            if cycle >= self.next_take:
                r = self.inp.pop()
                self.log.append((cycle, r.kind, r.addr, r.sector_mask))
                self.next_take = cycle + self.every
                if r.kind == READ:
                    self.inflight.append((cycle + self.delay, r))
                    self.wake_at(cycle + self.delay)
                progress = True
            else:
                self.wake_at(self.next_take)
        return progress

    def reads(self):
        return [(a // LINE, m) for _, k, a, m in self.log if k == READ]


def req(kind, line, mask=0b0001, tok=None):
    return MemRequest(kind, line * LINE, mask, src_sm=0, token=tok)


def build(schedule, *, dram_delay=20, dram_every=1, dense=None, q_out=8, q_dram=8, pop_from=0, pop_every=1,
          **kw):
    """Requester, DRAM mock and slice; the slice is ticked after the neighbours that
    drain its output queues (see test_dense_equals_sparse)."""
    fi, ti = TimedQueue("icnt->l2", 1024), TimedQueue("l2->icnt", q_out)
    td, fd = TimedQueue("l2->dram", q_dram), TimedQueue("dram->l2", 1024)
    params = {"size_bytes": 8 * LINE, "assoc": 2, "hit_latency": 10, "mshr_entries": 8, "mshr_max_merge": 4,
              "data_port_bytes": 0}
    params.update(kw)
    sm = Requester(fi, ti, schedule, pop_from, pop_every)
    dram = MockDRAM(td, fd, dram_delay, dram_every)
    fi.producer, ti.consumer, td.consumer, fd.producer = sm, sm, dram, dram
    l2 = L2Slice(DOM, 0, from_icnt=fi, to_icnt=ti, to_dram=td, from_dram=fd, **params)
    eng = Engine(dense=MODE["dense"] if dense is None else dense)
    for c in (sm, dram, l2):
        eng.add(c)
    return eng, sm, l2, dram


def run(eng, limit=200_000):
    eng.run(max_time_fs=DOM.time_of(limit))


def warm(l2, line, mask=0b1111):
    l2.cache.access(line * LINE, mask)
    l2.cache.fill(line * LINE, mask)


@pytest.mark.parametrize("hit_latency", [1, 10, 120])
def test_read_hit_latency(hit_latency):
    r = req(READ, 0, tok="a")
    eng, sm, l2, dram = build([(5, r)], hit_latency=hit_latency)
    warm(l2, 0)
    run(eng)
    assert sm.sent["a"] == 5
    assert r.t_l2 == DOM.time_of(6)                 # accepted the cycle after the push (memory-latency stat)
    assert sm.latency("a") == hit_latency + 2      # icnt->L2 queue delay + L + L2->icnt queue delay
    assert dram.log == []
    s = l2.stats
    assert (s.reads, s.replies, s.cache.hits, s.data_reads, s.busy_cycles) == (1, 1, 1, 1, 1)


@pytest.mark.parametrize("hit_latency,dram_delay", [(10, 1), (10, 37), (120, 100)])
def test_read_miss_latency(hit_latency, dram_delay):
    eng, sm, l2, dram = build([(0, req(READ, 3, 0b0110, "a"))], hit_latency=hit_latency, dram_delay=dram_delay)
    run(eng)
    assert dram.log == [(hit_latency + 2, READ, 3 * LINE, 0b0110)]   # only the missing sectors
    assert sm.latency("a") == hit_latency + dram_delay + 5   # the fill's reply leaves the next cycle
    s = l2.stats
    assert (s.cache.misses, s.dram_reads, s.dram_read_sectors, s.dram_fills, s.replies) == (1, 1, 2, 1, 1)
    assert l2.cache.state(3 * LINE) == (0b0110, 0, 0) and len(l2.mshr) == 0
    assert not l2.busy()


def test_mshr_merges_requests_to_one_line():
    L, D = 10, 20
    eng, sm, l2, dram = build([(0, req(READ, 0, 0b0001, "a")), (1, req(READ, 0, 0b0001, "b"))],
                              hit_latency=L, dram_delay=D)
    run(eng)
    assert len(dram.log) == 1                       # one DRAM read
    assert sm.latency("a") == L + D + 5
    assert sm.got["b"] == sm.got["a"] + 1           # released by the same fill, one reply per cycle
    s = l2.stats
    assert (s.cache.misses, s.cache.pending_hits, s.mshr.merges, s.replies) == (1, 1, 1, 2)


def test_sector_miss_merges_and_fetches_only_its_sector():
    L, D = 10, 20
    eng, sm, l2, dram = build([(0, req(READ, 0, 0b0001, "a")), (1, req(READ, 0, 0b0010, "b"))],
                              hit_latency=L, dram_delay=D)
    run(eng)
    assert dram.reads() == [(0, 0b0001), (0, 0b0010)]
    assert sm.latency("a") == L + D + 5 and sm.latency("b") == L + D + 5   # b waits for its own fill only
    s = l2.stats
    assert (s.cache.misses, s.cache.sector_misses, s.mshr.allocations, s.mshr.merges) == (1, 1, 1, 1)


def test_mshr_full_stalls_and_counts_every_cycle():
    L, D = 10, 20
    sched = [(i, req(READ, i, 0b0001, i)) for i in range(3)]
    eng, sm, l2, dram = build(sched, hit_latency=L, dram_delay=D, mshr_entries=2)
    run(eng)
    # the third lookup (cycle 3 + L) waits for the first fill, seen at cycle L + D + 3
    assert l2.stats.cache.res_fail_mshr == D
    assert [c for c, *_ in dram.log] == [L + 2, L + 3, L + D + 4]
    assert sm.latency(0) == sm.latency(1) == L + D + 5
    assert sm.latency(2) == L + 2 * D + 5
    assert l2.stats.mshr.peak_entries == 2


def test_merge_limit_stalls_then_hits():
    L, D = 10, 20
    sched = [(i, req(READ, 0, 0b0001, i)) for i in range(3)]
    eng, sm, l2, dram = build(sched, hit_latency=L, dram_delay=D, mshr_max_merge=2)
    run(eng)
    assert l2.stats.cache.res_fail_merge == D
    assert len(dram.log) == 1
    # the fill (seen at L + D + 3) releases 0 and 1; the retried lookup of 2 hits in
    # the same cycle and pushes its reply; 0 drains the next cycle, 1 the one after.
    # The requester takes one reply per cycle.
    assert (sm.got[2], sm.got[0], sm.got[1]) == (L + D + 4, L + D + 5, L + D + 6)


def test_write_back_of_dirty_victim():
    L, D = 10, 20
    sched = [(0, req(WRITE, 0, 0b0011, "w0")), (1, req(WRITE, 1, 0b0001, "w1")), (2, req(READ, 2, 0b0001, "r"))]
    eng, sm, l2, dram = build(sched, size_bytes=2 * LINE, assoc=2, hit_latency=L, dram_delay=D)
    run(eng)
    assert sm.latency("w0") == sm.latency("w1") == L + 2     # acked at lookup, no fetch (lazy fetch on read)
    # the read's lookup (3 + L) queues the read then the victim's dirty sectors; one a cycle
    assert dram.log == [(L + 4, READ, 2 * LINE, 0b0001), (L + 5, WRITE, 0, 0b0011)]
    assert sm.latency("r") == L + D + 5
    s = l2.stats
    assert (s.cache.writebacks, s.dram_writes, s.dram_write_sectors, s.write_acks) == (1, 1, 2, 2)
    assert l2.cache.state(LINE) == (0b0001, 0b0001, 0)       # line 1 stays dirty


def test_an_l1_writeback_is_written_but_not_acknowledged():
    """GPGPU-Sim's L2 deletes an L1_WRBK_ACC after its lookup: the line is written
    (dirty, lazy fetch on read) and no reply goes back; an ordinary write is acked."""
    L = 10
    wb = req(WRITE, 0, 0b1111, "wb")
    wb.ack = False
    eng, sm, l2, dram = build([(0, wb), (1, req(WRITE, 1, 0b0001, "w"))], hit_latency=L)
    run(eng)
    assert "wb" not in sm.got and sm.latency("w") == L + 2
    assert l2.cache.state(0) == (0b1111, 0b1111, 0) and l2.stats.write_acks == 1 and not dram.log


def test_written_sectors_hit_and_others_sector_miss():
    L, D = 10, 20
    sched = [(0, req(WRITE, 0, 0b0001, "w")), (50, req(READ, 0, 0b0001, "hit")),
             (100, req(READ, 0, 0b0100, "smiss"))]
    eng, sm, l2, dram = build(sched, hit_latency=L, dram_delay=D)
    run(eng)
    assert sm.latency("hit") == L + 2
    assert sm.latency("smiss") == L + D + 5
    assert dram.reads() == [(0, 0b0100)]
    c = l2.stats.cache
    assert (c.misses, c.hits, c.sector_misses) == (1, 1, 1)


def test_lru_order_in_slice():
    L, D = 5, 10
    order = [0, 1, 0, 2, 1, 0]                               # one set of two ways
    sched = [(100 * i, req(READ, n, 0b0001, i)) for i, n in enumerate(order)]
    eng, sm, l2, dram = build(sched, size_bytes=2 * LINE, assoc=2, hit_latency=L, dram_delay=D)
    run(eng)
    assert [n for n, _ in dram.reads()] == [0, 1, 2, 1, 0]   # 2 evicts 1; 1 evicts 0; 0 evicts 2
    assert [sm.latency(i) for i in range(6)] == [L + D + 5, L + D + 5, L + 2, L + D + 5, L + D + 5, L + D + 5]
    assert (l2.stats.cache.hits, l2.stats.cache.misses, l2.stats.cache.evictions) == (1, 5, 3)
    eng, sm, _, dram = build(sched, size_bytes=2 * LINE, assoc=2, hit_latency=L, dram_delay=D,
                             policy="F:B:m:L:L")
    run(eng)
    assert [n for n, _ in dram.reads()] == [0, 1, 2, 0]      # FIFO: 2 evicts 0, then 1 hits


def test_atomics_read_modify_write():
    L, D = 10, 20
    sched = [(0, req(ATOMIC, 0, 0b0001, "hit")), (1, req(ATOMIC, 1, 0b0010, "miss"))]
    eng, sm, l2, _ = build(sched, hit_latency=L, dram_delay=D)
    warm(l2, 0, 0b0001)
    run(eng)
    assert sm.latency("hit") == L + 2
    assert sm.latency("miss") == L + D + 5
    assert l2.cache.state(0)[1] == 0b0001 and l2.cache.state(LINE)[1] == 0b0010   # both dirty
    assert l2.stats.atomics == 2


def test_data_port_width_spaces_lookups():
    L = 10
    sched = [(0, req(READ, 0, 0b1111, "wide")), (1, req(READ, 1, 0b0001, "next"))]
    for port, gap in ((0, 1), (128, 1), (32, 4)):
        eng, sm, l2, _ = build(sched, hit_latency=L, data_port_bytes=port)
        warm(l2, 0)
        warm(l2, 1)
        run(eng)
        assert sm.latency("wide") == L + 2
        assert sm.got["next"] - sm.got["wide"] == gap      # 4 sectors x 32 B over a 32-B port
        assert l2.stats.busy_cycles == gap + 1


@pytest.mark.parametrize("port", [0, 32, 128])
def test_sector_lookups_take_a_cycle_per_sector_whatever_the_outcome(port):
    """GPGPU-Sim splits a line request into sector requests, each looked up in its own
    cycle: a 4-sector miss or pending hit holds the slice 4 cycles (1 without
    sector_lookups) and a 4-sector hit 4 cycles even on a port 128 bytes wide."""
    L = 10
    for first, warm_first, off, on in (("miss", False, 1, 4), ("hit", True, max(1, 128 // port) if port else 1, 4)):
        for sector_lookups, gap in ((False, off), (True, on)):
            sched = [(0, req(READ, 0, 0b1111, first)), (1, req(READ, 1, 0b0001, "next"))]
            eng, sm, l2, _ = build(sched, hit_latency=L, data_port_bytes=port, sector_lookups=sector_lookups)
            if warm_first:
                warm(l2, 0)
            warm(l2, 1)
            run(eng)
            # "next" is at the ROP exit a cycle after the first lookup and waits for the slice
            assert sm.latency("next") == L + 2 + gap - 1, (first, sector_lookups)
            assert l2.stats.busy_cycles == gap + 1


def test_sector_lookups_charge_a_dirty_victim_once_and_no_write_data_on_a_miss():
    """A 1-sector write that allocates over a victim with 2 dirty sectors holds the port
    for the victim's 2 sectors (GPGPU-Sim's use_data_port on a write miss), not 3; a
    4-sector read miss over a 2-sector dirty victim takes 2 + 3 cycles."""
    L, D = 10, 20
    for kind, mask, off, on in ((WRITE, 0b0001, 3, 2), (READ, 0b1111, 2, 5)):
        for sector_lookups, gap in ((False, off), (True, on)):
            sched = [(0, req(kind, 2, mask, "x")), (1, req(READ, 3, 0b0001, "next"))]
            eng, sm, l2, _ = build(sched, size_bytes=4 * LINE, assoc=2, hit_latency=L, dram_delay=D,
                                   data_port_bytes=32, sector_lookups=sector_lookups)
            l2.cache.access(0, 0b0011)          # line 0: 2 dirty sectors, least recently used of set 0
            l2.cache.fill(0, 0b0011)
            l2.cache.write(0, 0b0011, True)
            warm(l2, 4)                         # set 0 is full, line 0 its LRU victim
            warm(l2, 3)                         # "next" hits (set 1)
            run(eng)
            assert l2.stats.cache.writebacks == 1
            assert sm.latency("next") == L + 2 + gap - 1, (kind, sector_lookups)


def test_sector_lookups_need_a_sectored_slice():
    _, _, l2, _ = build([], sector_bytes=None, sector_lookups=True)
    assert not l2.sector_lookups


def test_reply_backpressure_stalls_lookups():
    L = 10
    sched = [(i, req(READ, i, 0b0001, i)) for i in range(3)]
    eng, sm, l2, _ = build(sched, hit_latency=L, q_out=1, pop_from=100)
    for i in range(3):
        warm(l2, i)
    run(eng)
    # reply 0 fills the 1-entry queue at 1 + L; the lookup of 1 stalls from 2 + L
    # until the requester pops at 100; space freed by a pop is usable from the next
    # cycle, so 1 goes out at 101 (seen 102), and 2 stalls once more at 102
    assert [sm.got[i] for i in range(3)] == [100, 102, 104]
    assert l2.stats.stall_reply_cycles == (100 - (2 + L) + 1) + 1


def test_dram_queue_backpressure():
    L, D = 10, 5
    sched = [(i, req(READ, i, 0b0001, i)) for i in range(6)]
    eng, sm, l2, dram = build(sched, hit_latency=L, dram_delay=D, dram_every=10, q_dram=1, miss_queue_entries=2,
                              mshr_entries=8, size_bytes=16 * LINE)
    run(eng)
    # the channel takes one request every 10 cycles from a 1-entry queue
    assert [c for c, *_ in dram.log] == [L + 2 + 10 * i for i in range(6)]
    # lookups run at L + 1 .. L + 4 while the 2-entry miss queue absorbs the backlog;
    # the 5th waits from L + 5 to L + 13 (its slot frees at L + 13 after the lookup
    # stage), the 6th from L + 15 to L + 23
    assert l2.stats.cache.res_fail_queue == 9 + 9
    assert [sm.latency(i) for i in range(6)] == [L + D + 5 + 10 * i - i for i in range(6)]


def test_write_through_no_allocate_policy():
    L, D = 10, 20
    sched = [(0, req(WRITE, 0, 0b0011, "w")), (50, req(READ, 0, 0b0001, "r"))]
    eng, sm, l2, dram = build(sched, hit_latency=L, dram_delay=D, policy=CachePolicy.from_gpgpusim("L:T:m:N:L"))
    run(eng)
    assert dram.log[0] == (L + 2, WRITE, 0, 0b0011)
    assert sm.latency("w") == L + 2 and sm.latency("r") == L + D + 5       # write did not allocate
    assert l2.stats.cache.misses == 2


def test_non_sectored_slice_fetches_whole_lines():
    L, D = 10, 20
    sched = [(0, req(READ, 0, 0b0001, "a")), (50, req(READ, 0, 0b1000, "b"))]
    eng, sm, l2, dram = build(sched, hit_latency=L, dram_delay=D, sector_bytes=None)
    run(eng)
    assert dram.reads() == [(0, 0b1111)]
    assert sm.latency("a") == L + D + 5 and sm.latency("b") == L + 2


def test_naive_write_allocate_fetches_line_without_reply():
    L, D = 10, 20
    sched = [(0, req(WRITE, 0, 0b0001, "w")), (50, req(READ, 0, 0b0110, "r"))]
    eng, sm, l2, dram = build(sched, hit_latency=L, dram_delay=D, policy="L:B:m:W:L", miss_queue_entries=3)
    run(eng)
    # write-through of the data, then a read of the line that nobody waits for
    assert [(k, a, m) for _, k, a, m in dram.log] == [(READ, 0, 0b1111), (WRITE, 0, 0b0001)]
    assert sm.latency("w") == L + 2 and sm.latency("r") == L + 2      # the fetched line serves the read
    assert sorted(sm.got) == ["r", "w"] and l2.stats.replies == 2 and len(l2.mshr) == 0


def test_constructor_checks_and_interleave_helper():
    base = {"size_bytes": 8 * LINE, "assoc": 2, **{k: TimedQueue(k, 4) for k in
                                                   ("from_icnt", "to_icnt", "to_dram", "from_dram")}}
    with pytest.raises(ValueError, match="on_miss|allocate-on-miss"):
        L2Slice(DOM, 0, policy="L:B:f:N:L", **base)
    with pytest.raises(ValueError, match="hit_latency"):
        L2Slice(DOM, 0, hit_latency=0, **base)
    with pytest.raises(ValueError, match="miss_queue_entries"):
        L2Slice(DOM, 0, miss_queue_entries=1, **base)
    def f(a):  # two slices interleaved at 256 B: drop the slice digit
        return (a // 512) * 256 + a % 256
    l2 = L2Slice(DOM, 3, set_index_addr=f, **base)
    assert l2.cache.set_index(512) == l2.cache.set_index(256 + 128 * 0 + 256 + 256)   # slice digit ignored
    assert "rop" in l2.debug_state() and l2.stats.to_dict()["reservation_fails"] == 0


def _random_traffic(seed, n=300):
    rng = random.Random(seed)
    sched, t = [], 0
    for i in range(n):
        t += rng.choice((0, 1, 1, 2, 5))
        kind = rng.choices((READ, WRITE, ATOMIC), (7, 2, 1))[0]
        line = rng.randrange(24)
        mask = rng.randrange(1, 16)
        sched.append((t, MemRequest(kind, line * LINE, mask, src_sm=i % 4, token=i)))
    return sched


@pytest.mark.parametrize("seed", [1, 2])
def test_dense_equals_sparse(seed, engine_mode):
    if MODE["dense"]:
        pytest.skip("compares both modes itself")
    """Same stats, reply times and DRAM traffic with and without idle skipping, under
    conflict misses, dirty evictions, MSHR/merge stalls, a narrow data port and
    back-pressure on both output queues. The slice is ticked after the components
    that drain its outputs: the engine frees queue space in the same cycle, so a
    producer ticked *before* the consumer that pops would see the space one cycle
    later in dense mode than when woken in sparse mode."""
    results = []
    for dense in (False, True):
        eng, sm, l2, dram = build(_random_traffic(seed), dense=dense, size_bytes=4 * LINE, assoc=2, hit_latency=5,
                                  mshr_entries=3, mshr_max_merge=2, miss_queue_entries=2, data_port_bytes=32,
                                  dram_delay=13, dram_every=2, q_out=2, q_dram=2, pop_every=2)
        run(eng)
        assert not sm.busy() and not l2.busy() and not dram.busy()
        results.append((l2.stats.to_dict(), sm.got, dram.log))
    sparse, dense = results
    assert len(sparse[1]) == 300
    s = sparse[0]
    assert s["res_fail_mshr"] and s["res_fail_queue"] and s["stall_reply_cycles"] and s["writebacks"]
    assert sparse == dense
