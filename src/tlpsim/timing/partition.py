"""A memory partition's sharing of its DRAM channel by its L2 slices: requests
from the slices enter the channel's queue round-robin, one per DRAM cycle, and
read data is routed back to the slice that asked (GPGPU-Sim's two sub-partitions
per memory controller)."""

from __future__ import annotations

from typing import Callable, Sequence

from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.mem_types import MemRequest
from tlpsim.timing.queues import TimedQueue


class SliceOf:
    """A partition's route of a request to its slice: global slice - first slice."""

    def __init__(self, first_slice: int) -> None:
        self.first_slice = first_slice

    def __call__(self, req: MemRequest) -> int:
        return req.partition - self.first_slice


class SliceMux(Component):
    def __init__(self, domain: ClockDomain, name: str, to_dram: Sequence[TimedQueue], from_dram: Sequence[TimedQueue],
                 channel_in: TimedQueue, channel_out: TimedQueue, slice_of: Callable[[MemRequest], int]) -> None:
        super().__init__(domain)
        self.name = name
        self.to_dram = list(to_dram)
        self.from_dram = list(from_dram)
        self.channel_in = channel_in
        self.channel_out = channel_out
        self.slice_of = slice_of
        self.rr = 0
        for q in self.to_dram:
            q.consumer = self
        for q in self.from_dram:
            q.producer = self
        channel_in.producer = self
        channel_out.consumer = self
        self.forwarded = 0
        self.returned = 0

    def busy(self) -> bool:
        return any(len(q) for q in self.to_dram) or len(self.channel_out) > 0

    def tick(self, cycle: int) -> bool:
        now = cycle * self.domain.period_fs
        progress = False
        # one request into the channel per cycle, round-robin over the slices
        qs = self.to_dram
        n = len(qs)
        for k in range(n):
            q = qs[(self.rr + k) % n]
            if q.ready(now):
                if self.channel_in.can_push(q.peek()):
                    self.channel_in.push(q.pop(), now)
                    self.forwarded += 1
                    self.rr = (self.rr + k + 1) % n
                    progress = True
                break
        # one reply back per cycle
        out = self.channel_out
        if out.ready(now):
            rep = out.peek()
            dst = self.from_dram[self.slice_of(rep)]
            if dst.can_push(rep):
                dst.push(out.pop(), now)
                self.returned += 1
                progress = True
        # Without progress the mux is idle or blocked on a full queue, whose pop
        # wakes it: either way it sleeps. After progress it looks again next cycle
        # only if a request or reply is already waiting; later ones wake it through
        # the timers their pushes set.
        if not progress:
            return False
        if out.ready(now):
            return True
        for q in qs:
            if q.ready(now):
                return True
        return False
