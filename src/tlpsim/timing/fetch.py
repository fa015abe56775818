"""Instruction fetch: warps whose instruction buffer ran empty queue for the
L1 instruction cache; each cycle `throughput` of them are served (GPGPU-Sim's
gpgpu_inst_fetch_throughput). A hit refills the warp's buffer with up to
`ibuf_entries` instructions. A miss sends the line's request to L2 through the
SM's memory port (MSHRs merge warps waiting on one line) and the warp is refilled
when the line arrives — so a kernel's first instructions on an SM pay L2/DRAM
latency, as in GPGPU-Sim. Instructions are 8 bytes at their kernel's code
address (`StaticKernel.code_addr`), as GPGPU-Sim lays out PTX; the stream itself
comes from the trace. Without an L1I model (`l1i` None: a perfect instruction
cache) every fetch hits.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from tlpsim.timing.cache_port import CachePort

if TYPE_CHECKING:
    from tlpsim.timing.issue import IssueStage
    from tlpsim.timing.ldst import LdstUnit
    from tlpsim.timing.warp import Warp

INSTR_BYTES = 8


class Fetch:
    issue: IssueStage   # wired by the SM
    ldst: LdstUnit

    def __init__(self, ibuf_entries: int, throughput: int = 1, l1i: CachePort | None = None) -> None:
        self.ibuf_entries = ibuf_entries
        self.throughput = throughput
        self.l1i = l1i
        self.queue: deque[int] = deque()   # warp slots waiting for a refill
        self.filled: deque[Any] = deque()  # warps whose missing line arrived
        self.misses = 0                     # lines fetched from L2
        self.waiting = 0                    # warps waiting for a missing line

    def __len__(self) -> int:
        return len(self.queue) + len(self.filled)

    def want(self, w: Warp) -> None:
        """Queue `w` for a refill if its buffer is empty and it has instructions left."""
        if not w.in_fetch and not w.done and w.ibuf == 0 and w.pos < w.n:
            w.in_fetch = True
            self.queue.append(w.slot)

    def _refill(self, w: Warp) -> None:
        w.in_fetch = False
        left = w.n - w.pos
        w.ibuf = self.ibuf_entries if self.ibuf_entries < left else left
        self.issue.update_ready(w)

    def tick(self, warps: list[Warp | None], now: int) -> bool:
        """Serve up to `throughput` fetches (arrived lines first); True when any happened."""
        q = self.queue
        if not q and not self.filled:
            return False
        l1i = self.l1i
        for _ in range(self.throughput):
            if self.filled:  # a line this warp waited for has arrived
                self.waiting -= 1
                self._refill(self.filled.popleft())
                continue
            if not q:
                break
            fw = warps[q.popleft()]
            if fw is None:
                continue
            if l1i is None:
                self._refill(fw)
                continue
            line = (fw.code_addr + fw.pcs[fw.pos] * INSTR_BYTES) & ~127
            if l1i.array.access_if_hit(line):
                self._refill(fw)
                continue
            ldst = self.ldst
            outcome, value = l1i.read(line, 0xF, fw, now, can_send=ldst.to_icnt.can_push)
            if outcome == "hit":
                self._refill(fw)
            elif outcome == "fail":  # no MSHR or request slot: try again next cycle
                q.appendleft(fw.slot)
                break
            else:
                self.waiting += 1
                if outcome == "miss":
                    self.misses += 1
                    ldst.send_fetch(line, value, l1i, now)
        return True

    def arrived(self, waiters: list[Any]) -> None:
        """Warps whose instruction line was filled (from the LD/ST unit's reply path)."""
        self.filled.extend(waiters)
