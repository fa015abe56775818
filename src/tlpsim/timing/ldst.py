"""The LD/ST unit: shared memory with bank-conflict serialisation, the L1 data and
constant caches with MSHRs, and the SM's port to the interconnect.

One memory warp-instruction is processed at a time; it becomes a list of accesses
(one per 128-byte line touched, from the trace's coalesced sector sets), and the
unit performs one access per cycle. An access to the L1 data cache first crosses
the L1's latency pipeline (GPGPU-Sim's l1_latency_queue, `l1_pipeline` stages): with
`l1_banks` banks up to that many of the instruction's accesses enter it a cycle, in
order, while none needs a bank another took (sectors interleave the banks of a
sectored L1, lines those of a line-filled one), and as many lookups leave it; the tag
lookup happens at its end, where a hit's data
is ready, a miss takes an MSHR and enters the miss queue towards the interconnect,
and a refused lookup blocks the pipeline until a fill or a free slot lets it go on.
Plug-ins issue their own requests through the
same port (register spills and fills, preloads, context saves: `request`), which go
ahead of waiting warp instructions, and reserve shared-memory bank cycles
(`reserve_smem`), which shared-memory instructions then wait for. A read hit completes after the cache's hit
latency; a miss takes an MSHR (or merges into one) and sends a request; a refused
access (MSHR or queue full) is retried next cycle — a reservation failure, which
stalls the unit. With a sub-core path (`sub_issue_cycles`), each warp scheduler hands its
shared-memory instructions to the unit through its own path (`paths`:
timing/subcore_path.py), while the banks serve every sub-core at `smem_wave_cycles` per
wavefront. The instruction's destination registers are written back when
its last access has its data; with `wb_register` every result leaving the unit (a
shared load's, each request a fill or reply completes) takes its one writeback
register, one a cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast

from tlpsim.timing.addrmap import AddressMap
from tlpsim.timing.cache_port import WRITE_ABSORBED, CachePort
from tlpsim.timing.casloop import cas_waves
from tlpsim.timing.duering import DueRing
from tlpsim.timing.l1banks import bank_mask
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE, MemRequest, popcount, sector_requests
from tlpsim.timing.queues import TimedQueue
from tlpsim.timing.static import StaticInstr
from tlpsim.timing.ldst_types import LdstParams, _Instr
from tlpsim.timing.stats import STALL_L1D_RESERVATION_FAIL, SMStats
from tlpsim.timing.subcore_path import SubcorePaths, shared_degree

if TYPE_CHECKING:
    from tlpsim.timing.sm import SM
    from tlpsim.timing.warp import Warp
from tlpsim.trace.format import SPACE_CODES
from tlpsim.trace.localmem import placed_line

_SHARED: Final[int] = SPACE_CODES["shared"]
_LOCAL: Final[int] = SPACE_CODES["local"]
_CONST: Final[int] = SPACE_CODES["const"]
_KPARAM: Final[int] = SPACE_CODES["kparam"]
# A shared load leaves GPGPU-Sim's smem pipeline into the LD/ST unit's writeback
# register (m_next_wb) one cycle, and writes the register file from it the next
# (ldst_unit::writeback); an L1D hit releases its registers at the end of the L1
# latency queue instead, without these two stages. With `wb_register` a fill's
# requests take the same two stages (the L1D's MSHR marks them ready in the fill
# cycle; m_next_wb takes one the next cycle and writes it the cycle after).
SMEM_WRITEBACK_STAGES: Final[int] = 2


class LdstUnit:
    sm: SM          # the SM it serves (attach)
    _period: int    # its core clock period (fs)

    def __init__(self, sm_id: int, params: LdstParams, l1d: CachePort | None, l1c: CachePort, to_icnt: TimedQueue,
                 from_icnt: TimedQueue, partition_of: Callable[[int], int] | AddressMap) -> None:
        self.sm_id = sm_id
        self.p = params
        self.l1d = l1d
        self.l1c = l1c
        self.to_icnt = to_icnt
        self.from_icnt = from_icnt
        # an address map is asked directly (a compiled call; a bound method through a
        # Callable attribute is a generic call per request)
        self._amap: AddressMap | None = partition_of if isinstance(partition_of, AddressMap) else None
        self.partition_of: Callable[[int], int] = (partition_of.partition_of if isinstance(partition_of, AddressMap)
                                                   else partition_of)
        self.stats = SMStats()              # the SM lends its own record (attach)
        # (start cycle; warp, static instr, mem row, position in the warp's stream)
        self.queue = DueRing()
        self.requests: list[_Instr] = []  # plug-in requests waiting for the port (a list: native truth)
        self.request_queue_entries = 8
        self.cur: _Instr | None = None
        self.busy_until = 0                 # shared-memory replays occupy the unit
        self.smem_free = 0                  # first cycle the shared-memory banks are free
        self.paths = SubcorePaths(params)   # the sub-cores' paths into shared memory (issue stage)
        # cycles between a shared access's wavefronts in its result (the slower of path and banks)
        self.lat_wave = max(params.smem_wave_cycles, params.sub_wave_cycles)
        self.stalled = False
        self.inflight = 0                   # instructions waiting for miss data
        self.bypass: set[int] = set()       # kernel ids whose global accesses skip the L1
        self.bypass_global = False          # every global load skips the L1 (local ones stay cached)
        self.l1d_handlers: list[Callable[..., Any]] = []  # l1d_access subscribers
        # L1D accesses in its latency pipeline: (cycle of the tag lookup; instruction, line, sectors)
        self.l1pipe = DueRing()
        self._l1_banks = max(params.l1_banks, 1) if l1d is not None else 1
        self._l1_line = l1d.array.line_bytes if l1d is not None else 128
        # L1D requests waiting for the interconnect: (cycle they may leave, request)
        self.missq = DueRing()  # (a ring: native length and head reads)
        self.missq_cap = max(params.l1_miss_queue, 1)
        self._read_slots = 2 if l1d is not None and l1d.holds_dirty else 1
        # the L1D read last refused (the instruction, and the L1's version, miss-queue
        # length and line then) and the reason: a retry before any of them changed is
        # refused for the same reason without looking again
        self._refused: _Instr | None = None
        # ... at the L1D's version, miss-queue length and line (unboxed, not a tuple)
        self._refused_version = -1
        self._refused_q = -1
        self._refused_line = -1
        self._refused_why = ""
        self._wb_booked: set[int] = set()   # cycles the writeback register is taken (wb_register)

    # ------------------------------------------------------------ interface to the SM

    def attach(self, sm: SM, stats: SMStats) -> None:
        self.sm = sm
        self.stats = stats
        self._period = sm.domain.period_fs

    def can_accept(self) -> bool:
        return len(self.queue) < self.p.queue_entries

    def accept(self, warp: Any, si: StaticInstr, mem_row: int, start: int, pos: int) -> None:
        warp.inflight += 1  # until the unit has done with it (and its loads' data is back)
        self.queue.append(start, (warp, si, mem_row, pos))

    def busy(self) -> bool:
        return (len(self.queue) > 0 or self.cur is not None or self.inflight > 0 or bool(self.requests)
                or len(self.missq) > 0 or len(self.l1pipe) > 0)

    def next_event(self, now: int) -> int | None:
        missq = self.missq
        # the miss queue drains whatever else waits (a full interconnect queue wakes us when it frees)
        drain = (missq.head_due() if missq.head_due() > now else now + 1) if len(missq) else -1
        # a sub-core path freeing up lets its waiting shared access issue
        sub = self.paths.next_free(now) if self.p.sub_issue_cycles else -1
        if self.stalled:  # woken by the reply or queue slot it waits for
            if drain >= 0 and sub >= 0:
                return min(drain, sub)
            return drain if drain >= 0 else (sub if sub >= 0 else None)
        t = []
        if drain >= 0:
            t.append(drain)
        if sub >= 0:
            t.append(sub)
        if len(self.l1pipe):
            t.append(max(self.l1pipe.head_due(), now + 1))
        if self.requests:
            t.append(now + 1)
        if len(self.queue):
            t.append(max(self.queue.head_due(), now + 1))
        if self.cur is not None or self.busy_until > now:
            t.append(max(self.busy_until, now + 1))
        return min(t) if t else None

    # ------------------------------------------------------------ the cycle

    def tick(self, now: int) -> bool:
        progress = False
        missq = self.missq
        if len(missq) and missq.head_due() <= now:
            progress = self._drain_misses(now)
        if (self.cur is None and not len(self.queue) and not self.requests and not len(self.from_icnt)
                and not len(self.l1pipe)):
            self.stalled = False
            return progress
        sm_now = now * self._period
        # replies: one per cycle
        if self.from_icnt.ready(sm_now):
            self._reply(self.from_icnt.pop(), now)
            progress = True
        self.stalled = False
        pipe = self.l1pipe
        looked = 0
        # a tag lookup per bank and cycle at the pipeline's end (the accesses that entered
        # together never share a bank)
        while looked < self._l1_banks and len(pipe) and pipe.head_due() <= now:
            ins, line, mask = cast(tuple[_Instr, int, int], pipe.head())
            if self._lookup(ins, line, mask, now):
                pipe.popleft()
                progress = True
                looked += 1
            else:  # blocked until a fill or a free miss-queue slot (both wake the SM)
                self.stalled = True
                self.sm.note_stall(STALL_L1D_RESERVATION_FAIL)
                return progress
        if now < self.busy_until:
            return True
        if self.cur is None and self.requests:
            req = self.cur = self.requests.pop(0)
            req.ready = now
            progress = True
        if self.cur is None and len(self.queue) and self.queue.head_due() <= now:
            warp, si, row, pos = cast(tuple[Any, StaticInstr, int, int], self.queue.popleft())
            self.cur = self._decode(warp, si, row, now, pos)
            progress = True
            if self.cur is None:
                return True
        cur = self.cur
        if cur is None:
            return progress
        # one access a cycle; into a banked L1's pipeline, up to one per bank, in order
        # until one needs a bank already taken (GPGPU-Sim's l1_banks loop)
        banks = self._l1_banks if cur.cache is self.l1d and cur.kind != ATOMIC and self.p.l1_pipeline > 0 else 1
        used = 0
        taken = 0
        while taken < banks and cur.accesses:
            line, mask = cur.accesses[0]
            need = bank_mask(line, mask, banks, self._l1_line, self.p.l1_bank_sectors) if banks > 1 else 1
            if need & used:
                break
            if not self._access(cur, line, mask, now):
                if taken:
                    break
                # refused (MSHR, merge slots, set or request queue full): only a reply
                # or a freed queue slot can change that, and both wake the SM
                self.stalled = True
                self.sm.note_stall(STALL_L1D_RESERVATION_FAIL)
                return progress
            cur.accesses.pop(0)
            progress = True
            used |= need
            taken += 1
        if not cur.accesses:
            self.cur = None
            if cur.outstanding == 0:
                self._finish(cur, now)
            else:
                self.inflight += 1
        return True

    # ------------------------------------------------------------ helpers

    def _decode(self, warp: Warp, si: StaticInstr, row: int, now: int, pos: int) -> _Instr | None:
        if row < 0:  # no lane executed the access (all guards false)
            self._done_one(warp, now)
            return None
        rows = warp.mem_rows
        space = rows.space[row]
        dst = si.dst_mask
        if space == _SHARED:
            p = self.p
            atomic = si.is_atomic and p.atomic_serialize
            degree = shared_degree(rows, row, atomic)
            start = now if self.smem_free <= now else self.smem_free  # banks reserved by a plug-in
            if si.cas_loop and atomic:
                # a compare-and-swap loop: one round per lane on the busiest word (each round
                # one lane of every word wins), each round's load (one wavefront) and
                # compare-and-swap (the lanes still losing) in the banks; the warp waits on its
                # exit (StaticKernel.loop_bit), each round's extra wavefronts delaying the next
                rounds = max(rows.word_lanes[row], 1)
                cas = cas_waves(degree, rounds)
                self.stats.smem_accesses += 2 * rounds
                self.stats.smem_bank_conflict_cycles += (cas - rounds) * p.smem_wave_cycles
                self.busy_until = self.smem_free = start + (rounds + cas) * p.smem_wave_cycles
                self.sm.complete(warp, si, start + (cas - rounds) * self.lat_wave + rounds * p.cas_round_cycles,
                                 True, pos)
                self._done_one(warp, now)
                return None
            self.stats.smem_accesses += 1
            self.stats.smem_bank_conflict_cycles += (degree - 1) * p.smem_wave_cycles
            waves = degree * p.smem_wave_cycles
            self.busy_until = self.smem_free = start + waves
            # the wavefronts after the first, at the pace of the slower of banks and sub-core path
            later = (degree - 1) * self.lat_wave
            if dst:  # after the bank cycles, the smem pipeline and the unit's writeback stages
                t = start + p.smem_latency + later + SMEM_WRITEBACK_STAGES
                self.sm.complete(warp, si, self._book_wb(t, now) if p.wb_register else t, True, pos)
            self._done_one(warp, now)
            return None
        accesses = rows.accesses(row)
        if space == _LOCAL:  # the trace's CTA-relative lines, placed for this CTA's SM and slot
            p = self.p
            tp = warp.run.trace.warps_per_cta * 32
            slot = warp.cta.slot
            accesses = [(placed_line(line, tp, self.sm_id, slot, p.n_sms, p.cta_slots), mask)
                        for line, mask in accesses]
        kind = ATOMIC if si.is_atomic else (WRITE if si.is_store else READ)
        if space == _CONST or space == _KPARAM:
            cache = self.l1c
        elif (self.bypass and warp.run.kid in self.bypass) or (self.bypass_global and space != _LOCAL):
            cache = None
        else:
            cache = self.l1d
        ins = _Instr(warp, 0 if kind == WRITE else dst, accesses, kind, cache, si, pos)
        ins.ready = now
        ins.local = space == _LOCAL
        if not accesses:
            if ins.dst:
                self.sm.complete(warp, si, now + 1, True, pos)
            self._done_one(warp, now)
            return None
        return ins

    def _send(self, kind: str, line: int, mask: int, token: Any, now: int) -> bool:
        if not self.to_icnt.can_push():
            return False
        t = now * self._period
        req = MemRequest(kind, line, mask, self.sm_id, self._partition(line), token, t)
        self.to_icnt.push(req, t)
        self.stats.mem_requests += 1
        return True

    def _partition(self, line: int) -> int:
        amap = self._amap
        return amap.partition_of(line) if amap is not None else self.partition_of(line)

    def _missq_room(self) -> bool:
        return len(self.missq) < self.missq_cap

    def _missq_room_read(self) -> bool:
        """Room for a read miss: its request and, where the L1 can hold dirty lines, a
        victim's writeback (GPGPU-Sim checks miss_queue_full(1) before every read miss)."""
        return len(self.missq) + self._read_slots <= self.missq_cap

    def _send_l1(self, kind: str, line: int, mask: int, token: Any, now: int, ack: bool = True) -> bool:
        """A request from the L1 data cache into its miss queue (False when that is full);
        it leaves for the interconnect from the next cycle, when there is room. `ack`
        False: a dirty line's writeback, which the L2 does not acknowledge."""
        if len(self.missq) >= self.missq_cap:
            return False
        req = MemRequest(kind, line, mask, self.sm_id, self._partition(line), token, now * self._period)
        if not ack:
            req.ack = False
        self.missq.append(now + 1, req)
        return True

    def _drain_misses(self, now: int) -> bool:
        """Move the miss queue's head into the interconnect if it has room (one a cycle,
        as GPGPU-Sim's L1 cycle())."""
        out = self.to_icnt
        if not out.can_push():
            return False
        req = cast(MemRequest, self.missq.popleft())
        out.push(req, now * self._period)
        self.stats.mem_requests += 1
        return True

    def _access(self, ins: _Instr, line: int, mask: int, now: int) -> bool:
        """Perform (or start) one line access; False when it must be retried."""
        kind = ins.kind
        if ins.cache is not None and ins.cache is self.l1d and kind != ATOMIC and self.p.l1_pipeline > 0:
            # into the L1's latency pipeline; the lookup happens at its end (_lookup)
            if len(self.l1pipe) >= self.p.l1_pipeline * self._l1_banks:
                return False
            self.l1pipe.append(now + self.p.l1_pipeline, (ins, line, mask))
            ins.outstanding += 1  # (a store's until it has left for the L2: its warp is not done before)
            return True
        return self._lookup(ins, line, mask, now)

    def _lookup(self, ins: _Instr, line: int, mask: int, now: int) -> bool:
        """The access at its cache (after the L1 pipeline for the L1D); False when it
        must be retried (reservation fail or a full queue)."""
        kind = ins.kind
        piped = ins.cache is self.l1d and self.p.l1_pipeline > 0
        if kind == WRITE:
            # a warp's store is acknowledged by the L2; a plug-in's is not tracked
            ack = ("ack", ins.warp) if ins.warp is not None else None
            if ins.cache is not None:
                if not self._missq_room():
                    return False
                st = self.stats
                st.l1d_writes += 1
                if ins.cache.write(line, mask, ins.local, now) == WRITE_ABSORBED:
                    # a write-back hit: the line keeps it and the store is done here
                    # (GPGPU-Sim acknowledges it as it leaves the L1's latency queue)
                    st.l1d_write_hits += 1
                    if piped:
                        ins.outstanding -= 1
                        self._settle(ins, now)
                    return True
                sent = self._send_l1(WRITE, line, mask, ack, now)
            else:
                sent = self._send(WRITE, line, mask, ack, now)
            if sent:
                if ack is not None:
                    ins.warp.inflight += sector_requests(mask) if self.p.sector_write_acks else 1
                if piped:
                    ins.outstanding -= 1
                    self._settle(ins, now)
            return sent
        if kind == ATOMIC:
            if not self._send(ATOMIC, line, mask, ins, now):
                return False
            ins.outstanding += 1
            return True
        cache = ins.cache
        if cache is None:  # no L1: every read goes to L2
            if not self._send(READ, line, mask, ins, now):
                return False
            ins.outstanding += 1
            return True
        const = cache is self.l1c
        if (cache is self.l1d and self._refused is ins and self._refused_version == cache.version
                and self._refused_q == len(self.missq) and self._refused_line == line):
            # retried with nothing changed that could let it through: refused again
            cache.stats.count_fail(self._refused_why)
            if self.l1d_handlers and ins.warp is not None:
                for h in self.l1d_handlers:
                    h(ins.warp.view, line, "fail", -1, now)
            return False
        if const:  # (the interconnect queue's can_push counts a refusal: asked only if a miss needs it)
            outcome, value = cache.read(line, mask, ins, now, self.to_icnt.can_push)
        else:  # (the miss queue's room, known now)
            outcome, value = cache.read(line, mask, ins, now, None, self._missq_room_read())
        if outcome == "fail" and cache is self.l1d:
            self._refused = ins
            self._refused_version = cache.version
            self._refused_q = len(self.missq)
            self._refused_line = line
            self._refused_why = cache.last_refusal
        if self.l1d_handlers and cache is self.l1d and ins.warp is not None:
            evicted = cache.last_evicted if outcome == "miss" else -1
            for h in self.l1d_handlers:
                h(ins.warp.view, line, outcome, evicted, now)
        st = self.stats
        if outcome != "fail":
            if const:
                st.l1c_accesses += 1
            else:
                st.l1d_accesses += 1
        if outcome == "hit":
            if not const:
                st.l1d_hits += 1
            if piped:  # the pipeline was the hit latency: the data is ready now
                ins.outstanding -= 1
                if now > ins.ready:
                    ins.ready = now
                self._settle(ins, now)
            elif value > ins.ready:
                ins.ready = value
            return True
        if outcome == "merged":
            if not const:
                st.l1d_pending_hits += 1
            if not piped:  # (a piped access holds its count until the fill)
                ins.outstanding += 1
            return True
        if outcome == "miss":
            if const:
                st.l1c_misses += 1
            else:
                st.l1d_misses += 1
            ok = (self._send(READ, line, value, ("fill", cache, line), now) if const
                  else self._send_l1(READ, line, value, ("fill", cache, line), now))
            assert ok, "CachePort.read reports a miss only when the queue has room"
            wb_line, wb_mask = cache.last_writeback
            if wb_line >= 0:  # the victim was dirty: its writeback follows the read (rd_miss_base)
                ok = self._send_l1(WRITE, wb_line, wb_mask, None, now, ack=False)
                assert ok, "a read miss keeps room for its victim's writeback"
                st.l1d_writebacks += 1
            if not piped:
                ins.outstanding += 1
            return True
        return False  # "fail": set, MSHR, merge or queue full

    def _reply(self, req: MemRequest, now: int) -> None:
        token = req.token
        # (typed str: compared natively, not through the generic object protocol)
        kind = cast(str, token[0]) if isinstance(token, tuple) else ""
        ifill = kind == "ifill" or kind == "ipf"
        if req.t_l2 >= 0 and not ifill:  # a data reply or store acknowledgement from an L2 slice
            n = popcount(req.sector_mask) or 1
            st = self.stats
            st.mem_latency_sector_cycles += (now * self._period - req.t_l2) // self._period * n
            st.mem_latency_sectors += n
        if req.parts > 1 and not self._gather(req):
            return
        if ifill:  # an instruction line for the fetch stage
            if kind == "ipf":  # the prefetcher's
                self.sm.fetch.prefetched(token[2])
                return
            cache = cast(CachePort, token[1])
            self.sm.fetch.arrived(cache.fill(token[2], req.sector_mask, now))
            return
        if kind == "fill":
            cache = cast(CachePort, token[1])
            for ins in cache.fill(token[2], req.sector_mask, now):
                self._arrived(ins, now)
        elif kind == "ack":  # a store's acknowledgment
            self._done_one(token[1], now)
        elif token is not None:
            self._arrived(token, now)

    def _gather(self, req: MemRequest) -> bool:
        """One of the sector replies the L2 split a read's reply into
        (`l2.sector_replies`): False until the last of them, which then carries every
        sector the pieces brought (the requester uses the data once all are back, as
        GPGPU-Sim's sector MSHR waits for its pending_read count)."""
        g = req.group
        if g is None:  # the first reply of the split counts for them all
            g = req
        g.got += 1
        g.got_mask |= req.sector_mask
        if g.got < req.parts:
            return False
        req.sector_mask = g.got_mask
        return True

    def _arrived(self, ins: _Instr, now: int) -> None:
        ins.outstanding -= 1
        # a plug-in's request (no warp) writes no register: it does not take the register
        t = (self._book_wb(now + SMEM_WRITEBACK_STAGES, now) if self.p.wb_register and ins.warp is not None
             else now + 1)
        if t > ins.ready:
            ins.ready = t
        self._settle(ins, now)

    def _book_wb(self, t: int, now: int) -> int:
        """The cycle a result due at `t` is written through the unit's writeback
        register: the first cycle from `t` on that no other result holds it (GPGPU-Sim's
        m_next_wb takes one result a cycle, shared memory's and the L1's alike)."""
        booked = self._wb_booked
        while t in booked:
            t += 1
        booked.add(t)
        if len(booked) > 64:  # forget the cycles already past
            self._wb_booked = {c for c in booked if c >= now}
        return t

    def _settle(self, ins: _Instr, now: int) -> None:
        """Finish an instruction that has issued every access and has none outstanding."""
        if ins.outstanding == 0 and not ins.accesses and ins is not self.cur:
            self.inflight -= 1
            self._finish(ins, now)

    def _finish(self, ins: _Instr, now: int) -> None:
        if ins.callback is not None:
            ins.callback(max(ins.ready, now + 1) if ins.kind != WRITE else now)
            return
        if ins.dst:
            self.sm.complete(ins.warp, ins.si, max(ins.ready, now + 1), True, ins.pos)
        self._done_one(ins.warp, now)

    def _done_one(self, w: Any, now: int) -> None:
        """One of warp `w`'s outstanding memory operations completed."""
        w.inflight -= 1
        if w.done and not w.inflight:
            self.sm.slots.drained(w, now)

    # ------------------------------------------------------------ plug-in access to the port

    def send_fetch(self, line: int, mask: int, l1i: CachePort, now: int, prefetch: bool = False) -> None:
        """An instruction-cache miss, or the prefetcher's request: the line from L2
        (the caller checked that the request queue has room)."""
        ok = self._send(READ, line, mask, ("ipf" if prefetch else "ifill", l1i, line), now)
        assert ok, "instruction lines are requested only when the queue has room"
        self.stats.ifetch_requests += 1
        if prefetch:
            self.stats.ifetch_prefetches += 1

    def can_request(self) -> bool:
        return len(self.requests) < self.request_queue_entries

    def request(self, kind: str, address: int, nbytes: int, callback: Callable[[int], Any] | None,
                cached: bool = True) -> None:
        """Queue a plug-in's load/store of `nbytes` at `address` (any alignment): one
        access per 128-byte line, through the L1 data cache unless `cached` is False.
        `callback(cycle)` runs when a load's last data is usable or a store's last
        line has been sent."""
        if kind not in (READ, WRITE):
            raise ValueError(f"memory request kind must be '{READ}' or '{WRITE}', not {kind!r}")
        if nbytes <= 0:
            raise ValueError(f"memory request of {nbytes} bytes")
        lines: dict[int, int] = {}
        for s in range(address >> 5, (address + nbytes - 1 >> 5) + 1):
            lines[s >> 2] = lines.get(s >> 2, 0) | (1 << (s & 3))
        accesses = [(line << 7, mask) for line, mask in sorted(lines.items())]
        cache = self.l1d if cached else None
        ins = _Instr(None, 0, accesses, kind, cache, None, -1, callback if callback is not None else _ignore)
        self.requests.append(ins)

    def reserve_port(self, now: int, cycles: int) -> int:
        """Take the L1 port (the unit's access pipeline) for `cycles` cycles from when it
        is free; returns the cycle it is released."""
        start = now if self.busy_until <= now else self.busy_until
        self.busy_until = start + cycles
        return start + cycles

    def reserve_smem(self, now: int, cycles: int) -> int:
        """Take the shared-memory banks for `cycles` cycles from the first free cycle
        (not before now); returns the cycle the access completes."""
        start = now if self.smem_free <= now else self.smem_free
        self.smem_free = start + cycles
        return start + cycles


def _ignore(cycle: int) -> None:
    """Completion callback of a request nobody waits for."""
