"""A streaming multiprocessor: wires fetch, scoreboard, warp schedulers, operand
storage, execution pipelines and the LD/ST unit, and owns warp and CTA slots.

Per cycle, in reverse pipeline order so a result is not consumed in the cycle it
is produced: writebacks due now release scoreboard bits; the LD/ST unit advances
one access; each scheduler issues at most one instruction from its ready warps;
one warp's instruction buffer is refilled. Work is proportional to events: ready
warps are kept in per-scheduler sets, writebacks in a heap, and an SM with nothing
to do sleeps until its next writeback, a freed unit, or a memory reply.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, cast

import numpy as np

from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.ldst import LdstUnit
from tlpsim.timing.regbanks import RegisterBanks
from tlpsim.timing.static import (
    DP,
    K_ALU,
    K_BAR,
    K_BRANCH,
    K_EXIT,
    K_MEM,
    K_NOP,
    LDST,
    SFU,
    SP,
    StaticInstr,
)
from tlpsim.timing.stats import ACTIVE, CORE_STALL, IDLE, MEM_STALL, SMStats
from tlpsim.timing.warp import CTA, Warp


class SMParams:
    """The SM numbers the core model needs (taken from the typed config by the GPU)."""

    def __init__(self, *, max_warps: int = 48, max_ctas: int = 8, n_schedulers: int = 2, ibuf_entries: int = 2,
                 units: dict[str, int] | None = None, l1d: Any = None) -> None:
        self.max_warps = max_warps
        self.max_ctas = max_ctas
        self.n_schedulers = n_schedulers
        self.ibuf_entries = ibuf_entries
        # pipelines per class (GTX480: 2 SP, 1 SFU; DP ops issue to the SP pipes with their own latency)
        self.units = units or {SP: 2, SFU: 1, DP: 1}
        self.aliases: dict[str, str] = {}  # pipeline class -> the class whose units run it (e.g. dp -> sfu)


class SM(Component):
    name = "sm"

    def __init__(self, sm_id: int, domain: ClockDomain, params: SMParams, schedulers: list[Any], operands: Any,
                 allocator: Any, ldst: LdstUnit, on_cta_done: Callable[[SM, Any, int], None]) -> None:
        super().__init__(domain)
        self.id = sm_id
        self.p = params
        self.policies: list[Any] = schedulers  # one WarpScheduler policy per scheduler unit
        self.operands = operands            # OperandStorage
        # an operand storage that is exactly the compiled register banks lends them so
        # the issue path calls them natively (same methods, no Python-level call)
        banks = getattr(operands, "compiled_banks", None)
        self._banks: RegisterBanks | None = banks if isinstance(banks, RegisterBanks) else None
        self.allocator = allocator          # ResourceAllocator
        self.ldst = ldst                    # LdstUnit
        self.stats = SMStats()
        ldst.attach(self, self.stats)
        self.on_cta_done = on_cta_done
        self.warps: list[Warp | None] = [None] * params.max_warps
        self.ctas: list[CTA | None] = [None] * params.max_ctas
        self.n_warps = 0
        self.n_ctas = 0
        self.ready: list[set[int]] = [set() for _ in range(params.n_schedulers)]
        # the ready warps whose next instruction is a memory instruction: when the LD/ST
        # unit is full and these are all there is, a scheduler knows it cannot issue
        self.ready_mem: list[set[int]] = [set() for _ in range(params.n_schedulers)]
        self.fetchq: deque[int] = deque()
        self.wb: list[tuple[int, int, Warp, StaticInstr, int]] = []  # (cycle, seq, warp, static instr, from_mem): warp objects, so reused slots are safe
        self.seq = 0
        self.unit_free: dict[str, list[int]] = {u: [0] * n for u, n in params.units.items()}
        for u, target in params.aliases.items():
            self.unit_free[u] = self.unit_free[target]
        self.last_class = IDLE
        self.last_stalls: list[str] = []  # stall reasons met in the last ticked cycle (repeats count)
        self.age = 0
        self.incoming: deque[tuple[int, Any, int, Any]] = deque()  # (cycle, run, cta index, grant) of CTAs arriving
        self._stalls: list[str] = []     # stall reasons met in the current tick
        self.n_mem_blocked = 0           # warps whose next instruction waits on a memory load
        # earliest free cycle of each pipeline class, kept with unit_free so a scheduler
        # checks availability with one lookup (aliased classes share a cell, as they
        # share their unit list)
        cells: dict[int, list[int]] = {}
        self.unit_next: dict[str, list[int]] = {u: cells.setdefault(id(frees), [0]) for u, frees in self.unit_free.items()}
        self.unit_next_sp = SP if SP in self.unit_next else next(iter(self.unit_next))
        # issued instructions per pc of finished warps, id(static kernel) -> (static, counts):
        # collect() derives opclass_insts and unit_ops from them (no per-issue dict updates)
        self.pc_counts: dict[int, tuple] = {}

    def collect(self) -> dict:
        """The SM's counters, with those its parts keep (operand storage) folded in."""
        st = self.stats
        ops = self.operands.stats
        st.rf_reads, st.rf_writes = ops.reads, ops.writes
        st.rf_bank_conflicts, st.collector_full = ops.bank_conflict_cycles, ops.collector_full
        st.l1d_reservation_fails = st.stall_reasons.get("l1d_reservation_fail", 0)
        opclass: dict[str, int] = {}
        units: dict[str, int] = {}
        for static, counts in self.pc_counts.values():
            instrs = static.instrs
            for pc in counts.nonzero()[0].tolist():
                si, c = instrs[pc], int(counts[pc])
                opclass[si.opclass] = opclass.get(si.opclass, 0) + c
                if si.kind != K_BAR and si.kind != K_EXIT:
                    units[si.unit] = units.get(si.unit, 0) + c
        st.opclass_insts, st.unit_ops = opclass, units
        return st.to_dict()

    def part_counters(self) -> dict:
        """Counters the SM's parts keep outside SMStats (operand storage, L1 data and
        constant caches), for the energy model; snapshotted with collect() so a launch
        sees its own deltas."""
        ldst = self.ldst
        return {"ops": asdict(self.operands.stats),
                "l1d": ldst.l1d.stats.to_dict() if ldst.l1d is not None else {},
                "l1c": ldst.l1c.stats.to_dict() if ldst.l1c is not None else {}}

    # ------------------------------------------------------------ CTA management

    def can_accept(self, run: Any) -> bool:
        return self.n_ctas + len(self.incoming) < self.p.max_ctas and self.allocator.fits(run.kres)

    def launch_cta(self, run: Any, index: int, now: int) -> None:
        """Accept a CTA from the dispatcher: resources are granted now, the CTA becomes
        resident at the next cycle (so when in a cycle the dispatcher ticks does not matter)."""
        grant = self.allocator.allocate(run.kres)
        self.incoming.append((now + 1, run, index, grant))
        self.wake_at(now + 1)

    def _admit(self, now: int) -> None:
        while self.incoming and self.incoming[0][0] <= now:
            _, run, index, grant = self.incoming.popleft()
            slot = self.ctas.index(None)
            cta = CTA(slot, run, index)
            cta.alloc = grant
            self.ctas[slot] = cta
            self.n_ctas += 1
            wpc = run.trace.warps_per_cta
            for k in range(wpc):
                ws = self.warps.index(None)
                w = Warp(ws, ws % self.p.n_schedulers, cta, run, index * wpc + k, self.age)
                self.age += 1
                self.warps[ws] = w
                self.n_warps += 1
                cta.warps.append(w)
                if not w.done:
                    cta.live += 1
                    self._want_fetch(w)
            if cta.live == 0:
                self._retire_cta(cta, now)

    def _retire_cta(self, cta: CTA, now: int) -> None:
        for w in cta.warps:
            self.warps[w.slot] = None
            self.n_warps -= 1
        self.ctas[cta.slot] = None
        self.n_ctas -= 1
        self.allocator.release(cta.alloc)
        self.stats.ctas_done += 1
        cta.run.ctas_done += 1
        self.on_cta_done(self, cta.run, now)

    # ------------------------------------------------------------ readiness

    def _want_fetch(self, w: Warp) -> None:
        if not w.in_fetch and not w.done and w.ibuf == 0 and w.pos < w.n:
            w.in_fetch = True
            self.fetchq.append(w.slot)

    def _update_ready(self, w: Warp) -> None:
        rs = self.ready[w.sched]
        rm = self.ready_mem[w.sched]
        was = w.mem_blocked
        if w.done or w.at_barrier or w.ibuf == 0:
            rs.discard(w.slot)
            rm.discard(w.slot)
            now_blocked = False
        else:
            si = w.instrs[w.pcs[w.pos]]
            block = w.pending & (si.src_mask | si.dst_mask)
            if block:
                rs.discard(w.slot)
                rm.discard(w.slot)
                now_blocked = bool(block & w.pending_mem)
            else:
                w.si = si
                rs.add(w.slot)
                if si.kind == K_MEM:
                    rm.add(w.slot)
                else:
                    rm.discard(w.slot)
                now_blocked = False
        if now_blocked != was:
            w.mem_blocked = now_blocked
            self.n_mem_blocked += 1 if now_blocked else -1

    def waiting_on(self, w: Warp) -> str:
        """What a resident, unfinished warp waits for (deadlock reports)."""
        if w.at_barrier:
            return "barrier"
        if w.ibuf == 0:
            return "instruction fetch"
        if w.slot in self.ready[w.sched]:
            return "the warp scheduler (ready, not chosen)"
        return "memory" if w.pending_mem else "scoreboard"

    def note_stall(self, reason: str) -> None:
        """A part of the SM (the LD/ST unit) could not proceed this cycle."""
        self._stalls.append(reason)

    def complete(self, w: Warp, si: StaticInstr, cycle: int, from_mem: bool) -> None:
        """Schedule the writeback of instruction `si`'s destinations for warp `w` at
        `cycle` (called by the pipelines at issue and by the LD/ST unit when data arrives)."""
        self.seq += 1
        heapq.heappush(self.wb, (cycle, self.seq, w, si, int(from_mem)))
        # no timer here: this runs inside the SM's own tick, and an SM that goes
        # to sleep sets one for its earliest writeback

    # ------------------------------------------------------------ the cycle

    def busy(self) -> bool:
        return self.n_warps > 0 or bool(self.wb) or self.ldst.busy() or bool(self.incoming)

    def tick(self, now: int) -> bool:
        progress = False
        if self.incoming:
            self._admit(now)
        st = self.stats
        stalls = self._stalls = []
        # 1. writebacks due
        wb = self.wb
        if wb and wb[0][0] <= now:
            warps, write, banks = self.warps, self.operands.write, self._banks
            while wb and wb[0][0] <= now:
                _, _, w, si, from_mem = heapq.heappop(wb)
                if w.done and warps[w.slot] is not w:
                    continue
                mask = si.dst_mask
                w.pending &= ~mask
                if from_mem:
                    w.pending_mem &= ~mask
                if banks is not None:
                    banks.write(w.slot, si.dst_regs, now)
                else:
                    write(w.slot, si.dst_regs, now)
                self._update_ready(w)
                progress = True
        # 2. LD/ST unit
        if self.ldst.tick(now):
            progress = True
        # 3. issue
        issued = 0
        structural = False
        if self.n_warps:
            for s, rs in enumerate(self.ready):
                if rs:
                    if self._issue(s, rs, now):
                        issued += 1
                    else:
                        structural = True
        # 4. fetch: one warp's instruction buffer per cycle
        fetchq = self.fetchq
        if fetchq:
            fw = self.warps[fetchq.popleft()]
            if fw is not None:
                fw.in_fetch = False
                left = fw.n - fw.pos
                fw.ibuf = self.p.ibuf_entries if self.p.ibuf_entries < left else left
                self._update_ready(fw)
            progress = True
        # 5. statistics of this cycle
        if issued:
            cls = ACTIVE
        elif not self.n_warps:
            cls = IDLE
        else:
            cls = self._classify(issued, structural)
        st.cycles[cls] += 1
        if self.n_warps:
            st.issue_slots += self.p.n_schedulers
            st.resident_warp_cycles += self.n_warps
            st.resident_cta_cycles += self.n_ctas
        st.issued += issued
        self.last_class = cls
        if stalls:
            reasons = st.stall_reasons
            for r in stalls:
                reasons[r] = reasons.get(r, 0) + 1
        self.last_stalls = stalls
        if issued or progress or fetchq:
            return True
        # nothing happened this cycle: sleep until the next known event
        any_ready = False
        for rs in self.ready:
            if rs:
                any_ready = True
                break
        nxt = self._next_unit_free(now) if any_ready else self.ldst.next_event(now)
        if wb:
            nxt = wb[0][0] if nxt is None else min(nxt, wb[0][0])
        if self.incoming:
            nxt = self.incoming[0][0] if nxt is None else min(nxt, self.incoming[0][0])
        if nxt is not None:
            self.wake_at(max(nxt, now + 1))
        return False

    def skipped(self, first: int, last: int) -> None:
        n = last - first + 1
        st = self.stats
        st.cycles[self.last_class] += n
        for reason in self.last_stalls:
            st.add_stall(reason, n)
        if self.n_warps:
            st.issue_slots += self.p.n_schedulers * n
            st.resident_warp_cycles += self.n_warps * n
            st.resident_cta_cycles += self.n_ctas * n

    def _classify(self, issued: int, structural: bool) -> str:
        if issued:
            return ACTIVE
        if not self.n_warps:
            return IDLE
        if structural or self.ldst.stalled:
            return CORE_STALL
        if self.n_mem_blocked:
            return MEM_STALL
        if self.wb:
            return CORE_STALL  # waiting on pipeline results
        return IDLE

    def _next_unit_free(self, now: int) -> int | None:
        times = [t for frees in self.unit_free.values() for t in frees if t > now]
        ev = self._banks.next_event(now) if self._banks is not None else self.operands.next_event(now)
        if ev is not None:
            times.append(ev)
        ev = self.ldst.next_event(now)
        if ev is not None:
            times.append(ev)
        return min(times) if times else None  # blocked on the LD/ST unit: its reply or queue slot wakes us

    # ------------------------------------------------------------ issue

    def _issue(self, s: int, rs: set[int], now: int) -> bool:
        """Issue one instruction from scheduler s: the policy orders the warps whose
        next instruction's pipeline can take it this cycle; the first that the
        operand storage accepts issues."""
        warps = self.warps
        unit_next = self.unit_next
        sp_free = unit_next[self.unit_next_sp][0] <= now
        ldst_ok = self.ldst.can_accept()
        if not ldst_ok and len(self.ready_mem[s]) == len(rs):
            self._stalls.append("unit_busy")  # every ready warp waits for the LD/ST unit
            return False
        cands: list[Any] = []
        for x in rs:
            w = cast(Warp, warps[x])  # ready warps are resident
            si = cast(StaticInstr, w.si)  # and know their next instruction
            k = si.kind
            if k == K_MEM:
                if not ldst_ok:
                    continue
            elif k != K_BAR and k != K_EXIT:
                t = unit_next.get(si.unit)
                if not (sp_free if t is None else t[0] <= now):
                    continue
            cands.append(w.view)
        if not cands:
            self._stalls.append("unit_busy")
            return False
        policy = self.policies[s]
        if len(cands) == 1 and not policy.filters:
            return self._try_issue(cands[0], policy, now)
        # the policy's first choice almost always dispatches: try it before sorting
        first = policy.choose(cands, now)
        if first is None:  # the policy lets none of them issue now
            self._stalls.append("scheduler_hold")
            return False
        if self._try_issue(first, policy, now):
            return True
        for v in policy.order(cands, now):
            if v is not first and self._try_issue(v, policy, now):
                return True
        return False

    def _try_issue(self, v: Any, policy: Any, now: int) -> bool:
        """Start the next instruction of the warp behind view `v` if its pipeline and
        operand storage accept it now, and advance the warp."""
        w = cast(Warp, self.warps[v.slot])
        si = cast(StaticInstr, w.si)
        kind = si.kind
        if kind == K_ALU or kind == K_BRANCH or kind == K_NOP:
            unit = si.unit
            frees = self.unit_free.get(unit)
            if frees is None:
                unit = self.unit_next_sp
                frees = self.unit_free[unit]
            k = 0  # the unit free earliest (the first of equals)
            for j in range(1, len(frees)):
                if frees[j] < frees[k]:
                    k = j
            if frees[k] > now:
                self._stalls.append("unit_busy")
                return False
            banks = self._banks
            start = (banks.try_read(w.slot, si.unit, si.src_regs, now) if banks is not None
                     else self.operands.try_read(w.slot, si.unit, si.src_regs, now))
            if start is None:
                self._stalls.append("collector_full")
                return False
            frees[k] = now + si.initiation
            earliest = frees[0]
            for t in frees:
                if t < earliest:
                    earliest = t
            self.unit_next[unit][0] = earliest
            dst = si.dst_mask
            if dst:
                w.pending |= dst
                self.seq += 1
                heapq.heappush(self.wb, (start + si.latency, self.seq, w, si, 0))
        elif kind == K_MEM:
            ldst = self.ldst
            if not ldst.can_accept():
                self._stalls.append("ldst_busy")
                return False
            banks = self._banks
            start = (banks.try_read(w.slot, LDST, si.src_regs, now) if banks is not None
                     else self.operands.try_read(w.slot, LDST, si.src_regs, now))
            if start is None:
                self._stalls.append("collector_full")
                return False
            dst = si.dst_mask
            if dst:
                w.pending |= dst
                w.pending_mem |= dst
            ldst.accept(w, si, w.mem[w.pos], start)
        # barriers and exits take effect once the warp has advanced (below)
        v.last_issue = now
        policy.on_issue(v, now, si.long_wait)
        st = self.stats
        pos = w.pos
        st.warp_insts += 1
        st.thread_insts += w.lanes[pos]
        w.pos = pos = pos + 1
        w.ibuf = ibuf = w.ibuf - 1
        if kind == K_ALU and pos < w.n:
            # the common case, _update_ready inlined: the warp was ready (so not
            # memory-blocked) and stays in the ready set unless it must wait now
            if ibuf == 0:
                self.ready[w.sched].discard(w.slot)
                if not w.in_fetch:
                    w.in_fetch = True
                    self.fetchq.append(w.slot)
            else:
                nsi = w.instrs[w.pcs[pos]]
                block = w.pending & (nsi.src_mask | nsi.dst_mask)
                if block:
                    self.ready[w.sched].discard(w.slot)
                    if block & w.pending_mem:
                        w.mem_blocked = True
                        self.n_mem_blocked += 1
                else:
                    w.si = nsi
                    if nsi.kind == K_MEM:  # (an ALU instruction left: it was not in ready_mem)
                        self.ready_mem[w.sched].add(w.slot)
        elif kind == K_BAR:
            # arrive after advancing, so a release (possibly by this very warp) judges
            # the instruction after the barrier
            w.at_barrier = True
            self.ready[w.sched].discard(w.slot)
            self.ready_mem[w.sched].discard(w.slot)
            w.cta.arrived += 1
            self._check_barrier(w.cta, now)
        elif kind == K_EXIT or w.pos >= w.n:
            self._warp_done(w, now)
        else:
            if w.ibuf == 0:
                self._want_fetch(w)
            self._update_ready(w)
        return True

    def _check_barrier(self, cta: CTA, now: int) -> None:
        if cta.arrived and cta.arrived >= cta.live:
            cta.arrived = 0
            for x in cta.warps:
                if x.at_barrier:
                    x.at_barrier = False
                    if x.pos >= x.n:
                        self._warp_done(x, now)
                        continue
                    if x.ibuf == 0:
                        self._want_fetch(x)
                    self._update_ready(x)

    def _warp_done(self, w: Warp, now: int) -> None:
        if w.done:
            return
        w.done = True
        self.ready[w.sched].discard(w.slot)
        self.ready_mem[w.sched].discard(w.slot)
        self.policies[w.sched].on_finish(w.slot)  # e.g. leaves a two-level active set now
        run = w.run
        run.warp_insts += w.pos
        run.thread_insts += sum(w.lanes[:w.pos]) if w.pos < w.n else w.thread_total
        hist = w.pc_hist
        if w.pos < w.n:  # exited before the end of its recorded stream
            hist = np.bincount(np.asarray(w.pcs[:w.pos], dtype=np.int64), minlength=len(hist))
        entry = self.pc_counts.get(id(run.static))
        if entry is None:
            self.pc_counts[id(run.static)] = (run.static, hist.copy())
        else:
            entry[1][:] += hist
        if w.mem_blocked:
            w.mem_blocked = False
            self.n_mem_blocked -= 1
        cta = w.cta
        cta.live -= 1
        if cta.live == 0:
            self._retire_when_drained(cta, now)
        else:
            self._check_barrier(cta, now)

    def _retire_when_drained(self, cta: CTA, now: int) -> None:
        # a CTA's slots are freed once its last warp exits (outstanding stores need no reply)
        self._retire_cta(cta, now)
