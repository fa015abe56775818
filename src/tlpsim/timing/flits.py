"""Flits: a packet's size on a channel of a given width; `FlitQueue`, the router
buffer whose capacity counts flits (the crossbar's input and output queues); and the
input port through which a queue reports arrivals to its crossbar."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from tlpsim.timing.engine import Component, Engine
from tlpsim.timing.mem_types import HEADER_BYTES, WRITE, MemRequest, popcount
from tlpsim.timing.queues import TimedQueue

if TYPE_CHECKING:
    from tlpsim.timing.icnt import Crossbar

LINE_BYTES: Final = 128
SECTOR_BYTES: Final = 32


class FlitSizes:
    """Flits of a packet on a channel `flit_bytes` wide, tabulated by size class:
    the crossbar and its queues ask for a packet's flits several times per hop."""

    __slots__ = ("by_sectors", "flit_bytes", "header")

    def __init__(self, flit_bytes: int) -> None:
        fb = self.flit_bytes = flit_bytes
        self.header = max(1, -(-HEADER_BYTES // fb))        # a packet without data
        self.by_sectors = [max(1, -(-(HEADER_BYTES + SECTOR_BYTES * n) // fb)) for n in range(33)]

    def of(self, pkt: Any) -> int:
        """`max(1, ceil(pkt.packet_bytes() / flit_bytes))`, with MemRequest's
        payload rule inlined (requests carry data for writes, replies for reads and
        atomics); other packet types are asked."""
        if type(pkt) is not MemRequest:
            return max(1, -(-pkt.packet_bytes() // self.flit_bytes))
        if (pkt.kind == WRITE) != bool(pkt.is_reply):
            n = popcount(pkt.sector_mask)
            return self.by_sectors[n] if n <= 32 else max(1, -(-pkt.packet_bytes() // self.flit_bytes))
        return self.header

    def bytes_of(self, pkt: Any) -> int:
        """`pkt.packet_bytes()` (MemRequest's rule inlined, as in `of`)."""
        if type(pkt) is not MemRequest:
            return pkt.packet_bytes()
        if (pkt.kind == WRITE) != bool(pkt.is_reply):
            return HEADER_BYTES + SECTOR_BYTES * popcount(pkt.sector_mask)
        return HEADER_BYTES


_SIZES: dict[int, FlitSizes] = {}


def flit_sizes(flit_bytes: int) -> FlitSizes:
    fs = _SIZES.get(flit_bytes)
    if fs is None:
        fs = _SIZES[flit_bytes] = FlitSizes(flit_bytes)
    return fs


def packet_flits(packet: Any, flit_bytes: int) -> int:
    """Flits a packet occupies on a channel `flit_bytes` wide (at least one)."""
    return flit_sizes(flit_bytes).of(packet)


class FlitQueue(TimedQueue):
    """A TimedQueue whose capacity counts flits instead of packets (a router buffer
    of `capacity` flits). `can_push()` without an item asks for room for the
    largest packet (header + a full 128-byte line); `can_push(item)` for that one.
    A pop that leaves room for a largest packet wakes the producer.

    The TimedQueue operations are restated here with the flits of each packet
    computed once at push and kept with it (the ring's units): these queues carry
    every packet of the interconnect, so the generic per-call `units_of` dispatch
    dominated the memory side. Behaviour, counters and
    wake-ups are exactly TimedQueue's."""

    def __init__(self, name: str, capacity_flits: int, flit_bytes: int, consumer: Component | None = None,
                 delay: int = 1, producer: Component | None = None) -> None:
        if flit_bytes < 1:
            raise ValueError(f"queue {name}: flit_bytes must be >= 1")
        self.flit_bytes = flit_bytes
        self.max_packet_flits = -(-(HEADER_BYTES + LINE_BYTES) // flit_bytes)
        if capacity_flits < self.max_packet_flits:
            raise ValueError(f"queue {name}: {capacity_flits} flits cannot hold a largest packet "
                             f"({self.max_packet_flits} flits of {flit_bytes} bytes)")
        super().__init__(name, capacity_flits, consumer, delay, producer)
        self.used_flits = 0
        self._sizes = flit_sizes(flit_bytes)

    def flits_of(self, item: Any) -> int:
        return self._sizes.of(item)

    def units_of(self, item: Any = None) -> int:
        return self.max_packet_flits if item is None else self._sizes.of(item)

    def used_units(self) -> int:
        return self.used_flits

    def _on_push(self, item: Any) -> None:
        self.used_flits += self._sizes.of(item)

    def _on_pop(self, item: Any) -> None:
        self.used_flits -= self._sizes.of(item)

    def _engine_now(self) -> int | None:
        e = self._engine
        if e is not None:
            return e.now
        eng = self._eng
        if eng is not None:
            return eng.now
        for c in (self.consumer, self.producer):
            if c is not None and c.engine is not None:
                eng = c.engine
                if type(c) is _InputPort:
                    # the port stands in for its crossbar: use the crossbar's engine
                    # once it has one (the port reads time 0 until then)
                    eng = c.xbar.engine
                    if eng is None:
                        return 0
                self._eng = eng  # components join one engine for good
                if isinstance(eng, Engine):
                    self._engine = eng
                return eng.now
        return None

    def held_units(self) -> int:
        """Flits not reusable now: queued packets plus what was popped this time step."""
        # (_freed > 0 only after a pop that knew the time, so -1 never matches _free_t then)
        if self._freed and self._now() == self._free_t:
            return self.used_flits + self._freed
        return self.used_flits

    def can_push(self, item: Any = None) -> bool:
        need = self.max_packet_flits if item is None else self._sizes.of(item)
        used = self.used_flits
        held = used + self._freed if self._freed and self._now() == self._free_t else used
        if held + need <= self.capacity:
            return True
        self.full_refusals += 1
        p = self.producer
        if used + need <= self.capacity and p is not None and p.engine is not None:
            # refused only because of this step's pops: the room is there next cycle
            d = p.domain
            now = self._now()
            if now < 0:
                now = 0
            p.engine.wake_at_time(p, (now // d.period_fs + 1) * d.period_fs)
        return False

    def push(self, item: Any, now_fs: int) -> None:
        f = self._sizes.of(item)
        if self.used_flits + f > self.capacity:
            raise RuntimeError(f"push into full queue {self.name}: the producer must check can_push() first")
        c = self.consumer
        if isinstance(c, _InputPort):  # (narrowed: the compiled core reads it natively)
            p = c.domain.period_fs
            ready = (now_fs // p + self.delay) * p
            c.xbar._note_arrival(ready, c.index)  # what the port's wake_at_time does
        else:
            ready = self._notify_consumer(now_fs)
        self._append(ready, item, f)
        self.used_flits += f
        self.pushes += 1

    def head_flits(self) -> int:
        """Flits of the head packet."""
        return self._ring.head_units()

    def pop(self) -> Any:
        blocking = self.capacity - self.used_flits < self.max_packet_flits
        item, f = self._popleft()
        self.used_flits -= f
        now = self._now()
        if now >= 0:
            if now != self._free_t:
                self._free_t, self._freed = now, 0
            self._freed += f
        if blocking:
            self._wake_producer(now if now >= 0 else 0)
        return item


class _InputPort:
    """Stands in as the consumer of one input queue so a push tells the crossbar
    *which* input received a packet (duck-typed for `TimedQueue.push`, which only
    uses the consumer's `domain` and `engine.wake_at_time`)."""

    __slots__ = ("domain", "index", "xbar")

    def __init__(self, xbar: Crossbar, index: int) -> None:
        self.xbar = xbar
        self.index = index
        self.domain = xbar.domain

    @property
    def engine(self) -> _InputPort:
        return self

    def wake_at_time(self, _comp: Any, t_fs: int) -> None:
        self.xbar._note_arrival(t_fs, self.index)

    @property
    def now(self) -> int:
        eng = self.xbar.engine
        return eng.now if eng is not None else 0
