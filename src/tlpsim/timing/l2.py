"""One L2 slice (GPGPU-Sim's memory sub-partition): the ROP delay pipeline, a
sectored write-back L2 cache with MSHRs, a miss queue to the DRAM channel and the
reply path back to the interconnect.

Per L2 cycle, in this order (one request per stage per cycle):

1. fill replies → interconnect: the oldest request a fill completed goes out, one a
   cycle, ahead of this cycle's lookup (GPGPU-Sim's cache_cycle moves a ready MSHR
   entry into m_L2_icnt_queue first; a lookup then needs the room that is left).
2. fill — take one DRAM reply when the fill port is free: its sectors become valid
   and the MSHR entry releases every request they complete into the fill-reply
   buffer (atomics mark the line dirty).
3. lookup — the oldest request that has spent `hit_latency` cycles in the ROP
   pipeline (GPGPU-Sim gpgpu_l2_rop_latency: every request is delayed by it before
   the cache sees it) accesses the tags. Read/atomic hit → reply now (a read with
   `sector_replies` one packet per sector request, the rest one a cycle); pending hit →
   merge into the MSHR; sector miss / miss → MSHR entry + DRAM read of the missing
   sectors (+ a DRAM write for a dirty victim); write → ack now (with
   `sector_write_acks` one per sector request, the rest one a cycle), line written per
   the write policy. A lookup needs room in the reply queue (GPGPU-Sim checks
   `m_L2_icnt_queue->full()` before any access), a free way, an MSHR entry or merge
   slot and room in the miss queue; otherwise it stalls and the reason is counted
   every stalled cycle. The data port is then busy for the bytes the lookup moved
   (hit or write data, dirty victim) / `data_port_bytes` cycles; with `sector_lookups`
   (GPGPU-Sim's sector requests) at least a cycle per sector the request touches.
4. accept — one request from the interconnect enters the ROP pipeline.
5. miss queue → DRAM: one request a cycle into `to_dram`.

So a read hit is pushed to `to_icnt` exactly `hit_latency` cycles after the slice
accepted it (a requester pushing at cycle p sees the reply at p + hit_latency + 2
with the default 1-cycle queue delays), and a read miss is pushed `hit_latency` + the
DRAM round trip (from the `to_dram` push to the `from_dram` reply becoming visible)
+ 1 cycles after acceptance (filled in one cycle, replied in the next). Replies are
the request objects themselves with `is_reply=True` (as GPGPU-Sim's mf->set_reply());
the requester's token is untouched.

Near/far halves (`far_latency` > 0; Hopper's and Ampere's L2 is two partitions, each
wired to half of the SMs): a request from an SM of the other half waits `far_latency`
more cycles in a FIFO of its own before the lookup (the crossing, both ways). Its read
reply leaves a copy of the sectors in the requester's half; later reads from that half
which the copy covers pay only `hit_latency` and are served from it without this
slice's array. A write or atomic (performed here, at the line's home) or a host copy
drops the copy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from tlpsim.timing.addrmap import AddressMap
from tlpsim.timing.cache import (
    HIT,
    HIT_RESERVED,
    MISS,
    MSHR,
    SECTOR_BYTES,
    SECTOR_MISS,
    CacheArray,
    CachePolicy,
)
from tlpsim.timing.duering import DueRing
from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE, MemRequest, popcount, sector_requests
from tlpsim.timing.queues import TimedQueue
from tlpsim.timing.stats import L2Stats


class L2Slice(Component):
    """A memory sub-partition: ROP delay + sectored L2 cache slice in front of one
    DRAM channel (see the module docstring for the per-cycle pipeline).

    Queues: `from_icnt` requests from the crossbar, `to_icnt` replies to it,
    `to_dram` reads and writebacks for the channel, `from_dram` read data back. The
    slice makes itself the consumer of its input queues and the producer of its
    output queues where those have none, so it is woken by arrivals and by space
    freeing up."""

    name = "l2"

    def __init__(self, domain: ClockDomain, slice_id: int, *, size_bytes: int, assoc: int,
                 from_icnt: TimedQueue, to_icnt: TimedQueue, to_dram: TimedQueue, from_dram: TimedQueue,
                 line_bytes: int = 128, sector_bytes: int | None = 32, mshr_entries: int = 256,
                 mshr_max_merge: int = 4, hit_latency: int = 120, policy: str | CachePolicy = "L:B:m:L:L",
                 miss_queue_entries: int = 4, data_port_bytes: int = 32, rop_entries: int | None = None,
                 write_ack: bool = True, set_index_addr: AddressMap | Callable[[int], int] | None = None,
                 side: int = -1, sm_sides: list[int] | None = None, far_latency: int = 0,
                 sector_lookups: bool = False, sector_write_acks: bool = False,
                 sector_replies: bool = False) -> None:
        super().__init__(domain)
        self.name = f"l2[{slice_id}]"
        self.slice_id = slice_id
        pol = policy if isinstance(policy, CachePolicy) else CachePolicy.from_gpgpusim(policy)
        if pol.write_policy == "read_only" or pol.allocation != "on_miss":
            raise ValueError(f"L2 slice {slice_id}: needs a writable allocate-on-miss policy, got "
                             f"{pol.write_policy}/{pol.allocation} (GPGPU-Sim forbids write-back with on-fill)")
        if hit_latency < 1:
            raise ValueError(f"L2 slice {slice_id}: hit_latency must be >= 1 L2 cycle, not {hit_latency}")
        if far_latency < 0:
            raise ValueError(f"L2 slice {slice_id}: far_latency must be >= 0, not {far_latency}")
        if far_latency and (side not in (0, 1) or not sm_sides):
            raise ValueError(f"L2 slice {slice_id}: far_latency needs the slice's half (side 0 or 1, not {side}) "
                             f"and every SM's half (sm_sides)")
        if rop_entries is not None and rop_entries < 1:
            raise ValueError(f"L2 slice {slice_id}: rop_entries must be >= 1, not {rop_entries}")
        # a read miss queues a read + a dirty-victim writeback; a write up to write + fetch + writeback
        need_mq = max(2, max(a.send + a.fetch + a.allocate for a in (pol.on_write(False), pol.on_write(True))))
        if miss_queue_entries < need_mq:
            raise ValueError(f"L2 slice {slice_id}: miss_queue_entries must be >= {need_mq} for policy "
                             f"{pol} (a miss can queue that many requests at once)")
        self.policy = pol
        self.cache = CacheArray(size_bytes, assoc, line_bytes, sector_bytes, pol.replacement, pol.set_index,
                                set_index_addr)
        self.mshr = MSHR(mshr_entries, mshr_max_merge)
        self.hit_latency = hit_latency
        self.data_port_bytes = data_port_bytes
        # GPGPU-Sim's sectored L2 splits a request into one request per sector
        # (memory_sub_partition::breakdown_request_to_sector_requests), each taking
        # its own cycle at the tag array: a lookup then holds the slice one cycle per
        # sector it touches, however it ends (not only for the sectors a hit reads)
        self.sector_lookups = sector_lookups and sector_bytes is not None
        self.write_ack = write_ack
        # ... and acknowledges a write once per sector request it was split into
        # (GPGPU-Sim replies to each), the first ack with the lookup and the others
        # one a cycle after it from the reply buffer, as each sector's lookup would
        self.sector_write_acks = sector_write_acks and sector_bytes is not None
        # ... and returns a read's data once per sector request, each sector a packet
        # of its own (header + 32 bytes) that the requester gathers before using the
        # line (an L1's sector MSHR counts them: baseline_cache::fill's pending_read)
        self.sector_replies = sector_replies and sector_bytes is not None
        self.from_icnt, self.to_icnt, self.to_dram, self.from_dram = from_icnt, to_icnt, to_dram, from_dram
        for q in (from_icnt, from_dram):
            if q.consumer is None:
                q.consumer = self
        for q in (to_icnt, to_dram):
            if q.producer is None:
                q.producer = self
        self.stats = L2Stats(cache=self.cache.stats, mshr=self.mshr.stats)
        self._rop = DueRing()   # (ready cycle, request)
        self._rop_cap = hit_latency if rop_entries is None else rop_entries
        # Near/far halves (l2.far_latency > 0): a request from an SM wired to the other half
        # crosses to this slice and back, so it waits far_latency more in its own FIFO (a
        # near request is not held behind it); its reply leaves a copy of the sectors in the
        # requester's half, which serves that half's later reads at the near latency until a
        # write or atomic to the line invalidates it (see NearFarL2 in docs/memory.md).
        self.side = side
        self.far_latency = far_latency
        self._split = far_latency > 0
        self._sm_sides: list[int] = list(sm_sides) if sm_sides else []
        self._rop_far = DueRing()
        if self._split and rop_entries is None:
            self._rop_cap = hit_latency + far_latency
        self._replica: dict[int, int] = {}      # line → sectors copied into the other half (LRU order)
        self._replica_cap = size_bytes // line_bytes
        self.far_requests = 0      # requests that paid the crossing
        self.replica_hits = 0      # far-side reads served by the copy in their own half
        # (FIFOs of requests in rings: their lengths are native reads, a deque's truthiness
        # and methods generic calls; the due cycles are unused)
        self._missq = DueRing()
        self._missq_cap = miss_queue_entries
        self._resp = DueRing()              # fill-released replies (and further write acks)
        self._port_free = 0     # first cycle the data port can start a lookup
        self._fill_free = 0     # first cycle the fill port can take a DRAM reply
        self._stall = ""   # why the lookup stalled in the last tick ("": it did not)
        self._occupied = False
        self._period = domain.period_fs

    # -- engine interface -------------------------------------------------------------
    def busy(self) -> bool:
        return bool(len(self._rop) or len(self._rop_far) or len(self._resp) or len(self._missq) or len(self.mshr)
                    or len(self.from_icnt) or len(self.from_dram))

    def skipped(self, first: int, last: int) -> None:
        n = last - first + 1
        if self._occupied:
            self.stats.occupied_cycles += n
        if self._stall:
            self._count_stall(self._stall, n)

    def utilisation(self, cycles: int) -> float:
        """Data-port busy cycles over `cycles` L2 cycles."""
        return self.stats.busy_cycles / cycles if cycles else 0.0

    def tick(self, cycle: int) -> bool:
        now = cycle * self._period
        progress = False
        self._stall = ""
        resp = self._resp
        if len(resp) and self.to_icnt.can_push():
            self.to_icnt.push(cast(MemRequest, resp.popleft()), now)
            self.stats.replies += 1
            progress = True
        if cycle >= self._fill_free:
            fd = self.from_dram
            if fd.ready(now):
                self._fill(fd.pop(), cycle)
                progress = True
        rop = self._rop
        far = self._rop_far
        n_rop, n_far = len(rop), len(far)
        lane = rop
        if n_far and (not n_rop or far.head_due() < rop.head_due()):
            lane = far          # the two FIFOs meet at the tag lookup, earliest due first
        if (len(lane) and lane.head_due() <= cycle and cycle >= self._port_free
                and self._lookup(cast(MemRequest, lane.head()), cycle, now)):
            lane.popleft()
            progress = True
        if len(rop) + len(far) < self._rop_cap:
            fi = self.from_icnt
            if fi.ready(now):
                req = fi.pop()
                req.t_l2 = now  # (the memory-latency statistic: GPGPU-Sim's averagemflatency)
                if self._split and self._crosses(req):
                    due = cycle + self.hit_latency + self.far_latency
                    far.append(due, req)
                else:
                    due = cycle + self.hit_latency
                    rop.append(due, req)
                self._wake_at(due)
                progress = True
        missq = self._missq
        if len(missq) and self.to_dram.can_push():
            self.to_dram.push(cast(MemRequest, missq.popleft()), now)
            progress = True
        if len(rop) or len(far) or len(resp) or len(missq) or len(self.mshr):
            self._occupied = True
            self.stats.occupied_cycles += 1
        else:
            self._occupied = False
        if self._stall:
            self._count_stall(self._stall, 1)
        if not progress or len(resp) or len(missq):
            return progress
        # Progress made, but sleep at once when no stage can act next cycle without
        # an event that wakes the slice anyway: a later ROP head, a later arrival
        # and a later DRAM reply each have the timer their push / accept set, and the
        # state (so the skipped() back-fill) stays as it is. This spares the idle
        # tick that would follow every burst of work.
        if len(rop) and rop.head_due() <= cycle + 1:
            return True
        if len(far) and far.head_due() <= cycle + 1:
            return True
        if len(rop) + len(far) < self._rop_cap and self.from_icnt.ready(now):
            return True
        return self.from_dram.ready(now)

    def _wake_at(self, cycle: int) -> None:
        """`wake_at` without the generic method chain (called per request)."""
        eng = self.engine
        if eng is not None:
            eng.wake_at_time(self, cycle * self._period)

    def debug_state(self) -> dict:
        """Occupancy snapshot for deadlock reports."""
        return {"rop": len(self._rop) + len(self._rop_far), "mshr": len(self.mshr), "miss_queue": len(self._missq),
                "fill_replies": len(self._resp), "lines": len(self.cache), "stall": self._stall or None,
                "from_icnt": len(self.from_icnt), "from_dram": len(self.from_dram)}

    # -- stages -----------------------------------------------------------------------
    def _count_stall(self, reason: str, n: int) -> None:
        if reason == "reply":
            self.stats.stall_reply_cycles += n
        else:
            self.cache.stats.count_fail(reason, n)

    def _port_cycles(self, nbytes: int) -> int:
        w = self.data_port_bytes
        return max(1, -(-nbytes // w)) if w > 0 else 1

    def _fill(self, rep: MemRequest, cycle: int) -> None:
        st = self.stats
        if rep.kind == WRITE:
            st.dram_write_replies += 1
            return
        st.dram_fills += 1
        addr, mask = rep.addr, rep.sector_mask
        cache = self.cache
        if addr not in cache:
            raise RuntimeError(f"{self.name}: DRAM fill for line {addr:#x}, which the slice did not request")
        cache.fill(addr, mask)
        n = popcount(mask)
        st.data_writes += n
        resp = self._resp
        for req in self.mshr.fill(addr, mask):
            if req is None:          # write-allocate fetch: nobody waits for it
                continue
            if req.kind == ATOMIC:
                cache.mark_dirty(addr, req.sector_mask)
                st.data_writes += req.n_sectors
            elif self._split and req.kind == READ and self._far_side(req):
                self._replicate(addr, cache.widen(req.sector_mask or cache.full_mask))
            req.is_reply = True
            resp.append(0, req)
            if self.sector_replies and req.kind == READ:
                for piece in self._sector_pieces(req, req.sector_mask or 15, True):
                    resp.append(0, piece)
        k = self._port_cycles(n * SECTOR_BYTES)
        self._fill_free = cycle + k
        if k > 1:
            self._wake_at(cycle + k)

    def _lookup(self, req: MemRequest, cycle: int, now: int) -> bool:
        """Try the tag access of the ROP head; False (with `_stall` set) if it must wait."""
        if not self.to_icnt.can_push():
            self._stall = "reply"
            return False
        cache = self.cache
        mask = cache.widen(req.sector_mask or cache.full_mask)
        if req.kind == WRITE:
            return self._write(req, mask, cycle, now)
        addr = req.addr
        mshr = self.mshr
        st = self.stats
        moved = 0
        far_read = self._split and req.kind == READ and self._far_side(req)
        if far_read and (have := self._replica.get(addr, 0)) and not mask & ~have:
            # the copy in the requester's half serves it; this slice's array is not read
            self._replicate(addr, have)
            self.replica_hits += 1
            n = popcount(mask)
            self._read_reply(req, now)
            self._count_kind(READ)
            self._use_port(cycle, n * SECTOR_BYTES, n, True)
            return True
        hit = False
        if cache.access_if_hit(addr, mask):   # probe() == HIT, and access() done
            n = popcount(mask)
            st.data_reads += n
            if req.kind == ATOMIC:
                cache.mark_dirty(addr, mask)
                st.data_writes += n
            elif far_read:
                self._replicate(addr, mask)
            self._read_reply(req, now)
            moved = n * SECTOR_BYTES
            hit = True
        elif (status := cache.probe(addr, mask, check_alloc=False)) == HIT_RESERVED:
            if not mshr.can_merge(addr):
                self._stall = "res_fail_merge"
                return False
            cache.access(addr, mask)
            mshr.merge(addr, req, mask)
        elif status == SECTOR_MISS:
            has = mshr.lookup(addr)
            if len(self._missq) + 1 > self._missq_cap:
                self._stall = "res_fail_queue"
                return False
            if not (mshr.can_merge(addr) if has else mshr.can_allocate(addr)):
                self._stall = "res_fail_merge" if has else "res_fail_mshr"
                return False
            missing = cache.access(addr, mask).missing
            if has:
                mshr.merge(addr, req, mask, fetch=missing)
            else:
                mshr.allocate(addr, req, missing)
            self._dram(READ, addr, missing, now)
        else:
            ok, victim = cache.victim(addr)
            if not ok:
                self._stall = "res_fail_set"
                return False
            dirty = victim.dirty if victim is not None else 0
            if len(self._missq) + 1 + (dirty != 0) > self._missq_cap:
                self._stall = "res_fail_queue"
                return False
            if not mshr.can_allocate(addr):
                self._stall = "res_fail_mshr"
                return False
            res = cache.access(addr, mask)
            mshr.allocate(addr, req, res.missing)
            self._dram(READ, addr, res.missing, now)
            moved = self._writeback(res.evicted, now)
        if self._split and req.kind == ATOMIC:
            self._replica.pop(addr, None)    # performed here, at the line's home: the other half's copy is stale
        self._count_kind(req.kind)
        self._use_port(cycle, moved, popcount(mask), hit)
        return True

    def _write(self, req: MemRequest, mask: int, cycle: int, now: int) -> bool:
        cache, mshr = self.cache, self.mshr
        addr = req.addr
        status = cache.probe(addr, mask, check_alloc=False)
        present = status != MISS
        act = self.policy.on_write(status == HIT)
        alloc = act.allocate and not present
        victim = None
        if alloc:
            ok, victim = cache.victim(addr)
            if not ok:
                self._stall = "res_fail_set"
                return False
        dirty = victim.dirty if victim is not None else 0
        fetch = act.fetch and (alloc or present)
        if len(self._missq) + act.send + fetch + (dirty != 0) > self._missq_cap:
            self._stall = "res_fail_queue"
            return False
        has = fetch and mshr.lookup(addr)
        if fetch and not (mshr.can_merge(addr) if has else mshr.can_allocate(addr)):
            self._stall = "res_fail_merge" if has else "res_fail_mshr"
            return False
        moved = 0
        if act.invalidate:
            cache.access(addr, mask, allocate=False, reserve=False)
            cache.invalidate(addr, mask)
        else:
            res = cache.access(addr, mask, allocate=alloc, reserve=False)
            moved = self._writeback(res.evicted, now)
        if act.write_line and (present or alloc):
            cache.write(addr, mask, act.dirty)
            n = popcount(mask)
            self.stats.data_writes += n
            if not self.sector_lookups or status == HIT:
                moved += n * SECTOR_BYTES
        if fetch:
            missing = cache.reserve(addr, cache.full_mask)
            if missing:
                if has:
                    mshr.merge(addr, None, missing, fetch=missing)
                else:
                    mshr.allocate(addr, None, missing)
                self._dram(READ, addr, missing, now)
        if act.send:
            self._dram(WRITE, addr, mask, now)
        if self._split:
            self._replica.pop(addr, None)    # the write invalidates the other half's copy
        if self.write_ack and req.ack:  # (GPGPU-Sim deletes an L1_WRBK_ACC without a reply)
            if self.sector_write_acks:
                self._sector_acks(req, mask, now)
            else:
                self._reply(req, now)
                self.stats.write_acks += 1
        self._count_kind(WRITE)
        self._use_port(cycle, moved, popcount(mask), status == HIT)
        return True

    # -- helpers ------------------------------------------------------------------------
    def _far_side(self, req: MemRequest) -> bool:
        """Whether the requesting SM is wired to the other half of the L2."""
        src = req.src_sm
        return 0 <= src < len(self._sm_sides) and self._sm_sides[src] != self.side

    def _crosses(self, req: MemRequest) -> bool:
        """Whether a request just accepted pays the far latency: it comes from the other
        half and is not a read its half's copy of the line covers (counted)."""
        if not self._far_side(req):
            return False
        if req.kind == READ:
            have = self._replica.get(req.addr, 0)
            if have and not self.cache.widen(req.sector_mask or self.cache.full_mask) & ~have:
                return False
        self.far_requests += 1
        return True

    def _replicate(self, addr: int, mask: int) -> None:
        """The other half now holds (also) these sectors of the line; least recently used
        copies give way once the other half holds as many lines as this slice."""
        rep = self._replica
        have = rep.pop(addr, 0)
        if not have and len(rep) >= self._replica_cap:
            del rep[next(iter(rep))]
        rep[addr] = have | mask

    def warm(self, addr: int, mask: int, kind: str) -> None:
        """Functional warming (sampled runs): the state a read, write or atomic of `mask`'s
        sectors of line `addr` that was projected rather than simulated would have left,
        by this slice's allocation and write policies, uncounted and untimed."""
        cache = self.cache
        if kind == READ:
            cache.warm(addr, mask)
            return
        if kind == WRITE:
            present = addr in cache
            act = self.policy.on_write(present and cache.missing(addr, mask) == 0)
            if act.invalidate:
                cache.invalidate(addr, mask)
            elif act.write_line and (present or act.allocate):
                cache.warm(addr, mask, dirty=act.dirty)
        else:   # an atomic is performed here: the line is present and modified
            cache.warm(addr, mask, dirty=True)
        if self._split:
            self._replica.pop(addr, None)

    def host_fill(self, addr: int) -> None:
        """A host-to-device copy leaves the line valid here (l2.memcpy_fills); a copy of it
        the other half held is stale."""
        self.cache.fill(addr)
        if self._split:
            self._replica.pop(addr, None)

    def replica_lines(self) -> int:
        """Lines of this slice the other half holds a copy of."""
        return len(self._replica)

    def _count_kind(self, kind: str) -> None:
        st = self.stats
        if kind == READ:
            st.reads += 1
        elif kind == WRITE:
            st.writes += 1
        else:
            st.atomics += 1

    def _use_port(self, cycle: int, nbytes: int, sectors: int = 1, hit: bool = False) -> None:
        """Hold the data port for `nbytes`. With `sector_lookups` each of the request's
        `sectors` is its own access, a cycle at least: a hit's sectors each read (or
        write) their data; of a miss's or pending hit's only the first moves anything
        (a dirty victim: GPGPU-Sim's use_data_port charges a miss for its writeback
        alone, a write miss not for its data), the others take a cycle each."""
        k = self._port_cycles(nbytes)
        if self.sector_lookups and sectors > 1:
            k = max(k, sectors) if hit else k + sectors - 1
        self.stats.busy_cycles += k
        self._port_free = cycle + k
        if k > 1:
            self._wake_at(cycle + k)

    def _reply(self, req: MemRequest, now: int) -> None:
        req.is_reply = True
        self.to_icnt.push(req, now)
        self.stats.replies += 1

    def _read_reply(self, req: MemRequest, now: int) -> None:
        """A read's (or atomic's) data back to the requester: one packet, or with
        `sector_replies` one per sector request, the first now and the others from the
        reply buffer one a cycle after it."""
        if self.sector_replies and req.kind == READ:
            pieces = self._sector_pieces(req, req.sector_mask or 15, True)
            self._reply(req, now)
            for piece in pieces:
                self._resp.append(0, piece)
        else:
            self._reply(req, now)

    def _sector_pieces(self, req: MemRequest, mask: int, gather: bool) -> list[MemRequest]:
        """Make `req` the reply to the first of the sector requests GPGPU-Sim splits it
        into (`sector_requests(mask)`: all 4 for a segment touching both halves of the
        line) and return the replies to the others, each naming its sector. `gather`: the
        requester uses them together, so each says how many there are (`parts`); acks
        are counted one by one instead."""
        n = sector_requests(mask)
        sectors = [s for s in range(4) if n == 4 or mask >> s & 1]
        req.sector_mask = 1 << sectors[0]
        parts = n if gather else 1
        req.parts = parts
        pieces: list[MemRequest] = []
        for s in sectors[1:]:
            p = MemRequest(req.kind, req.addr, 1 << s, req.src_sm, req.partition, req.token, req.t_created, True)
            p.t_l2 = req.t_l2
            p.parts = parts
            if gather:
                p.group = req
            pieces.append(p)
        return pieces

    def _sector_acks(self, req: MemRequest, mask: int, now: int) -> None:
        """Acknowledge a write once per sector request (`sector_requests`), each ack
        naming its sector: the first now, the others from the reply buffer, one a cycle."""
        pieces = self._sector_pieces(req, mask, False)
        self._reply(req, now)
        for piece in pieces:
            self._resp.append(0, piece)
        self.stats.write_acks += 1 + len(pieces)

    def _dram(self, kind: str, addr: int, mask: int, now: int) -> None:
        n = popcount(mask)
        st = self.stats
        if kind == READ:
            st.dram_reads += 1
            st.dram_read_sectors += n
        else:
            st.dram_writes += 1
            st.dram_write_sectors += n
        self._missq.append(0, MemRequest(kind, addr, mask, src_sm=-1, partition=self.slice_id, t_created=now))

    def _writeback(self, ev, now: int) -> int:
        """Queue the dirty sectors of an evicted line; returns the bytes read out."""
        if ev is None or not ev.dirty:
            return 0
        self._dram(WRITE, ev.addr, ev.dirty, now)
        n = popcount(ev.dirty)
        self.stats.data_reads += n
        return n * SECTOR_BYTES
