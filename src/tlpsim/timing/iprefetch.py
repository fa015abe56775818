"""The instruction prefetcher: a stream buffer beside the L1 instruction cache.

Huerta et al. ("Analyzing Modern NVIDIA GPU cores", arXiv 2503.20481, 2025, §5.2)
find that the front end of NVIDIA's recent SMs behaves as a simple stream buffer
(Jouppi, ISCA 1990) and model one of 16 lines: a demand miss starts a stream at the
next line, the buffer requests the lines that follow one a cycle, and it keeps
`depth` lines ahead of the demand fetches that use the stream. Here a prefetched line
is installed in the L1I when it arrives (a Hopper L1I of 128 KB holds any stream
whole, so placing it there rather than in a separate buffer changes no hit); the
buffer's `depth` entries bound the prefetches in flight, which use neither the L1I's
MSHRs nor its miss-queue slots. A fetch of a line still on its way waits for it.
"""

from __future__ import annotations

from typing import Any


class StreamPrefetcher:
    """Which instruction line to prefetch next, and the warps waiting for lines in
    flight. `Fetch` tells it of every demand fetch (`on_fetch`) and, while a line
    is `pending`, sends `next` once a cycle (`requested`)."""

    def __init__(self, depth: int, line_bytes: int) -> None:
        if depth < 1:
            raise ValueError(f"instruction prefetch depth must be >= 1, not {depth}")
        self.depth = depth
        self.line_bytes = line_bytes
        self.start = -1    # first line of the current stream (-1: none yet)
        self.next = 0      # the next line to request
        self.end = -1      # the last line the stream may request (next > end: nothing to do)
        self.inflight: dict[int, list[Any]] = {}  # line -> warps waiting for it
        self.requests = 0  # lines requested
        self.late = 0      # demand fetches that waited for a prefetched line still in flight

    def pending(self) -> bool:
        """A line of the stream is still to be requested."""
        return self.next <= self.end

    def on_fetch(self, line: int, missed: bool) -> None:
        """A demand fetch of `line`; `missed`: it missed the L1I and nothing had
        requested it (a new request). Inside the stream the window moves to stay
        `depth` lines ahead; a miss outside it starts a new stream after it."""
        lb = self.line_bytes
        if 0 <= self.start <= line <= self.end:
            far = line + self.depth * lb
            if far > self.end:
                self.end = far
            if line >= self.next:   # the demand fetch ran ahead of the requests
                self.next = line + lb
        elif missed:
            self.start = self.next = line + lb
            self.end = line + self.depth * lb

    def can_request(self) -> bool:
        return len(self.inflight) < self.depth

    def requested(self, line: int) -> None:
        """`line` was sent to the L2."""
        self.inflight[line] = []
        self.requests += 1
        self.next = line + self.line_bytes

    def wait(self, line: int, warp: Any) -> None:
        """A demand fetch of a line in flight waits for it."""
        self.inflight[line].append(warp)
        self.late += 1

    def arrived(self, line: int) -> list[Any]:
        """`line` came back: the warps that waited for it."""
        waiters = self.inflight[line]
        del self.inflight[line]  # (not dict.pop: docs/compiled-core.md)
        return waiters
