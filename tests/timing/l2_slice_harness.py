"""One L2 slice between a mock SM and test_l2's mock DRAM channel, for tests of what the
slice sends back (sector replies, write acks) and when."""

from __future__ import annotations

from collections import deque

from tlpsim.timing.engine import Component, Engine
from tlpsim.timing.l2 import L2Slice
from tlpsim.timing.queues import TimedQueue

from test_l2 import DOM, MockDRAM  # the slice tests' clock and DRAM mock


class MockSm(Component):
    """Sends its requests at cycle 0 and records (cycle, token, sector mask, parts) of
    every reply it sees, one a cycle; every reply must be of `kind`."""

    name = "sm"

    def __init__(self, out, inp, reqs, kind):
        super().__init__(DOM)
        self.out, self.inp, self.todo, self.kind, self.got = out, inp, deque(reqs), kind, []

    def busy(self):
        return bool(self.todo or len(self.inp))

    def tick(self, cycle):
        now = DOM.time_of(cycle)
        progress = False
        if self.inp.ready(now):
            r = self.inp.pop()
            assert r.is_reply and r.kind == self.kind
            self.got.append((cycle, r.token, r.sector_mask, r.parts))
            progress = True
        while self.todo and self.out.can_push():
            self.out.push(self.todo.popleft(), now)
            progress = True
        return progress


def run_slice(reqs, kind, dense=False, hot=(), dram_delay=20, **kw):
    """A 2-way, 8-line slice (ROP latency 10) serving `reqs`; `hot` lines start valid.
    Returns (mock SM, slice) after the run."""
    fi, ti = TimedQueue("icnt->l2", 64), TimedQueue("l2->icnt", 8)
    td, fd = TimedQueue("l2->dram", 8), TimedQueue("dram->l2", 8)
    sm = MockSm(fi, ti, reqs, kind)
    fi.producer, ti.consumer = sm, sm
    l2 = L2Slice(DOM, 0, size_bytes=8 * 128, assoc=2, from_icnt=fi, to_icnt=ti, to_dram=td, from_dram=fd,
                 hit_latency=10, data_port_bytes=32, **kw)
    for addr in hot:
        l2.host_fill(addr)
    dram = MockDRAM(td, fd, dram_delay)
    td.consumer, fd.producer = dram, dram
    eng = Engine(dense=dense)
    for c in (sm, l2, dram):
        eng.add(c)
    eng.run(max_time_fs=DOM.time_of(1000))
    return sm, l2
