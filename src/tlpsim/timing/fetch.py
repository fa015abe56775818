"""Instruction fetch: warps whose instruction buffer ran empty queue for the
L1 instruction cache; each cycle `throughput` of them are served (GPGPU-Sim's
gpgpu_inst_fetch_throughput). A hit brings `width` instruction slots from the
warp's pc (fewer at the end of a 128-byte line), decoded into the warp's buffer in
the next cycle, so they issue from the cycle after that (GPGPU-Sim's fetch ->
decode -> issue: a warp whose buffer runs empty issues at most `width`
instructions every `width` + 1 cycles). Only the slots that follow the pc
sequentially are valid: after a taken branch (the next dynamic instruction is not
the next one in the code) the rest of the fetch is wrong-path. GPGPU-Sim notices
that at the next scheduling of the warp, flushes the buffer and refetches from the
target in that cycle; when the branch was the fetch's last slot, the buffer's
emptying first fetched the fall-through, decoded it a cycle later and flushed it
then: that wasted fetch takes its turn at the fetch port like any other, and the
target's fetch follows 2 cycles after it (`refetch`; a flush after a wrong-path
slot refetches 1 cycle after the branch issues). With many warps and branchy
code the port, not the schedulers, bounds the issue rate. A warp at a barrier
fetches too. A miss sends the line's request to L2 through the SM's memory port (MSHRs merge warps waiting on one line) and the warp is refilled
when the line arrives — so a kernel's first instructions on an SM pay L2/DRAM
latency, as in GPGPU-Sim. Instructions are 8 bytes at their kernel's code
address (`StaticKernel.code_addr`), as GPGPU-Sim lays out PTX; the stream itself
comes from the trace. Without an L1I model (`l1i` None: a perfect instruction
cache) every fetch hits. With a stream prefetcher (`iprefetch.py`) each demand fetch
moves its stream, and after serving the demand fetches the stage sends at most one
prefetch a cycle, when the request queue has room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.iprefetch import StreamPrefetcher

if TYPE_CHECKING:
    from tlpsim.timing.issue import IssueStage
    from tlpsim.timing.ldst import LdstUnit
    from tlpsim.timing.warp import Warp

INSTR_BYTES: Final = 8


class Fetch:
    issue: IssueStage   # wired by the SM
    ldst: LdstUnit

    def __init__(self, ibuf_entries: int, throughput: int = 1, l1i: CachePort | None = None,
                 width: int = 2, prefetch: StreamPrefetcher | None = None) -> None:
        self.ibuf_entries = ibuf_entries
        self.throughput = throughput
        self.width = min(width, ibuf_entries)  # instruction slots one fetch brings into the buffer
        self.l1i = l1i
        if prefetch is not None and l1i is None:
            raise ValueError("an instruction prefetcher needs an instruction cache (l1i.perfect = false)")
        self.prefetch = prefetch
        # (lists, not deques: a compiled list's length and truth are native reads, and
        # these hold at most a few dozen warps)
        self.queue: list[int] = []   # warp slots waiting for a refill
        self.filled: list[Any] = []  # warps whose missing line arrived
        self.decoding: list[Any] = []       # warps fetched this cycle: their buffer fills next cycle
        self.flushed: list[tuple[int, int]] = []  # (cycle, slot): fetches waiting for a taken branch's flush
        self.misses = 0                     # lines fetched from L2
        self.waiting = 0                    # warps waiting for a missing line

    def __len__(self) -> int:
        pf = self.prefetch
        return (len(self.queue) + len(self.filled) + len(self.decoding) + len(self.flushed)
                + (1 if pf is not None and pf.pending() else 0))

    def want(self, w: Warp) -> None:
        """Queue `w` for a refill if its buffer is empty and it has instructions left."""
        if not w.in_fetch and not w.done and w.ibuf == 0 and w.pos < w.n:
            w.in_fetch = True
            self.queue.append(w.slot)

    def refetch(self, w: Warp, now: int) -> None:
        """`w` issued the last instruction of its buffer at `now`: queue its fetch, after
        the flush when that instruction jumped (see the module doc)."""
        if w.refetch_delay != 1:  # (2: the fall-through's fetch takes its turn at the port first)
            self.want(w)
        elif not w.in_fetch and not w.done and w.pos < w.n:
            w.in_fetch = True
            self.flushed.append((now + 1, w.slot))

    def _refill(self, w: Warp) -> None:
        """The fetch of `w` is served: its buffer fills at the next cycle's decode."""
        self.decoding.append(w)

    def _decode(self, w: Warp) -> None:
        """Fill `w`'s buffer with the valid slots of its fetch: up to `width` instructions
        from its pc to the end of the pc's 128-byte line, stopping after a jump."""
        w.in_fetch = False
        pcs, pos, n = w.pcs, w.pos, w.n
        if pos >= n or w.done:
            return
        p0 = pcs[pos]
        width = (128 - ((w.code_addr + p0 * INSTR_BYTES) & 127)) // INSTR_BYTES
        if width > self.width:
            width = self.width
        k = 1
        while k < width and pos + k < n and pcs[pos + k] == p0 + k:
            k += 1
        # a jump after the last valid slot: wrong-path slots follow it in this fetch
        # (flushed a cycle after the jump issues), or the fall-through is fetched first (2)
        w.refetch_delay = 0 if pos + k >= n or pcs[pos + k] == p0 + k else (1 if k < width else 2)
        w.ibuf = k
        self.issue.update_ready(w)

    def tick(self, warps: list[Warp | None], now: int) -> bool:
        """Decode last cycle's fetches, then serve up to `throughput` fetches (arrived
        lines first); True when anything happened."""
        q = self.queue
        dec = self.decoding
        pf = self.prefetch
        if not q and not self.filled and not dec and not self.flushed and (pf is None or not pf.pending()):
            return False
        if dec:
            self.decoding = []
            for w in dec:
                self._decode(w)
        if self.flushed:
            later = []
            for c, slot in self.flushed:
                if c <= now:
                    q.append(slot)
                else:
                    later.append((c, slot))
            self.flushed = later
        l1i = self.l1i
        for _ in range(self.throughput):
            if self.filled:  # a line this warp waited for has arrived
                self.waiting -= 1
                self._refill(self.filled.pop(0))
                continue
            if not q:
                break
            fw = warps[q.pop(0)]
            if fw is None:
                continue
            if fw.refetch_delay == 2:  # the fall-through after a jump: fetched, decoded, then flushed
                fw.refetch_delay = 0
                self.flushed.append((now + 2, fw.slot))
                continue
            if l1i is None:
                self._refill(fw)
                continue
            line = (fw.code_addr + fw.pcs[fw.pos] * INSTR_BYTES) & ~127
            if l1i.array.access_if_hit(line):
                if pf is not None:
                    pf.on_fetch(line, False)
                self._refill(fw)
                continue
            if pf is not None and line in pf.inflight:  # prefetched, on its way
                pf.wait(line, fw)
                pf.on_fetch(line, False)
                self.waiting += 1
                continue
            ldst = self.ldst
            outcome, value = l1i.read(line, 0xF, fw, now, can_send=ldst.to_icnt.can_push)
            if outcome == "hit":
                self._refill(fw)
            elif outcome == "fail":  # no MSHR or request slot: try again next cycle
                q.insert(0, fw.slot)
                break
            else:
                self.waiting += 1
                if outcome == "miss":
                    self.misses += 1
                    ldst.send_fetch(line, value, l1i, now)
            if pf is not None:
                pf.on_fetch(line, outcome == "miss")
        if pf is not None and pf.pending():
            self._prefetch(pf, now)
        return True

    def _prefetch(self, pf: StreamPrefetcher, now: int) -> None:
        """Send the stream's next line that is neither cached nor on its way, if the
        buffer has a free entry and the request queue room (one a cycle)."""
        l1i = self.l1i
        assert l1i is not None
        arr, mshr = l1i.array, l1i.mshr
        lb = pf.line_bytes
        while pf.pending():
            line = pf.next
            if line in arr or mshr.lookup(line) or line in pf.inflight:
                pf.next = line + lb
                continue
            ldst = self.ldst
            if pf.can_request() and ldst.to_icnt.can_push():
                ldst.send_fetch(line, 0xF, l1i, now, prefetch=True)
                pf.requested(line)
            return

    def prefetched(self, line: int) -> None:
        """A prefetched line arrived (from the LD/ST unit's reply path): it goes into
        the L1I and the warps that waited for it are refilled."""
        pf, l1i = self.prefetch, self.l1i
        assert pf is not None and l1i is not None
        l1i.install(line)
        self.arrived(pf.arrived(line))

    def arrived(self, waiters: list[Any]) -> None:
        """Warps whose instruction line was filled (from the LD/ST unit's reply path)."""
        self.filled.extend(waiters)
