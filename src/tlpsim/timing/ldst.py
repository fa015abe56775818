"""The LD/ST unit: shared memory with bank-conflict serialisation, the L1 data and
constant caches with MSHRs, and the SM's port to the interconnect.

One memory warp-instruction is processed at a time; it becomes a list of accesses
(one per 128-byte line touched, from the trace's coalesced sector sets), and the
unit performs one access per cycle. Plug-ins issue their own requests through the
same port (register spills and fills, preloads, context saves: `request`), which go
ahead of waiting warp instructions, and reserve shared-memory bank cycles
(`reserve_smem`), which shared-memory instructions then wait for. A read hit completes after the cache's hit
latency; a miss takes an MSHR (or merges into one) and sends a request; a refused
access (MSHR or queue full) is retried next cycle — a reservation failure, which
stalls the unit. The instruction's destination registers are written back when
its last access has its data.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE, MemRequest
from tlpsim.timing.queues import TimedQueue
from tlpsim.timing.static import StaticInstr
from tlpsim.timing.stats import SMStats

if TYPE_CHECKING:
    from tlpsim.timing.sm import SM
    from tlpsim.timing.warp import Warp
from tlpsim.trace.format import SPACE_CODES

_SHARED: Final[int] = SPACE_CODES["shared"]
_LOCAL: Final[int] = SPACE_CODES["local"]
_CONSTLIKE = (SPACE_CODES["const"], SPACE_CODES["kparam"])


@dataclass
class LdstParams:
    smem_latency: int = 26
    queue_entries: int = 2   # memory instructions waiting for the unit
    # requests leaving through the L1 data cache (misses, write-throughs) pass its
    # latency pipeline (GPGPU-Sim's l1_latency_queue, before the tag lookup there) and
    # its miss queue before the interconnect; -1: the L1D's hit latency
    l1_pipeline: int = 0
    l1_miss_queue: int = 8


class _Instr:
    """A memory warp-instruction in flight."""

    __slots__ = (
        "accesses",
        "cache",
        "callback",
        "dst",
        "issued",
        "kind",
        "outstanding",
        "pos",
        "ready",
        "si",
        "warp",
    )

    def __init__(self, warp: Any, dst: int, accesses: list[tuple[int, int]], kind: str, cache: CachePort | None,
                 si: StaticInstr | None, pos: int = -1, callback: Callable[[int], Any] | None = None) -> None:
        self.warp = warp
        self.si = si                  # the static instruction (its destinations are written back)
        self.pos = pos                # its position in the warp's stream
        self.callback = callback      # a plug-in request: called with the cycle its data is usable
        self.dst = dst
        self.accesses = accesses      # [(line address, sector mask)] still to perform
        self.outstanding = 0          # misses whose data has not arrived
        self.ready = 0                # cycle by which every completed access has its data
        self.kind = kind
        self.cache = cache
        self.issued = False


class LdstUnit:
    sm: SM          # the SM it serves (attach)
    _period: int    # its core clock period (fs)

    def __init__(self, sm_id: int, params: LdstParams, l1d: CachePort | None, l1c: CachePort, to_icnt: TimedQueue,
                 from_icnt: TimedQueue, partition_of: Callable[[int], int]) -> None:
        self.sm_id = sm_id
        self.p = params
        self.l1d = l1d
        self.l1c = l1c
        self.to_icnt = to_icnt
        self.from_icnt = from_icnt
        self.partition_of = partition_of
        self.stats = SMStats()              # the SM lends its own record (attach)
        # (start cycle, warp, static instr, mem row, position in the warp's stream)
        self.queue: deque[tuple[int, Any, StaticInstr, int, int]] = deque()
        self.requests: deque[_Instr] = deque()  # plug-in requests waiting for the port
        self.request_queue_entries = 8
        self.cur: _Instr | None = None
        self.busy_until = 0                 # shared-memory replays occupy the unit
        self.smem_free = 0                  # first cycle the shared-memory banks are free
        self.stalled = False
        self.inflight = 0                   # instructions waiting for miss data
        self.bypass: set[int] = set()       # kernel ids whose global accesses skip the L1
        self.bypass_global = False          # every global load skips the L1 (local ones stay cached)
        self.l1d_handlers: list[Callable[..., Any]] = []  # l1d_access subscribers
        # L1D requests on their way to the interconnect: (cycle they may leave, request)
        self.missq: deque[tuple[int, MemRequest]] = deque()
        self.missq_cap = max(params.l1_pipeline + params.l1_miss_queue, 1)

    # ------------------------------------------------------------ interface to the SM

    def attach(self, sm: SM, stats: SMStats) -> None:
        self.sm = sm
        self.stats = stats
        self._period = sm.domain.period_fs

    def can_accept(self) -> bool:
        return len(self.queue) < self.p.queue_entries

    def accept(self, warp: Any, si: StaticInstr, mem_row: int, start: int, pos: int) -> None:
        self.queue.append((start, warp, si, mem_row, pos))

    def busy(self) -> bool:
        return (bool(self.queue) or self.cur is not None or self.inflight > 0 or bool(self.requests)
                or bool(self.missq))

    def next_event(self, now: int) -> int | None:
        if self.stalled:
            return None  # woken by the reply or queue slot it waits for
        t = []
        if self.missq and self.missq[0][0] > now:
            t.append(self.missq[0][0])   # (a due head waits for queue room: the freed slot wakes us)
        if self.requests:
            t.append(now + 1)
        if self.queue:
            t.append(max(self.queue[0][0], now + 1))
        if self.cur is not None or self.busy_until > now:
            t.append(max(self.busy_until, now + 1))
        return min(t) if t else None

    # ------------------------------------------------------------ the cycle

    def tick(self, now: int) -> bool:
        progress = False
        missq = self.missq
        if missq and missq[0][0] <= now:
            progress = self._drain_misses(now)
        if self.cur is None and not self.queue and not self.requests and not len(self.from_icnt):
            self.stalled = False
            return progress
        sm_now = now * self._period
        # replies: one per cycle
        if self.from_icnt.ready(sm_now):
            self._reply(self.from_icnt.pop(), now)
            progress = True
        self.stalled = False
        if now < self.busy_until:
            return True
        if self.cur is None and self.requests:
            req = self.cur = self.requests.popleft()
            req.ready = now
            progress = True
        if self.cur is None and self.queue and self.queue[0][0] <= now:
            start, warp, si, row, pos = self.queue.popleft()
            self.cur = self._decode(warp, si, row, now, pos)
            progress = True
            if self.cur is None:
                return True
        cur = self.cur
        if cur is None:
            return progress
        if cur.accesses:
            line, mask = cur.accesses[0]
            if self._access(cur, line, mask, now):
                cur.accesses.pop(0)
                progress = True
            else:
                # refused (MSHR, merge slots, set or request queue full): only a reply
                # or a freed queue slot can change that, and both wake the SM
                self.stalled = True
                self.sm.note_stall("l1d_reservation_fail")
                return progress
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
            return None
        rows = warp.mem_rows
        space = rows.space[row]
        dst = si.dst_mask
        if space == _SHARED:
            degree = max(rows.bank_degree[row], 1)
            self.stats.smem_accesses += 1
            self.stats.smem_bank_conflict_cycles += degree - 1
            start = now if self.smem_free <= now else self.smem_free  # banks reserved by a plug-in
            self.busy_until = self.smem_free = start + degree
            if dst:
                self.sm.complete(warp, si, start + self.p.smem_latency + degree - 1, True, pos)
            return None
        lines: dict[int, int] = {}
        for s in rows.sectors_of(row):
            lines[s >> 2] = lines.get(s >> 2, 0) | (1 << (s & 3))
        accesses = [(line << 7, mask) for line, mask in sorted(lines.items())]
        kind = ATOMIC if si.is_atomic else (WRITE if si.is_store else READ)
        if space in _CONSTLIKE:
            cache = self.l1c
        elif (self.bypass and warp.run.kid in self.bypass) or (self.bypass_global and space != _LOCAL):
            cache = None
        else:
            cache = self.l1d
        ins = _Instr(warp, 0 if kind == WRITE else dst, accesses, kind, cache, si, pos)
        ins.ready = now
        if not accesses:
            if ins.dst:
                self.sm.complete(warp, si, now + 1, True, pos)
            return None
        return ins

    def _send(self, kind: str, line: int, mask: int, token: Any, now: int) -> bool:
        if not self.to_icnt.can_push():
            return False
        t = now * self._period
        req = MemRequest(kind, line, mask, self.sm_id, self.partition_of(line), token, t)
        self.to_icnt.push(req, t)
        self.stats.mem_requests += 1
        return True

    def _missq_room(self) -> bool:
        return len(self.missq) < self.missq_cap

    def _send_l1(self, kind: str, line: int, mask: int, token: Any, now: int) -> bool:
        """A request from the L1 data cache: it leaves after the L1's latency pipeline,
        through the miss queue (False when that is full)."""
        if len(self.missq) >= self.missq_cap:
            return False
        leave = now + self.p.l1_pipeline
        req = MemRequest(kind, line, mask, self.sm_id, self.partition_of(line), token, leave * self._period)
        self.missq.append((leave, req))
        return True

    def _drain_misses(self, now: int) -> bool:
        """Move the miss queue's due requests into the interconnect while it has room."""
        missq, out = self.missq, self.to_icnt
        moved = False
        while missq and missq[0][0] <= now and out.can_push():
            _, req = missq.popleft()
            out.push(req, now * self._period)
            self.stats.mem_requests += 1
            moved = True
        return moved

    def _access(self, ins: _Instr, line: int, mask: int, now: int) -> bool:
        """Perform one line access; False when it must be retried (reservation fail)."""
        kind = ins.kind
        if kind == WRITE:
            if ins.cache is not None:
                ins.cache.write(line, mask, now)
                return self._send_l1(WRITE, line, mask, None, now)
            return self._send(WRITE, line, mask, None, now)
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
        outcome, value = cache.read(line, mask, ins, now,
                                    can_send=self.to_icnt.can_push if const else self._missq_room)
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
            ins.ready = max(ins.ready, value)
            return True
        if outcome == "merged":
            if not const:
                st.l1d_pending_hits += 1
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
            ins.outstanding += 1
            return True
        return False  # "fail": set, MSHR, merge or queue full

    def _reply(self, req: MemRequest, now: int) -> None:
        token = req.token
        if isinstance(token, tuple) and token[0] == "fill":
            cache = cast(CachePort, token[1])
            for ins in cache.fill(token[2], req.sector_mask, now):
                self._arrived(ins, now)
        elif isinstance(token, tuple) and token[0] == "ifill":  # an instruction line for the fetch stage
            cache = cast(CachePort, token[1])
            self.sm.fetch.arrived(cache.fill(token[2], req.sector_mask, now))
        elif token is not None:
            self._arrived(token, now)

    def _arrived(self, ins: _Instr, now: int) -> None:
        ins.outstanding -= 1
        ins.ready = max(ins.ready, now + 1)
        if ins.outstanding == 0 and not ins.accesses and ins is not self.cur:
            self.inflight -= 1
            self._finish(ins, now)

    def _finish(self, ins: _Instr, now: int) -> None:
        if ins.callback is not None:
            ins.callback(max(ins.ready, now + 1) if ins.kind != WRITE else now)
        elif ins.dst:
            self.sm.complete(ins.warp, ins.si, max(ins.ready, now + 1), True, ins.pos)

    # ------------------------------------------------------------ plug-in access to the port

    def send_fetch(self, line: int, mask: int, l1i: CachePort, now: int) -> None:
        """An instruction-cache miss: request the line from L2 (the caller checked
        that the request queue has room)."""
        ok = self._send(READ, line, mask, ("ifill", l1i, line), now)
        assert ok, "CachePort.read reports a miss only when the queue has room"
        self.stats.ifetch_requests += 1

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
