"""Crossbar tests: exact latencies and gaps from the constructor's parameters with
mock sources and sinks, saturation throughput under uniform random traffic
(GPUDuet §2.2 / Karol et al.: ~60 % of peak), and dense == sparse.

Space freed by a pop is usable only from the next time step (`TimedQueue.held_units`),
so a producer sees the same room whether it ticks before or after its consumer:
results must not depend on the order components are added to the engine, and the
back-pressure and dense == sparse tests run in both orders."""

from __future__ import annotations

import itertools
import random

import pytest

from tlpsim.timing.engine import ClockDomain, Component, Engine
from tlpsim.timing.icnt import Crossbar, FlitQueue, packet_flits
from tlpsim.timing.mem_types import READ, WRITE, MemRequest
from tlpsim.timing.queues import TimedQueue

ICNT = ClockDomain("icnt", 1000)  # 1 ps period: cycle c starts at c * 1000 fs


def req(kind: str, dst: int, src: int = 0, token=None) -> MemRequest:
    return MemRequest(kind, 0, 0xF, src, partition=dst, token=token)


class Source(Component):
    """Pushes scheduled packets into input queues: `plan[i]` is a list of
    (cycle, packet); a packet waits in order while its queue is full."""

    def __init__(self, queues, plan) -> None:
        super().__init__(ICNT)
        self.queues = queues
        self.plan = {i: list(p) for i, p in plan.items()}
        self.pushed: dict = {}
        for q in queues:
            q.producer = self

    def tick(self, cycle: int) -> bool:
        now = ICNT.time_of(cycle)
        for i, todo in self.plan.items():
            q = self.queues[i]
            while todo and todo[0][0] <= cycle and q.can_push():
                pkt = todo.pop(0)[1]
                q.push(pkt, now)
                self.pushed[id(pkt)] = cycle
            if todo and todo[0][0] > cycle:
                self.wake_at(todo[0][0])
        return False

    def busy(self) -> bool:
        return any(self.plan.values())


class Saturator(Component):
    """Keeps every input queue full of single-flit reads to uniformly random outputs."""

    def __init__(self, queues, n_outputs: int, seed: int) -> None:
        super().__init__(ICNT)
        self.queues = queues
        self.n_outputs = n_outputs
        self.rng = random.Random(seed)
        for q in queues:
            q.producer = self

    def tick(self, cycle: int) -> bool:
        now = ICNT.time_of(cycle)
        for i, q in enumerate(self.queues):
            while q.can_push():
                q.push(req(READ, self.rng.randrange(self.n_outputs), i), now)
        return True


class Sink(Component):
    """Drains output queues: at most one packet per queue every `interval` cycles,
    none before cycle `start`. Records (cycle, output, packet)."""

    def __init__(self, queues, interval: int = 1, start: int = 0) -> None:
        super().__init__(ICNT)
        self.queues = queues
        self.interval = interval
        self.start = start
        self.next_ok = [start] * len(queues)
        self.got: list[tuple[int, int, MemRequest]] = []
        for q in queues:
            q.consumer = self

    def tick(self, cycle: int) -> bool:
        now = ICNT.time_of(cycle)
        for o, q in enumerate(self.queues):
            if q.ready(now):
                if cycle >= self.next_ok[o]:
                    self.got.append((cycle, o, q.pop()))
                    self.next_ok[o] = cycle + self.interval
                if len(q):
                    self.wake_at(self.next_ok[o])
        return False

    def busy(self) -> bool:
        return any(len(q) for q in self.queues)

    def when(self, pkt) -> int:
        return next(c for c, _, p in self.got if p is pkt)


def plain(name: str, n: int, cap: int) -> list[TimedQueue]:
    return [TimedQueue(f"{name}{k}", cap) for k in range(n)]


CONSUMERS_FIRST, PRODUCERS_FIRST = "consumers_first", "producers_first"
ORDERS = (CONSUMERS_FIRST, PRODUCERS_FIRST)


def build(n_in, n_out, plan, latency=2, flit_bytes=40, in_cap=4, out_cap=4, interval=1, start=0,
          arbitration="rr", dense=False, outputs=None, order=CONSUMERS_FIRST, speedup=1.0):
    inputs = plain("in", n_in, in_cap)
    outputs = outputs if outputs is not None else plain("out", n_out, out_cap)
    xbar = Crossbar(ICNT, "xbar", n_in, n_out, flit_bytes=flit_bytes, latency=latency,
                    inputs=inputs, outputs=outputs, arbitration=arbitration, internal_speedup=speedup)
    sink = Sink(outputs, interval, start)
    src = Source(inputs, plan)
    eng = Engine(dense=dense)
    comps = (sink, xbar, src) if order == CONSUMERS_FIRST else (src, xbar, sink)
    for comp in comps:
        eng.add(comp)
    return eng, xbar, src, sink


# ---------------------------------------------------------------- exact timing

@pytest.mark.parametrize("latency", [0, 1, 3])
@pytest.mark.parametrize("kind,flit_bytes,flits", [(READ, 40, 1), (WRITE, 40, 4), (WRITE, 32, 5)])
def test_lone_packet_latency_is_flits_plus_latency(latency, kind, flit_bytes, flits):
    pkt = req(kind, 2)
    assert packet_flits(pkt, flit_bytes) == flits
    eng, xbar, src, sink = build(3, 4, {1: [(5, pkt)]}, latency=latency, flit_bytes=flit_bytes)
    eng.run()
    arrival = src.pushed[id(pkt)] + 1          # visible at the crossbar one cycle after the push
    assert sink.got == [(arrival + flits + latency, 2, pkt)]
    st = xbar.stats
    assert (st.packets, st.delivered, st.flits, st.bytes) == (1, 1, flits, pkt.packet_bytes())
    assert st.avg_latency == flits + latency == st.latency_max
    assert list(st.input_busy) == [0, flits, 0] and list(st.output_busy) == [0, 0, flits, 0]
    assert st.contention_stalls == st.backpressure_stalls == st.conflicts == 0


@pytest.mark.parametrize("dense", [False, True])
def test_speedup_lone_packet_is_still_link_bound(dense):
    """Twice the switch rate does not make a lone packet faster: its flits reach the
    router one a cycle and leave on the output link one a cycle."""
    pkt = req(WRITE, 2)
    eng, xbar, src, sink = build(3, 4, {1: [(5, pkt)]}, latency=3, speedup=2.0, dense=dense)
    eng.run()
    assert sink.got == [(src.pushed[id(pkt)] + 1 + 4 + 3, 2, pkt)]


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("speedup,other_at", [(1.0, 13), (2.0, 11)])
def test_speedup_frees_a_blocked_input_sooner(speedup, other_at, dense):
    """Inputs 0 and 1 each send a 4-flit packet to output 0 (pushed at 0, at the router
    from 1); input 1's second packet goes to output 1. Input 0 wins output 0 and holds it
    until its last flit is in, at 5. Input 1's first packet then crosses from 5: until 9
    at the link rate, until 7 at twice it (its flits arrived while it waited). The packet
    behind it is granted at 9 or 7 and delivered once output 1's link has carried its 4
    flits: at 13 or 11 (+ latency). Output 0's packets are delivered as its link carries
    them, at 5 and 9, either way."""
    big, big2, other = req(WRITE, 0, 0), req(WRITE, 0, 1), req(WRITE, 1, 1)
    lat = 2
    eng, xbar, _src, sink = build(2, 2, {0: [(0, big)], 1: [(0, big2), (0, other)]}, latency=lat,
                                  speedup=speedup, dense=dense)
    eng.run()
    assert sink.when(big) == 5 + lat
    assert sink.when(big2) == 9 + lat
    assert sink.when(other) == other_at + lat


def test_speedup_below_one_is_refused():
    with pytest.raises(ValueError, match="internal_speedup"):
        build(1, 1, {}, speedup=0.5)


def test_wormhole_holds_output_until_tail_and_other_outputs_proceed():
    big, small, other = req(WRITE, 0, 0), req(READ, 0, 1), req(READ, 1, 2)
    lat = 2
    f = packet_flits(big, 40)
    assert f == 4
    eng, xbar, _src, sink = build(3, 2, {0: [(0, big)], 1: [(1, small)], 2: [(1, other)]}, latency=lat)
    eng.run()
    assert sink.when(big) == 1 + f + lat                    # granted at 1, flits 1..4
    assert sink.when(small) == (1 + f) + 1 + lat            # output 0 free at 1 + f
    assert sink.when(other) == 2 + 1 + lat                  # non-blocking: output 1 is free
    st = xbar.stats
    assert st.contention_stalls == (1 + f) - 2              # small waited at cycles 2, 3, 4
    assert st.conflicts == 0
    assert list(st.output_busy) == [f + 1, 1]
    assert st.latency_sum == (f + lat) + (f - 1 + 1 + lat) + (1 + lat)


def test_same_cycle_contention_is_a_conflict():
    a, b = req(WRITE, 0, 0), req(WRITE, 0, 1)
    eng, xbar, _src, sink = build(2, 1, {0: [(0, a)], 1: [(0, b)]}, latency=1)
    eng.run()
    assert sink.when(a) == 1 + 4 + 1                        # rr pointer starts at input 0
    assert sink.when(b) == 1 + 4 + 4 + 1
    assert xbar.stats.conflicts == 1
    assert xbar.stats.contention_stalls == 4                # b waited cycles 1..4


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dense", [False, True])
def test_output_backpressure_blocks_transfer_until_pop(dense, order):
    pkts = [req(READ, 0, 0, token=k) for k in range(3)]
    lat, start = 2, 20
    outputs = plain("out", 1, 1)                             # room for one packet
    eng, xbar, _src, sink = build(1, 1, {0: [(0, p) for p in pkts]}, latency=lat, start=start,
                                 outputs=outputs, dense=dense, order=order)
    eng.run()
    # A is granted at 1 and sits in the output until the sink's first pop at `start`.
    # The credit that pop frees is usable from the next cycle only, so B is granted
    # at start + 1; its single flit crosses in that cycle and it is pushed `lat`
    # cycles later (start + 1 + lat), visible one cycle after that: start + lat + 2.
    # B's pop frees the credit for C the same way: start + 2 * (lat + 2).
    assert [c for c, _, _ in sink.got] == [start, start + lat + 2, start + 2 * (lat + 2)]
    assert [p.token for _, _, p in sink.got] == [0, 1, 2]
    # B waited at cycles 2..start (start - 1 cycles, the cycle of A's pop included);
    # C, at the head from B's release at start + 2, waited until the cycle of B's
    # pop, start + lat + 2 (lat + 1 cycles): (start - 1) + (lat + 1) = start + lat
    assert xbar.stats.backpressure_stalls == (start - 1) + (lat + 1)
    assert xbar.stats.contention_stalls == 0


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dense", [False, True])
def test_flit_queue_output_backpressure_counts_flits(dense, order):
    out = FlitQueue("out0", 8, 40)                           # two 4-flit writes fit, not three
    w = [req(WRITE, 0, 0, token=k) for k in range(3)]
    eng, xbar, _src, sink = build(1, 1, {0: [(0, p) for p in w]}, latency=0, start=30, outputs=[out],
                                 dense=dense, order=order)
    eng.run()
    got = [(c, p.token) for c, _, p in sink.got]
    # writes granted at 1 and 5 fill the 8 flits. The pop at 30 frees 4 flits from
    # cycle 31 on; at 31 the sink pops the second write too, but those 4 flits are
    # still held in cycle 31, so the third write fits exactly (4 + 4 = 8): granted at
    # 31, tail crossed at 34, pushed at 34 + latency 0, visible at 31 + 4 flits = 35
    assert got == [(30, 0), (31, 1), (30 + 1 + 4, 2)]
    # the third write is at the head from the 2nd write's tail (5 + 4) on and waits
    # until its grant at 30 + 1
    assert xbar.stats.backpressure_stalls == (30 + 1) - (5 + 4)


@pytest.mark.parametrize("arbitration", ["rr", "islip"])
def test_round_robin_alternates_between_contending_inputs(arbitration):
    n = 40
    plan = {0: [(0, req(READ, 0, 0)) for _ in range(n)], 1: [(0, req(READ, 0, 1)) for _ in range(n)]}
    eng, _xbar, _src, sink = build(2, 1, plan, latency=1, in_cap=2, arbitration=arbitration)
    eng.run()
    srcs = [p.src_sm for _, _, p in sink.got]
    assert srcs == [0, 1] * n
    cycles = [c for c, _, _ in sink.got]
    assert cycles == list(range(cycles[0], cycles[0] + 2 * n))   # one flit per cycle, no gaps


def test_round_robin_is_fair_among_three_of_four_inputs_with_wormhole_packets():
    n = 12
    plan = {i: [(0, req(WRITE, 0, i)) for _ in range(n)] for i in (0, 2, 3)}
    eng, xbar, _src, sink = build(4, 1, plan, latency=0, in_cap=2)
    eng.run()
    assert [p.src_sm for _, _, p in sink.got] == [0, 2, 3] * n
    cycles = [c for c, _, _ in sink.got]
    assert all(b - a == 4 for a, b in itertools.pairwise(cycles))   # 4-flit packets back to back
    assert list(xbar.stats.output_busy) == [3 * n * 4]


# ---------------------------------------------------------------- saturation throughput

@pytest.mark.parametrize("n", [16, 32])
@pytest.mark.parametrize("arbitration", ["rr", "random"])
def test_uniform_random_saturation_throughput_is_about_sixty_percent(n, arbitration):
    cycles = 3000
    inputs, outputs = plain("in", n, 4), plain("out", n, 8)
    xbar = Crossbar(ICNT, "xbar", n, n, flit_bytes=40, latency=1, inputs=inputs, outputs=outputs,
                    arbitration=arbitration, seed=7)
    sink = Sink(outputs)
    gen = Saturator(inputs, n, seed=12345)
    eng = Engine()
    for comp in (sink, xbar, gen):
        eng.add(comp)
    eng.run(max_time_fs=ICNT.time_of(cycles))
    per_output = xbar.stats.utilisation(cycles)
    assert 0.55 <= per_output <= 0.65, per_output
    assert xbar.stats.backpressure_stalls == 0
    assert xbar.stats.contention_stalls > 0
    rep = xbar.report(cycles)
    assert rep["sustainable_utilisation"] == pytest.approx(per_output / 0.6)


# ---------------------------------------------------------------- dense == sparse

def random_plan(seed, n_in, n_out, n_pkts, horizon):
    rng = random.Random(seed)
    plan = {}
    for i in range(n_in):
        times = sorted(rng.randrange(horizon) for _ in range(n_pkts))
        plan[i] = [(t, MemRequest(rng.choice([READ, READ, WRITE]), 0, rng.choice([1, 3, 0xF]), i,
                                  partition=rng.randrange(n_out), token=(i, k)))
                   for k, t in enumerate(times)]
    return plan


def run_plan(dense, arbitration, horizon, interval, order=CONSUMERS_FIRST):
    plan = random_plan(3, 8, 4, 40, horizon)
    outputs = plain("out", 2, 2) + [FlitQueue("fo2", 6, 32), FlitQueue("fo3", 5, 32)]
    eng, xbar, _src, sink = build(8, 4, plan, latency=3, flit_bytes=32, in_cap=3, interval=interval,
                                 arbitration=arbitration, dense=dense, outputs=outputs, order=order)
    eng.run()
    got = [(c, o, p.token) for c, o, p in sink.got]
    return xbar.stats.to_dict(), got, xbar.ticks


@pytest.mark.parametrize("arbitration", ["rr", "random"])
def test_dense_and_sparse_give_identical_results_under_heavy_load(arbitration):
    """Saturated outputs, slow sinks (back-pressure on plain and flit queues), mixed
    1- and 5-flit packets — in either component order, with the same results."""
    runs = [run_plan(d, arbitration, 300, 3, order) for order in ORDERS for d in (True, False)]
    (d_stats, d_got, _) = runs[0]
    assert len(d_got) == 8 * 40
    for stats, got, _ in runs[1:]:
        assert got == d_got
        assert stats == d_stats
    assert d_stats["backpressure_stalls"] > 0 and d_stats["contention_stalls"] > 0 and d_stats["conflicts"] > 0


def test_dense_and_sparse_give_identical_results_under_light_load_and_sparse_sleeps():
    (d_stats, d_got, d_ticks), (s_stats, s_got, s_ticks) = (run_plan(d, "rr", 20000, 1) for d in (True, False))
    assert len(d_got) == 8 * 40
    assert d_got == s_got
    assert d_stats == s_stats
    assert s_ticks < d_ticks / 10                          # asleep between packets


# ---------------------------------------------------------------- odds and ends

def test_packets_queued_before_the_crossbar_is_built_are_delivered():
    inputs, outputs = plain("in", 1, 4), plain("out", 1, 4)
    pkts = [req(READ, 0, 0, token=k) for k in range(3)]
    for p in pkts:
        inputs[0].push(p, 0)
    xbar = Crossbar(ICNT, "xbar", 1, 1, latency=0, inputs=inputs, outputs=outputs)
    sink = Sink(outputs)
    eng = Engine()
    eng.add(sink)
    eng.add(xbar)
    eng.run()
    assert [(c, p.token) for c, _, p in sink.got] == [(1, 0), (2, 1), (3, 2)]


def test_default_queues_route_requests_and_replies():
    xbar = Crossbar(ICNT, "x", 2, 3, input_buffer_flits=64, output_buffer_flits=32)
    assert all(isinstance(q, FlitQueue) and q.capacity == 64 for q in xbar.inputs)
    assert all(q.capacity == 32 and q.producer is xbar for q in xbar.outputs)
    q = xbar.inputs[0]
    w = req(WRITE, 1)
    assert q.can_push(w) and q.max_packet_flits == 4
    for _ in range(16):
        q.push(w, 0)
    assert not q.can_push() and q.used_flits == 64
    assert xbar.route(req(READ, 2, src=1)) == 2
    reply = req(READ, 2, src=1)
    reply.is_reply = True
    assert xbar.route(reply) == 1


def test_bad_parameters_and_routes_are_clear_errors():
    with pytest.raises(ValueError, match="arbitration"):
        Crossbar(ICNT, "x", 2, 2, arbitration="fifo")
    with pytest.raises(ValueError, match="largest packet"):
        FlitQueue("q", 3, 40)
    eng, _xbar, _src, _sink = build(1, 2, {0: [(0, req(READ, 5))]})
    with pytest.raises(ValueError, match="outside 0..1"):
        eng.run()
