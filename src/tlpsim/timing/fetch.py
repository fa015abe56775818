"""Instruction fetch: warps whose instruction buffer ran empty queue for the
I-cache; each cycle `throughput` of them get their buffer refilled with up to
`ibuf_entries` instructions (GPGPU-Sim's gpgpu_inst_fetch_throughput). The
instruction stream comes from the trace, so fetch costs buffer slots and fetch
bandwidth, not I-cache misses."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tlpsim.timing.issue import IssueStage
    from tlpsim.timing.warp import Warp


class Fetch:
    issue: IssueStage   # wired by the SM

    def __init__(self, ibuf_entries: int, throughput: int = 1) -> None:
        self.ibuf_entries = ibuf_entries
        self.throughput = throughput
        self.queue: deque[int] = deque()   # warp slots waiting for a refill

    def __len__(self) -> int:
        return len(self.queue)

    def want(self, w: Warp) -> None:
        """Queue `w` for a refill if its buffer is empty and it has instructions left."""
        if not w.in_fetch and not w.done and w.ibuf == 0 and w.pos < w.n:
            w.in_fetch = True
            self.queue.append(w.slot)

    def tick(self, warps: list[Warp | None]) -> bool:
        """Refill up to `throughput` warps' buffers; True when any fetch happened."""
        q = self.queue
        if not q:
            return False
        for _ in range(self.throughput):
            if not q:
                break
            fw = warps[q.popleft()]
            if fw is not None:
                fw.in_fetch = False
                left = fw.n - fw.pos
                fw.ibuf = self.ibuf_entries if self.ibuf_entries < left else left
                self.issue.update_ready(fw)
        return True
