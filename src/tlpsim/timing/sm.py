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

from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.static import DP, K_ALU, K_BAR, K_BRANCH, K_EXIT, K_MEM, K_NOP, LDST, SFU, SP, regs_of
from tlpsim.timing.stats import ACTIVE, CORE_STALL, IDLE, MEM_STALL, SMStats
from tlpsim.timing.warp import CTA, Warp


class SMParams:
    """The SM numbers the core model needs (taken from the typed config by the GPU)."""

    def __init__(self, *, max_warps=48, max_ctas=8, n_schedulers=2, ibuf_entries=2, units=None,
                 l1d=None) -> None:
        self.max_warps = max_warps
        self.max_ctas = max_ctas
        self.n_schedulers = n_schedulers
        self.ibuf_entries = ibuf_entries
        # pipelines per class (GTX480: 2 SP, 1 SFU; DP ops issue to the SP pipes with their own latency)
        self.units = units or {SP: 2, SFU: 1, DP: 1}
        self.aliases: dict = {}  # pipeline class -> the class whose units run it (e.g. dp -> sfu)


class SM(Component):
    name = "sm"

    def __init__(self, sm_id: int, domain: ClockDomain, params: SMParams, schedulers: list, operands,
                 allocator, ldst, on_cta_done) -> None:
        super().__init__(domain)
        self.id = sm_id
        self.p = params
        self.policies = schedulers          # one WarpScheduler policy per scheduler unit
        self.operands = operands            # OperandStorage
        self.allocator = allocator          # ResourceAllocator
        self.ldst = ldst                    # LdstUnit
        self.stats = SMStats()
        ldst.sm = self
        ldst.stats = self.stats
        self.on_cta_done = on_cta_done
        self.warps: list[Warp | None] = [None] * params.max_warps
        self.ctas: list[CTA | None] = [None] * params.max_ctas
        self.n_warps = 0
        self.n_ctas = 0
        self.ready: list[set[int]] = [set() for _ in range(params.n_schedulers)]
        self.fetchq: deque[int] = deque()
        self.wb: list[tuple] = []  # (cycle, seq, warp, mask, from_mem): warp objects, so reused slots are safe
        self.seq = 0
        self.unit_free = {u: [0] * n for u, n in params.units.items()}
        for u, target in params.aliases.items():
            self.unit_free[u] = self.unit_free[target]
        self.last_class = IDLE
        self.last_stalls: dict[str, int] = {}  # stall reasons counted in the last ticked cycle
        self.age = 0
        self.incoming: deque = deque()  # (cycle, run, cta index, grant) of CTAs arriving
        self._stalls: list[str] = []     # stall reasons met in the current tick
        self.n_mem_blocked = 0           # warps whose next instruction waits on a memory load

    def collect(self) -> dict:
        """The SM's counters, with those its parts keep (operand storage) folded in."""
        st = self.stats
        ops = self.operands.stats
        st.rf_reads, st.rf_writes = ops.reads, ops.writes
        st.rf_bank_conflicts, st.collector_full = ops.bank_conflict_cycles, ops.collector_full
        st.l1d_reservation_fails = st.stall_reasons.get("l1d_reservation_fail", 0)
        return st.to_dict()

    # ------------------------------------------------------------ CTA management

    def can_accept(self, run) -> bool:
        return self.n_ctas + len(self.incoming) < self.p.max_ctas and self.allocator.fits(run.kres)

    def launch_cta(self, run, index: int, now: int) -> None:
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
            for pol in self.policies:
                pol.on_finish(w.slot)
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
        was = w.mem_blocked
        if w.done or w.at_barrier or w.ibuf == 0:
            rs.discard(w.slot)
            now_blocked = False
        else:
            si = w.run.static.instrs[w.pcs[w.pos]]
            block = w.pending & (si.src_mask | si.dst_mask)
            if block:
                rs.discard(w.slot)
                now_blocked = bool(block & w.pending_mem)
            else:
                w.si = si
                rs.add(w.slot)
                now_blocked = False
        if now_blocked != was:
            w.mem_blocked = now_blocked
            self.n_mem_blocked += 1 if now_blocked else -1

    def note_stall(self, reason: str) -> None:
        """A part of the SM (the LD/ST unit) could not proceed this cycle."""
        self._stalls.append(reason)

    def complete(self, w: Warp, mask: int, cycle: int, from_mem: bool) -> None:
        """Schedule the writeback of `mask` for warp `w` at `cycle` (called by the
        pipelines at issue and by the LD/ST unit when data arrives)."""
        self.seq += 1
        heapq.heappush(self.wb, (cycle, self.seq, w, mask, int(from_mem)))
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
        self._stalls = []
        # 1. writebacks due
        wb = self.wb
        while wb and wb[0][0] <= now:
            _, _, w, mask, from_mem = heapq.heappop(wb)
            if w.done and self.warps[w.slot] is not w:
                continue
            w.pending &= ~mask
            if from_mem:
                w.pending_mem &= ~mask
            self.operands.write(w.slot, regs_of(mask), now)
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
                if not rs:
                    continue
                got = self._issue(s, rs, now)
                if got:
                    issued += 1
                else:
                    structural = True
        # 4. fetch: one warp's instruction buffer per cycle
        if self.fetchq:
            slot = self.fetchq.popleft()
            w = self.warps[slot]
            if w is not None:
                w.in_fetch = False
                w.ibuf = min(self.p.ibuf_entries, w.n - w.pos)
                self._update_ready(w)
            progress = True
        # 5. statistics of this cycle
        cls = self._classify(issued, structural)
        st.cycles[cls] += 1
        if self.n_warps:
            st.issue_slots += self.p.n_schedulers
            st.resident_warp_cycles += self.n_warps
            st.resident_cta_cycles += self.n_ctas
        st.issued += issued
        self.last_class = cls
        if self._stalls:
            last = {}
            for r in self._stalls:
                last[r] = last.get(r, 0) + 1
                st.stall_reasons[r] = st.stall_reasons.get(r, 0) + 1
            self.last_stalls = last
        elif self.last_stalls:
            self.last_stalls = {}
        if issued:
            progress = True
        if progress or self.fetchq:
            return True
        # nothing happened this cycle: sleep until the next known event
        nxt = self._next_unit_free(now) if any(self.ready) else self.ldst.next_event(now)
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
        for reason, k in self.last_stalls.items():
            st.add_stall(reason, k * n)
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
        ev = self.operands.next_event(now)
        if ev is not None:
            times.append(ev)
        ev = self.ldst.next_event(now)
        if ev is not None:
            times.append(ev)
        return min(times) if times else None  # blocked on the LD/ST unit: its reply or queue slot wakes us

    # ------------------------------------------------------------ issue

    def _issue(self, s: int, rs: set, now: int) -> bool:
        """Issue one instruction from scheduler s: the policy orders the warps whose
        next instruction's pipeline can take it this cycle; the first that the
        operand storage accepts issues."""
        warps = self.warps
        avail = {u: min(frees) <= now for u, frees in self.unit_free.items()}
        ldst_ok = self.ldst.can_accept()
        cands = []
        for x in rs:
            w = warps[x]
            si = w.si
            k = si.kind
            if k == K_MEM:
                if not ldst_ok:
                    continue
            elif k != K_BAR and k != K_EXIT:
                if not avail.get(si.unit, avail[SP]):
                    continue
            cands.append(w.view)
        if not cands:
            self._stalls.append("unit_busy")
            return False
        policy = self.policies[s]
        if len(cands) == 1:
            order = cands
        else:
            # the policy's first choice almost always dispatches: try it before sorting
            first = policy.choose(cands, now)
            if self._try_issue(first, policy, now):
                return True
            order = [v for v in policy.order(cands, now) if v is not first]
        for v in order:
            if self._try_issue(v, policy, now):
                return True
        return False

    def _try_issue(self, v, policy, now: int) -> bool:
        w = self.warps[v.slot]
        si = w.si
        if not self._dispatch(w, si, now):
            return False
        v.last_issue = now
        policy.on_issue(v, now, si.kind == K_MEM and not si.is_store and si.space in
                        ("global", "local", "generic"))
        st = self.stats
        st.warp_insts += 1
        lanes = w.lanes[w.pos]
        st.thread_insts += lanes
        run = w.run
        run.warp_insts += 1
        run.thread_insts += lanes
        st.opclass_insts[si.opclass] = st.opclass_insts.get(si.opclass, 0) + 1
        w.pos += 1
        w.ibuf -= 1
        kind = si.kind
        if kind == K_BAR:
            # arrive after advancing, so a release (possibly by this very warp) judges
            # the instruction after the barrier
            w.at_barrier = True
            self.ready[w.sched].discard(w.slot)
            w.cta.arrived += 1
            self._check_barrier(w.cta, now)
        elif kind == K_EXIT or w.pos >= w.n:
            self._warp_done(w, now)
        else:
            if w.ibuf == 0:
                self._want_fetch(w)
            self._update_ready(w)
        return True

    def _dispatch(self, w: Warp, si, now: int) -> bool:
        """Start `si` for `w` if its pipeline and operand storage accept it now."""
        kind = si.kind
        if kind == K_ALU or kind == K_BRANCH or kind == K_NOP:
            frees = self.unit_free.get(si.unit) or self.unit_free[SP]
            k = min(range(len(frees)), key=frees.__getitem__)
            if frees[k] > now:
                self._stalls.append("unit_busy")
                return False
            if not self.operands.can_issue(w.slot, si.unit, si.src_regs, now):
                self._stalls.append("collector_full")
                return False
            start = self.operands.read(w.slot, si.unit, si.src_regs, now)
            frees[k] = now + si.initiation
            self.stats.unit_ops[si.unit] = self.stats.unit_ops.get(si.unit, 0) + 1
            if si.dst_mask:
                w.pending |= si.dst_mask
                self.complete(w, si.dst_mask, start + si.latency, False)
            return True
        if kind == K_MEM:
            if not self.ldst.can_accept():
                self._stalls.append("ldst_busy")
                return False
            if not self.operands.can_issue(w.slot, LDST, si.src_regs, now):
                self._stalls.append("collector_full")
                return False
            start = self.operands.read(w.slot, LDST, si.src_regs, now)
            if si.dst_mask:
                w.pending |= si.dst_mask
                w.pending_mem |= si.dst_mask
            self.ldst.accept(w, si, w.mem[w.pos], start)
            self.stats.unit_ops[LDST] = self.stats.unit_ops.get(LDST, 0) + 1
            return True
        return True  # barriers and exits take effect once the warp has advanced (_try_issue)

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
