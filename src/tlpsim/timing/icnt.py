"""The interconnect: an input-queued crossbar, one instance per direction
(SM→L2 requests, L2→SM replies), in the interconnect clock domain.

Model (GPUDuet §2.2 "queueing on inputs", Karol et al. 1987; the 2 − √2 ≈ 58.6 %
saturation throughput under uniform random traffic follows from it):

* Every source owns one FIFO input buffer (a `TimedQueue` it fills); only its head
  packet competes (head-of-line blocking). A packet of `packet_bytes()` bytes is
  `ceil(bytes / flit_bytes)` flits.
* Each cycle every free output grants one input whose head packet routes to it:
  round-robin per output (the pointer moves one past the granted input), iSLIP with
  one iteration (McKeown 1999; GPGPU-Sim's Fermi `sw_allocator = islip`), or a
  random pick (the arbiter GPUDuet §3.1 describes).
* A granted input sends one flit per cycle; the output is held until the tail flit
  has crossed (wormhole), so input and output are free again `flits` cycles after
  the grant.
* With an internal speed-up s > 1 (booksim's `internal_speedup`) the switch moves s
  flits a cycle: a granted packet frees its input and output after ceil(flits / s)
  cycles once all its flits are at the router, while each link still carries one flit
  a cycle (an input's packets arrive one flit a cycle in order; an output's packets
  leave one flit a cycle). Head-of-line blocking then costs multi-flit packets much
  less: under uniform random traffic 4-flit packets saturate near 0.97 flits/cycle/port
  where booksim's GTX480 network reaches 0.90, single flits at 0.59 in both.
* Output back-pressure is credit based: a transfer starts only if the packet fits
  in the output buffer together with the packets already in flight to it. The
  packet is written into the output queue `latency` cycles after its tail flit
  crossed. A lone packet at the head of its input at cycle c is therefore pushed at
  c + flits − 1 + latency and — with the usual queue delay of 1 — seen by the
  destination at c + flits + latency; that is its recorded latency.

Everything is event driven: arrivals are reported by the input ports, a crossbar
going to sleep sets a timer for its next release or delivery, and a full output wakes
the crossbar when its destination pops. Space freed by a pop is usable only from the next time step (see
`TimedQueue.held_units`), so the crossbar also looks again next cycle when room is
held by this step's pops or by credits in flight, and sets a timer for the cycle
the random arbiter next picks a packet that fits. An input's producer is woken
by the queue itself (by a pop from a queue too full for the largest packet, or
after a `can_push` refused only for this step's pops). Per-cycle work is
proportional to the waiting packets, never a scan of all ports. Stalls of
skipped cycles are back-filled in `skipped()`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, cast

from librt.vecs import vec
from mypy_extensions import i64

from tlpsim.timing.buckets import CycleBuckets
from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.iheap import heap_pop, heap_push, new_heap
from tlpsim.timing.flits import (  # noqa: F401 - re-exported: the crossbar's queues live in flits.py
    LINE_BYTES,
    SECTOR_BYTES,
    FlitQueue,
    FlitSizes,
    _InputPort,
    flit_sizes,
    packet_flits,
)
from tlpsim.timing.mem_types import MemRequest
from tlpsim.timing.queues import TimedQueue

ARBITERS = ("rr", "round_robin", "islip", "random")
# GPUDuet §4.1: interconnect utilisation is reported against the sustainable
# throughput of an input-queued crossbar, "60% of the peak bandwidth".
SUSTAINABLE_FRACTION = 0.6


def default_route(packet: Any) -> int:
    """Requests go to their L2 slice, replies back to their SM."""
    return packet.src_sm if packet.is_reply else packet.partition


def route_to_slice(packet: MemRequest) -> int:
    """The SM-to-L2 network's route: the request's L2 slice."""
    return packet.partition


def route_to_sm(packet: MemRequest) -> int:
    """The L2-to-SM network's route: the SM that sent the request."""
    return packet.src_sm


@dataclass
class CrossbarStats:
    """Counters of one crossbar (one direction). Busy cycles are flit-cycles: an
    input or output is busy for every flit it sends or receives."""

    n_inputs: int
    n_outputs: int
    packets: int = 0               # transfers granted
    flits: int = 0                 # flits through the switch (energy: buffer read + crossbar + buffer write)
    bytes: int = 0
    delivered: int = 0             # packets written into output queues
    latency_sum: int = 0           # input arrival -> visible at the output, over delivered packets
    latency_max: int = 0
    conflicts: int = 0             # requests that lost an arbitration to another input
    contention_stalls: int = 0     # input-cycles a ready head packet waited for an output another packet held
    backpressure_stalls: int = 0   # input-cycles a ready head packet waited for output-buffer room
    # per port (unboxed: added to per packet; to_dict reports them as lists)
    input_busy: vec[i64] = field(default_factory=lambda: vec[i64]())
    output_busy: vec[i64] = field(default_factory=lambda: vec[i64]())

    def __post_init__(self) -> None:
        if not len(self.input_busy):
            self.input_busy = vec[i64]([0] * self.n_inputs)
        if not len(self.output_busy):
            self.output_busy = vec[i64]([0] * self.n_outputs)

    @property
    def avg_latency(self) -> float:
        return self.latency_sum / self.delivered if self.delivered else 0.0

    def utilisation(self, cycles: int) -> float:
        """Flits transferred over the peak of one flit per output per cycle."""
        return self.flits / (self.n_outputs * cycles) if cycles > 0 else 0.0

    def to_dict(self, cycles: int | None = None, sustainable_fraction: float = SUSTAINABLE_FRACTION) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["input_busy"] = list(self.input_busy)
        d["output_busy"] = list(self.output_busy)
        d["avg_latency"] = self.avg_latency
        if cycles is not None:
            u = self.utilisation(cycles)
            d["cycles"] = cycles
            d["utilisation"] = u
            d["sustainable_utilisation"] = u / sustainable_fraction
        return d


def _bits(mask: int) -> list[int]:
    """The set bits of `mask`, ascending."""
    out = []
    while mask:
        low = mask & -mask
        mask ^= low
        out.append(low.bit_length() - 1)
    return out


def _mix(seed: int, cycle: int, output: int) -> int:
    """A stateless hash (splitmix64 finaliser) of (seed, cycle, output): random
    arbitration that does not depend on how many ticks ran, so dense and sparse
    ticking make the same choices."""
    z = (seed * 0x9E3779B97F4A7C15 + cycle * 0xBF58476D1CE4E5B9 + output * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


class _Delivery:
    """A granted packet on its way to output `o` (`units` flits, arrived at the input in
    cycle `arrival`): one native object, not a tuple of boxed integers."""

    __slots__ = ("o", "units", "pkt", "arrival")

    def __init__(self, o: int, units: int, pkt: Any, arrival: int) -> None:
        self.o = o
        self.units = units
        self.pkt = pkt
        self.arrival = arrival


class Crossbar(Component):
    """An N×M input-queued crossbar switch with FIFO inputs and wormhole outputs.

    `inputs[i]` is filled by source i, `outputs[o]` drained by destination o. Given
    queues are adopted as they are (their capacity, in packets or — for a
    `FlitQueue` — in flits, is the buffer size); omitted ones are created as
    `FlitQueue`s of `input_buffer_flits` / `output_buffer_flits`, whose `producer`
    (inputs) and `consumer` (outputs) the caller then sets. The crossbar installs
    itself as consumer of every input and producer of every output.
    """

    def __init__(self, domain: ClockDomain, name: str, n_inputs: int, n_outputs: int, flit_bytes: int = 40,
                 input_buffer_flits: int = 64, output_buffer_flits: int = 32, latency: int = 2,
                 route: Callable[[Any], int] | None = None, inputs: Sequence[TimedQueue] | None = None,
                 outputs: Sequence[TimedQueue] | None = None, arbitration: str = "rr", seed: int = 0,
                 sustainable_fraction: float = SUSTAINABLE_FRACTION, internal_speedup: float = 1.0) -> None:
        super().__init__(domain)
        if n_inputs < 1 or n_outputs < 1:
            raise ValueError(f"crossbar {name}: needs at least one input and one output")
        if flit_bytes < 1:
            raise ValueError(f"crossbar {name}: flit_bytes must be >= 1, got {flit_bytes}")
        if latency < 0:
            raise ValueError(f"crossbar {name}: latency must be >= 0, got {latency}")
        if internal_speedup < 1.0:
            raise ValueError(f"crossbar {name}: internal_speedup must be >= 1, got {internal_speedup}")
        if arbitration not in ARBITERS:
            raise ValueError(f"crossbar {name}: unknown arbitration {arbitration!r}; choose one of {ARBITERS}")
        self.name = name
        self.n_inputs = n_inputs
        self.n_outputs = n_outputs
        self.flit_bytes = flit_bytes
        self.latency = latency
        self.route = route or default_route
        # the two networks' own routes are read in place (a call through a Callable
        # attribute is a generic call per packet in the compiled core)
        self._route_kind = 1 if self.route is route_to_slice else 2 if self.route is route_to_sm else 0
        self.arbitration = arbitration
        self._random = arbitration == "random"
        self.seed = seed
        self.sustainable_fraction = sustainable_fraction
        if inputs is None:
            inputs = [FlitQueue(f"{name}.in{i}", input_buffer_flits, flit_bytes) for i in range(n_inputs)]
        if outputs is None:
            outputs = [FlitQueue(f"{name}.out{o}", output_buffer_flits, flit_bytes) for o in range(n_outputs)]
        if len(inputs) != n_inputs or len(outputs) != n_outputs:
            raise ValueError(f"crossbar {name}: got {len(inputs)} input / {len(outputs)} output queues for "
                             f"{n_inputs}x{n_outputs} ports")
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.stats = CrossbarStats(n_inputs, n_outputs)
        self._period = domain.period_fs
        self._last_timer = -1                             # the future step of the latest timer set (_timer)
        self._sizes = flit_sizes(flit_bytes)

        # the heaps' entries are plain ints that sort as the tuples they stand for (cheaper
        # to compare than tuples): an arrival (ready time fs, input) is t << in_bits | i,
        # a transfer end (cycle, input, output) is (c << in_bits | i) << out_bits | o
        self._in_bits = n_inputs.bit_length()
        self._out_bits = n_outputs.bit_length()
        self._arrivals = new_heap()  # (the heaps are unboxed: iheap.py)
        self._unscheduled = False                         # arrivals noted before joining an engine
        self._releases = new_heap()
        # deliveries: per cycle its entries (output, units, packet, arrival cycle) in the
        # order granted
        self._deliveries = CycleBuckets()
        # per-port state in unboxed vectors (a list's ints are objects: docs/compiled-core.md)
        self._busy_in = vec[bool]([False] * n_inputs)
        self._requesting = vec[bool]([False] * n_inputs)
        # per output, the inputs whose ready head packet routes to it (bit i: input i) and
        # how many; and the outputs with any such request (bit o: output o)
        self._req_in = [0] * n_outputs
        self._req_n = vec[i64]([0] * n_outputs)
        self._req_outs = 0
        self._held = vec[bool]([False] * n_outputs)
        self._reserved = vec[i64]([0] * n_outputs)        # credits in flight (flits or packets)
        self._flit_out = vec[bool]([isinstance(q, FlitQueue) for q in self.outputs])
        self._ptr = vec[i64]([0] * n_outputs)
        # internal speed-up s > 1 (booksim's internal_speedup): the switch moves s flits a
        # cycle, so a packet whose flits have all reached the router frees its input and
        # output after ceil(flits / s) cycles, while each port's link still carries one
        # flit a cycle: an input's flits reach the router one a cycle in order
        # (`_in_tail`: the cycle its last packet's tail is in) and an output's packets
        # leave one flit a cycle (`_link_free`)
        self._speedup = internal_speedup
        self._in_tail = vec[i64]([0] * n_inputs)
        self._link_free = vec[i64]([0] * n_outputs)
        self._wait_contention = 0                         # waiting inputs per cycle, by cause (skipped())
        self._wait_backpressure = 0
        # packets queued before the crossbar adopted an input were never reported by
        # its port: they are announced one at a time as they reach the head
        self._unannounced = vec[i64]([len(q) for q in self.inputs])

        for i, q in enumerate(self.inputs):
            q.consumer = _InputPort(self, i)
            if len(q):
                self._note_arrival(q.head_ready_time(), i)
        for q in self.outputs:
            q.producer = self

    # ---------------------------------------------------------------- events

    def _note_arrival(self, t_fs: int, i: int) -> None:
        self._arrivals = heap_push(self._arrivals, t_fs << self._in_bits | i)
        if self.engine is not None:
            self._timer(t_fs)
        else:
            self._unscheduled = True

    def _timer(self, t_fs: int) -> None:
        """Wake the crossbar at time t (it must have joined an engine). Many events
        fall on the same step in a row (all inputs receiving in one cycle, a sleep's
        timer at an arrival's step): a timer just set for that future step is not set
        again (the engine pops timers only when their step comes, so it is still
        pending; any other repeat costs the engine one heap entry)."""
        eng = self.engine
        assert eng is not None
        if t_fs > eng.now:
            if t_fs == self._last_timer:
                return
            self._last_timer = t_fs
        eng.wake_at_time(self, t_fs)

    def _consider(self, i: int, now: int) -> None:
        """Input i is idle: make its head packet a request if it is ready."""
        q = self.inputs[i]
        if q.ready(now):
            pkt = q.peek()
            kind = self._route_kind
            o = (cast(MemRequest, pkt).partition if kind == 1 else cast(MemRequest, pkt).src_sm if kind == 2
                 else self.route(pkt))
            if not 0 <= o < self.n_outputs:
                raise ValueError(f"crossbar {self.name}: route() sent a packet from input {i} to output {o}, "
                                 f"outside 0..{self.n_outputs - 1}")
            self._requesting[i] = True
            # (x[i] = x[i] op v, not x[i] op= v: docs/compiled-core.md, generic operations)
            self._req_in[o] = self._req_in[o] | 1 << i
            self._req_n[o] = self._req_n[o] + 1
            self._req_outs |= 1 << o

    def _deliver(self, cyc: int, o: int, units: int, pkt: Any, arrival: int, now: int) -> None:
        self.outputs[o].push(pkt, now)
        self._reserved[o] = self._reserved[o] - units
        st = self.stats
        lat = cyc + 1 - arrival
        st.delivered += 1
        st.latency_sum += lat
        st.latency_max = max(st.latency_max, lat)

    # ---------------------------------------------------------------- ticking

    def tick(self, cycle: int) -> bool:
        now = cycle * self._period
        if self._unscheduled and self.engine is not None:
            self._unscheduled = False
            for key in self._arrivals:
                self.engine.wake_at_time(self, int(key) >> self._in_bits)
        # (a vec is a value: each heap is re-read from self after a push or pop)
        deliveries = self._deliveries
        nxt = deliveries.next_cycle()
        while 0 <= nxt <= cycle:
            c, bucket = deliveries.take()
            for d in cast(list[_Delivery], bucket):
                self._deliver(c, d.o, d.units, d.pkt, d.arrival, now)
            deliveries.recycle(bucket)
            nxt = deliveries.next_cycle()
        in_bits, out_bits = self._in_bits, self._out_bits
        if len(self._releases):
            # every key of a transfer ending by `cycle` is below the first key of cycle + 1
            bound = (cycle + 1) << (in_bits + out_bits)
            in_mask = (1 << in_bits) - 1
            out_mask = (1 << out_bits) - 1
            while len(self._releases) and self._releases[0] < bound:
                self._releases, key64 = heap_pop(self._releases)
                key = int(key64)
                o = key & out_mask
                i = key >> out_bits & in_mask
                self._busy_in[i] = False
                self._held[o] = False
                self._consider(i, now)
        if len(self._arrivals):
            bound = (now + 1) << in_bits
            in_mask = (1 << in_bits) - 1
            while len(self._arrivals) and self._arrivals[0] < bound:
                self._arrivals, a64 = heap_pop(self._arrivals)
                i = int(a64) & in_mask
                if not self._busy_in[i] and not self._requesting[i]:
                    self._consider(i, now)
        if not self._req_outs:
            self._wait_contention = self._wait_backpressure = 0
            self._sleep(cycle)
            return False
        if self._arbitrate(cycle, now):
            return True
        self._sleep(cycle)
        return False

    def _sleep(self, cycle: int) -> None:
        """The crossbar sleeps after `cycle`: wake it at its next transfer end or delivery
        (arrivals set their own timers). It ticks at each of them in turn, as it did when
        every grant set a timer for both: one timer per sleep instead of two per packet."""
        nxt = -1
        if len(self._releases):
            nxt = int(self._releases[0]) >> (self._in_bits + self._out_bits)
        d = self._deliveries.next_cycle()
        if d >= 0 and (nxt < 0 or d < nxt):
            nxt = d
        if nxt > cycle:
            self._timer(nxt * self._period)

    def _pick(self, cycle: int, o: int, reqs: int) -> int:
        """The granted input among the requesters `reqs` (bit mask) of output o."""
        if self._random:
            cands = _bits(reqs)
            return cands[_mix(self.seed, cycle, o) % len(cands)]
        # round-robin: the first requester at or after the output's pointer. With
        # FIFO inputs each input requests exactly one output, so iSLIP's accept
        # phase always accepts and one-iteration iSLIP makes this same choice.
        p = int(self._ptr[o])
        after = reqs >> p << p
        x = after if after else reqs
        return (x & -x).bit_length() - 1

    def _wake_for_random_fit(self, cycle: int, o: int, reqs: int) -> None:
        """Output o refused the randomly picked packet for lack of room, with no
        credit in flight and no room held by this step's pops, so until a pop (which
        wakes the crossbar) the room stays as it is. Another requester's packet may
        fit, though, and dense ticking grants it in the first cycle the stateless
        random pick chooses it: set a timer for that cycle (looking ahead a bounded
        number of cycles, then simply re-arbitrating)."""
        out = self.outputs[o]
        free = out.capacity - out.used_units()
        fits = set()
        cands = _bits(reqs)
        for i in cands:
            pkt = self.inputs[i].peek()
            if (cast(FlitQueue, out).flits_of(pkt) if self._flit_out[o] else 1) <= free:
                fits.add(i)
        if not fits:
            return
        horizon = 8 * len(cands)
        for c in range(cycle + 1, cycle + horizon):
            if cands[_mix(self.seed, c, o) % len(cands)] in fits:
                self.wake_at(c)
                return
        self.wake_at(cycle + horizon)

    def _arbitrate(self, cycle: int, now: int) -> bool:
        """Grant free outputs; count waiting inputs. Returns True when the crossbar
        must look again next cycle (blocked on credits that only a pop can return
        while a packet is still in flight to that output)."""
        st = self.stats
        sizes = self._sizes
        req_in, req_n = self._req_in, self._req_n
        held_out, reserved, flit_out = self._held, self._reserved, self._flit_out
        inputs, outputs = self.inputs, self.outputs
        contention = backpressure = 0
        poll = False
        m = self._req_outs
        while m:  # outputs in index order
            low = m & -m
            m ^= low
            o = low.bit_length() - 1
            reqs = req_in[o]
            n_reqs = req_n[o]
            if held_out[o]:
                contention += n_reqs
                continue
            i = (reqs.bit_length() - 1) if n_reqs == 1 else self._pick(cycle, o, reqs)
            q_in = inputs[i]
            pkt = q_in.peek()
            out = outputs[o]
            f = sizes.of(pkt)
            held = out.held_units()
            if flit_out[o]:
                fq = cast(FlitQueue, out)
                units = f if fq._sizes is sizes else fq.flits_of(pkt)
                room = held + reserved[o] + units <= out.capacity
            else:
                units = 1
                room = held + reserved[o] < out.capacity
            if not room:
                backpressure += n_reqs
                # Look again next cycle unless a pop is sure to wake us: credits in
                # flight hide room a non-blocking pop would free silently, and units
                # popped this step (held_units > used_units) become usable next step
                # without any wake (e.g. a delivery refilled the queue after the pop).
                if reserved[o] or held > out.used_units():
                    poll = True
                elif self._random and n_reqs > 1:
                    # the random pick changes every cycle: wake when it next falls
                    # on a requester whose packet fits the room left
                    self._wake_for_random_fit(cycle, o, reqs)
                continue
            # grant: input i streams f flits to output o during [cycle, cycle + f)
            arrival = q_in.head_ready_time() // self._period
            q_in.pop()
            if self._unannounced[i]:
                self._unannounced[i] = self._unannounced[i] - 1
                if self._unannounced[i]:
                    self._note_arrival(q_in.head_ready_time(), i)
            req_in[o] = reqs & ~(1 << i)
            req_n[o] = n_reqs = n_reqs - 1
            if n_reqs:
                st.conflicts += n_reqs
                contention += n_reqs
            else:
                self._req_outs &= ~low
            self._requesting[i] = False
            self._busy_in[i] = True
            held_out[o] = True
            reserved[o] = reserved[o] + units
            self._ptr[o] = (i + 1) % self.n_inputs
            if self._speedup == 1.0:
                end = done = cycle + f
            else:
                # (int(): an i64 read mixed with ints in a conditional boxes both)
                tail = int(self._in_tail[i])
                tail = (arrival if arrival > tail else tail) + f
                self._in_tail[i] = tail
                end = cycle + int(math.ceil(f / self._speedup))
                if tail > end:
                    end = tail
                link = int(self._link_free[o])
                done = (link if link > cycle else cycle) + f
                self._link_free[o] = done
                if end > done:
                    done = end
            # (no timer per transfer end or delivery: a crossbar going to sleep sets one
            # for the earliest of them, `_sleep`)
            self._releases = heap_push(self._releases, (end << self._in_bits | i) << self._out_bits | o)
            due = done - 1 + self.latency
            if due <= cycle:
                self._deliver(due, o, units, pkt, arrival, now)
            else:
                self._deliveries.add(due, _Delivery(o, units, pkt, arrival))
            st.packets += 1
            st.flits += f
            st.bytes += sizes.bytes_of(pkt)
            st.input_busy[i] = st.input_busy[i] + f
            st.output_busy[o] = st.output_busy[o] + f
        st.contention_stalls += contention
        st.backpressure_stalls += backpressure
        self._wait_contention, self._wait_backpressure = contention, backpressure
        return poll

    def skipped(self, first: int, last: int) -> None:
        """While asleep the set of waiting inputs and why they wait cannot change
        (every change is an event that wakes the crossbar)."""
        n = last - first + 1
        self.stats.contention_stalls += self._wait_contention * n
        self.stats.backpressure_stalls += self._wait_backpressure * n

    def busy(self) -> bool:
        """Work pending (for the dense engine's termination test)."""
        return bool(self._req_outs or len(self._releases) or len(self._deliveries) or len(self._arrivals))

    # ---------------------------------------------------------------- reporting

    def elapsed_cycles(self) -> int:
        """Cycles of this crossbar's clock up to the engine's current time."""
        if self.engine is None:
            return self.last_cycle + 1
        return self.engine.now // self.domain.period_fs + 1

    def report(self, cycles: int | None = None) -> dict:
        """Counters plus utilisation over `cycles` (default: the elapsed cycles)."""
        return self.stats.to_dict(self.elapsed_cycles() if cycles is None else cycles, self.sustainable_fraction)

    def line_trace(self) -> str:
        """One line of state for debugging: waiting requests and held outputs."""
        reqs = " ".join(f"o{o}<{','.join(map(str, _bits(s)))}" for o, s in enumerate(self._req_in) if s)
        held = ",".join(str(o) for o, h in enumerate(self._held) if h)
        return f"{self.name}@{self.last_cycle}: req[{reqs}] held[{held}] inflight={len(self._deliveries)}"
