"""The issue stage: per warp scheduler, the set of warps whose next instruction may
issue (buffered, scoreboard clear, not at a barrier, not held by a plug-in), and
each cycle the scheduler's choice among those its pipelines can take.

The warp-scheduler policy orders the candidates; the first one the operand
storage accepts issues. With `issue_width` > 1 the same warp may issue further
independent instructions in that cycle (GPGPU-Sim's gpgpu_max_insn_issue_per_warp;
with `dual_issue_diff_units` they must go to different pipelines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from librt.vecs import vec
from mypy_extensions import i64

from tlpsim.timing.regbanks import RegisterBanks
from tlpsim.timing.static import (
    K_ALU,
    K_BAR,
    K_BRANCH,
    K_EXIT,
    K_MEM,
    K_NOP,
    LDST,
    StaticInstr,
)
from tlpsim.timing.stats import (
    STALL_COLLECTOR_FULL,
    STALL_ISSUE_STALLED,
    STALL_LDST_BUSY,
    STALL_SCHEDULER_HOLD,
    STALL_UNIT_BUSY,
)
from tlpsim.timing.units import FULL_MASK, FunctionalUnits
from tlpsim.timing.writeback import as_cycle

if TYPE_CHECKING:
    from tlpsim.timing.barriers import Barriers
    from tlpsim.timing.events import SMEvents
    from tlpsim.timing.fetch import Fetch
    from tlpsim.timing.ldst import LdstUnit
    from tlpsim.timing.slots import Slots
    from tlpsim.timing.sm import SM
    from tlpsim.timing.stats import SMStats
    from tlpsim.timing.warp import Warp
    from tlpsim.timing.writeback import Writeback


class ReadyWarps:
    """A warp scheduler's warps that may issue, as bit masks (bit k: warp slot k):
    cheaper to update and to walk in slot order than a set."""

    def __init__(self) -> None:
        self.all = 0
        # those whose next instruction is a memory instruction: when the LD/ST unit is
        # full and these are all there is, the scheduler knows it cannot issue
        self.mem = 0


class IssueStage:
    # wired by the SM
    sm: SM
    slots: Slots
    fetch: Fetch
    barriers: Barriers
    wb: Writeback
    ldst: LdstUnit
    stats: SMStats

    def __init__(self, n_schedulers: int, policies: list[Any], units: FunctionalUnits, operands: Any,
                 banks: RegisterBanks | None, events: SMEvents, issue_width: int = 1,
                 dual_issue_diff_units: bool = True, wb_width: int = 1 << 30) -> None:
        self.policies = policies            # one WarpScheduler plug-in per scheduler unit
        self.units = units
        self.operands = operands            # the OperandStorage plug-in
        self.banks = banks                  # its compiled banks when it is exactly the baseline
        self.events = events
        self.issue_width = issue_width
        self.diff_units = dual_issue_diff_units
        self.ready: list[ReadyWarps] = [ReadyWarps() for _ in range(n_schedulers)]
        self.n_mem_blocked = 0              # warps whose next instruction waits on a memory load
        self.block_events = events.block_events
        self.wb_delay = 0                   # extra writeback delay set by an instr_issued handler
        # an operand storage held the warp it refused this cycle: the SM's state changed
        # inside the tick, so the SM ticks the next cycle rather than sleeping (docs/plugins.md)
        self.held_on_read = False
        # per scheduler, the cycles [stall_from, stall_until) a plug-in's stall_issue keeps it from issuing
        self.stall_from: list[int] = [0] * n_schedulers
        self.stall_until: list[int] = [0] * n_schedulers
        self.stalled = False                # some stall_issue may still be in force
        self.wb_width = wb_width            # result buses
        # arithmetic writebacks booked per cycle, in a ring indexed by cycle mod its size
        # (bus_cycle: the cycle a slot's count is for); bookings lie less than the ring's
        # size ahead of now (it grows when one would not), so a slot holding an older
        # cycle counts as free
        self.bus_cycle = vec[i64]([-1] * 1024)   # (unboxed: docs/compiled-core.md)
        self.bus_count = vec[i64]([0] * 1024)
        # per scheduler: its policy is exactly the baseline greedy-then-oldest rule
        # (its `inline_rule`), applied here without a Python call per issue, and the
        # greedy warp's slot (kept equal to the policy's own `greedy`)
        self.gto: list[bool] = [getattr(p, "inline_rule", "") == "gto" for p in policies]
        self.greedy: list[int] = [int(p.greedy) if g else -1 for p, g in zip(policies, self.gto)]

    # ------------------------------------------------------------ readiness

    def update_ready(self, w: Warp) -> None:
        """Re-evaluate whether `w` may issue, after anything that could change it."""
        r = self.ready[w.sched]
        bit = 1 << w.slot
        was = w.mem_blocked
        now_blocked = False
        if w.done or w.at_barrier or w.ibuf == 0:
            r.all &= ~bit
            r.mem &= ~bit
        else:
            si = w.instrs[w.pcs[w.pos]]
            block = w.pending & (si.src_mask | si.dst_mask)
            if block or w.holds:
                r.all &= ~bit
                r.mem &= ~bit
                now_blocked = bool(block & w.pending_mem)
            else:
                w.si = si
                r.all |= bit
                if si.kind == K_MEM:
                    r.mem |= bit
                else:
                    r.mem &= ~bit
        if now_blocked != was:
            w.mem_blocked = now_blocked
            self.n_mem_blocked += 1 if now_blocked else -1
        if self.block_events:
            self.report_block(w)

    def block_reason(self, w: Warp) -> str:
        """Why a resident warp cannot issue now ("" when it can, or has finished)."""
        if w.done:
            return ""
        if w.at_barrier:
            return "barrier"
        if w.ibuf == 0:
            return "fetch"
        si = w.instrs[w.pcs[w.pos]]
        block = w.pending & (si.src_mask | si.dst_mask)
        if block:
            return "memory" if block & w.pending_mem else "scoreboard"
        return "hold" if w.holds else ""

    def report_block(self, w: Warp) -> None:
        reason = self.block_reason(w)
        old = w.block
        if reason == old:
            return
        w.block = reason
        now = self.sm.now()
        if old:
            for h in self.events.warp_unblocked:
                h(w.view, old, now)
        if reason:
            for h in self.events.warp_blocked:
                h(w.view, reason, now)

    def drop(self, w: Warp) -> None:
        """`w` finished: it leaves the ready masks and the memory-blocked count."""
        self.unready(w)
        if w.mem_blocked:
            w.mem_blocked = False
            self.n_mem_blocked -= 1
        if w.block and self.block_events:
            old, w.block = w.block, ""
            now = self.sm.now()
            for h in self.events.warp_unblocked:
                h(w.view, old, now)

    def unready(self, w: Warp) -> None:
        """`w` may not issue (until update_ready says otherwise)."""
        r = self.ready[w.sched]
        bit = 1 << w.slot
        r.all &= ~bit
        r.mem &= ~bit

    def is_ready(self, w: Warp) -> bool:
        return bool(self.ready[w.sched].all >> w.slot & 1)

    # ------------------------------------------------------------ issue

    def issue(self, s: int, rs: int, now: int) -> bool:
        """Issue one instruction from scheduler s: the policy orders the warps whose
        next instruction's pipeline can take it this cycle; the first that the
        operand storage accepts issues. `rs`: the scheduler's ready mask (not empty);
        candidates go to the policy in slot order."""
        if self.stalled and self.stall_from[s] <= now < self.stall_until[s]:
            self.sm.note_stall(STALL_ISSUE_STALLED)  # a plug-in's stall_issue
            return False
        ldst_ok = self.ldst.can_accept()
        if not ldst_ok and self.ready[s].mem == rs:
            self.sm.note_stall(STALL_UNIT_BUSY)  # every ready warp waits for the LD/ST unit
            return False
        if self.gto[s]:
            return self._issue_gto(s, rs, now, ldst_ok)
        cands = self._candidates(s, rs, now, ldst_ok)
        if not cands:
            self.sm.note_stall(STALL_UNIT_BUSY)
            return False
        policy = self.policies[s]
        if len(cands) == 1 and not policy.filters:
            return self.try_issue(cands[0], policy, now, False)
        # the policy's first choice almost always dispatches: try it before sorting
        first = policy.choose(cands, now)
        if first is None:  # the policy lets none of them issue now
            self.sm.note_stall(STALL_SCHEDULER_HOLD)
            return False
        if not _among(first, cands):
            raise _bad_choice(policy, "choose", first, cands)
        if self.try_issue(first, policy, now, False):
            return True
        for v in policy.order(cands, now):
            if v is not first:
                if not _among(v, cands):
                    raise _bad_choice(policy, "order", v, cands)
                if self.try_issue(v, policy, now, False):
                    return True
        return False

    def _candidates(self, s: int, rs: int, now: int, ldst_ok: bool) -> list[Any]:
        """Views of the ready warps (mask `rs`, slot order) whose next instruction's
        pipeline can take it this cycle."""
        warps = self.slots.warps
        unit_next = self.units.next_by_id[s]
        cands: list[Any] = []
        m = rs
        while m:
            low = m & -m
            m ^= low
            w = cast("Warp", warps[low.bit_length() - 1])  # ready warps are resident
            si = cast(StaticInstr, w.si)  # and know their next instruction
            k = si.kind
            if k == K_MEM:
                if not ldst_ok:
                    continue
            elif k != K_BAR and k != K_EXIT:
                if unit_next[si.unit_id][0] > now:
                    continue
            cands.append(w.view)
        return cands

    def _issue_gto(self, s: int, rs: int, now: int, ldst_ok: bool) -> bool:
        """`issue` for a scheduler whose policy is exactly greedy-then-oldest: its choice
        (the greedy warp if it is a candidate, else the oldest) computed here; the
        policy's `order` is asked only when that warp cannot issue."""
        warps = self.slots.warps
        unit_next = self.units.next_by_id[s]
        g = self.greedy[s]
        best: Warp | None = None
        n = 0
        m = rs
        while m:
            low = m & -m
            m ^= low
            w = cast("Warp", warps[low.bit_length() - 1])
            si = cast(StaticInstr, w.si)
            k = si.kind
            if k == K_MEM:
                if not ldst_ok:
                    continue
            elif k != K_BAR and k != K_EXIT:
                if unit_next[si.unit_id][0] > now:
                    continue
            n += 1
            if best is None or (best.slot != g and (w.slot == g or w.age < best.age)):
                best = w
        if best is None:
            self.sm.note_stall(STALL_UNIT_BUSY)
            return False
        policy = self.policies[s]
        if self._try_issue(best, best.view, policy, now, False):
            return True
        if n == 1:
            return False
        cands = self._candidates(s, rs, now, ldst_ok)
        first = best.view
        for v in policy.order(cands, now):
            if v is not first and self.try_issue(v, policy, now, False):
                return True
        return False

    def try_issue(self, v: Any, policy: Any, now: int, quiet: bool) -> bool:
        """Start the next instruction of the warp behind view `v` if its pipeline and
        operand storage accept it now, and advance the warp. `quiet`: a further
        instruction of a warp that already issued this cycle (no stall is noted)."""
        return self._try_issue(cast("Warp", self.slots.warps[v.slot]), v, policy, now, quiet)

    def _try_issue(self, w: Warp, v: Any, policy: Any, now: int, quiet: bool) -> bool:
        si = cast(StaticInstr, w.si)
        kind = si.kind
        pos = w.pos
        wb_at = -1
        if kind == K_ALU or kind == K_BRANCH or kind == K_NOP:
            units = self.units
            if units.lane_holds and not units.lanes_free(w.sched, si.unit, self._mask(w, pos), now):
                if not quiet:
                    self.sm.note_stall(STALL_UNIT_BUSY)
                return False
            if units.next_by_id[w.sched][si.unit_id][0] > now:
                if not quiet:
                    self.sm.note_stall(STALL_UNIT_BUSY)
                return False
            banks = self.banks
            start = (banks.take_id(w.slot, w.sched, si.unit_id, si.src_regs, now) if banks is not None
                     else self._plugin_read(w, si, now))
            if start < 0:  # refused
                if w.holds:  # a storage that held the warp while refusing: a hold, not a stall
                    self.held_on_read = True
                elif not quiet:
                    self.sm.note_stall(STALL_COLLECTOR_FULL)
                return False
            # a result bus at its writeback cycle (GPGPU-Sim reserves one when the
            # instruction enters its unit, which holds it in its dispatch register meanwhile)
            ready = start + si.result_delay
            wb = self._result_bus(ready, now)
            units.start_id(w.sched, si.unit_id, now, si.initiation + wb - ready)
            if si.dst_mask:
                w.pending |= si.dst_mask
                wb_at = wb
        elif kind == K_MEM:
            ldst = self.ldst
            if not ldst.can_accept():
                if not quiet:
                    self.sm.note_stall(STALL_LDST_BUSY)
                return False
            # a shared access waits for its sub-core's path into the unit (sm.shared_subcore_issue_cycles)
            hold = ldst.paths.hold(w, si, w.mem[pos]) if ldst.p.sub_issue_cycles else 0
            if hold and not ldst.paths.is_free(w.sched, now):
                if not quiet:
                    self.sm.note_stall(STALL_LDST_BUSY)
                return False
            banks = self.banks
            start = (banks.take_id(w.slot, w.sched, si.unit_id, si.src_regs, now) if banks is not None
                     else self._plugin_read(w, si, now))
            if start < 0:  # refused
                if w.holds:  # a storage that held the warp while refusing: a hold, not a stall
                    self.held_on_read = True
                elif not quiet:
                    self.sm.note_stall(STALL_COLLECTOR_FULL)
                return False
            dst = si.dst_mask
            if dst:
                w.pending |= dst
                w.pending_mem |= dst
                if si.long_wait:
                    v.waiting_mem = True
            if hold:
                ldst.paths.take(w.sched, hold, now)  # (paced from issue: every access reads operands alike)
            ldst.accept(w, si, w.mem[pos], start, pos)
        # barriers and exits take effect once the warp has advanced (below)
        v.last_issue = now
        sched = w.sched
        if self.gto[sched] and policy is self.policies[sched]:
            if w.slot != self.greedy[sched]:  # the rule's on_issue, natively
                self.greedy[sched] = w.slot
                policy.greedy = w.slot
        else:
            policy.on_issue(v, now, si.long_wait)
        st = self.stats
        st.warp_insts += 1
        st.thread_insts += w.lanes[pos]
        w.pos = npos = pos + 1
        w.ibuf = ibuf = w.ibuf - 1
        if kind == K_ALU and npos < w.n and not self.block_events:
            # the common case, update_ready inlined: the warp was ready (so not
            # memory-blocked, not held) and stays ready unless it must wait now
            if ibuf == 0:
                self.ready[w.sched].all &= ~(1 << w.slot)
                self.fetch.refetch(w, now)
            else:
                nsi = w.instrs[w.pcs[npos]]
                block = w.pending & (nsi.src_mask | nsi.dst_mask)
                if block:
                    self.ready[w.sched].all &= ~(1 << w.slot)
                    if block & w.pending_mem:
                        w.mem_blocked = True
                        self.n_mem_blocked += 1
                else:
                    w.si = nsi
                    if nsi.kind == K_MEM:  # (an ALU instruction left: its bit was not in .mem)
                        self.ready[w.sched].mem |= 1 << w.slot
        elif kind == K_BAR:
            # a warp waiting at a barrier fetches (GPGPU-Sim fetches any warp whose buffer is empty)
            if ibuf == 0:
                self.fetch.refetch(w, now)
            # arrive after advancing, so a release (possibly by this very warp) judges
            # the instruction after the barrier
            self.barriers.arrive(w, now)
        elif kind == K_EXIT or npos >= w.n:
            self.slots.warp_done(w, now)
        else:
            if ibuf == 0:
                self.fetch.refetch(w, now)
            self.update_ready(w)
        if npos == w.gate:  # the next instruction read another CTA's write (timing.xcta)
            w.run.gates.reach(w, self.sm, w.run)
        watch = w.watch
        if watch is not None:
            handlers = watch[si.pc]
            if handlers:
                mask = self._mask(w, pos)
                for h in handlers:
                    h(v, si, mask, now)
                if self.wb_delay:
                    if wb_at >= 0:
                        wb_at += self.wb_delay
                    self.wb_delay = 0
        if wb_at >= 0:
            self.wb.schedule(w, si, wb_at, 0, pos)
        if self.issue_width > 1 and not quiet:
            self._issue_more(w, policy, si, now)
        return True

    def stall(self, s: int, cycles: int, now: int) -> None:
        """Scheduler `s` issues nothing in the `cycles` cycles after `now` (a plug-in's
        stall_issue; overlapping stalls end at the latest end, they do not add)."""
        end = now + 1 + cycles
        if self.stall_until[s] <= now:   # none in force: a new one
            self.stall_from[s] = now + 1
            self.stall_until[s] = end
        elif end > self.stall_until[s]:
            self.stall_until[s] = end
        self.stalled = True

    def stall_end(self, now: int) -> int | None:
        """The earliest cycle after `now` at which a scheduler's stall ends (None: none in force)."""
        if not self.stalled:
            return None
        ends = [t for t in self.stall_until if t > now]
        if not ends:
            self.stalled = False
            return None
        return min(ends)

    def _plugin_read(self, w: Warp, si: StaticInstr, now: int) -> int:
        """The operand-storage plug-in's try_read: the cycle > now it returned, or -1
        for its None (refused)."""
        start = self.operands.try_read(w.view, si, now)
        if start is None:
            return -1
        c = as_cycle(start)
        if c > now:
            return c
        from tlpsim.plugin_guard import bad_return

        raise bad_return(self.operands, "try_read", f"must return None (refused) or the cycle the instruction may "
                                                    f"start, an int > now ({now}); it returned {start!r}")

    def _result_bus(self, cycle: int, now: int) -> int:
        """The first cycle from `cycle` with a free result bus (GPGPU-Sim reserves one of
        the EX_WB-width buses for every arithmetic instruction's writeback), booked."""
        cycles, counts = self.bus_cycle, self.bus_count
        size = len(cycles)
        while True:
            if cycle - now >= size:
                self._grow_buses(cycle - now, now)
                cycles, counts = self.bus_cycle, self.bus_count
                size = len(cycles)
            k = cycle & (size - 1)
            n = int(counts[k]) if cycles[k] == cycle else 0  # (int(): docs/compiled-core.md)
            if n < self.wb_width:
                cycles[k] = cycle
                counts[k] = n + 1
                return cycle
            cycle += 1

    def _grow_buses(self, ahead: int, now: int) -> None:
        """Enlarge the booking ring past `ahead` cycles, keeping the bookings from now on."""
        size = len(self.bus_cycle)
        while size <= ahead:
            size *= 2
        cycles, counts = vec[i64]([-1] * size), vec[i64]([0] * size)
        old_cycles, old_counts = self.bus_cycle, self.bus_count
        for j in range(len(old_cycles)):
            c = old_cycles[j]
            if c >= now:
                cycles[c & (size - 1)] = c
                counts[c & (size - 1)] = old_counts[j]
        self.bus_cycle, self.bus_count = cycles, counts

    def _mask(self, w: Warp, pos: int) -> int:
        masks = w.masks
        return masks[pos] if masks is not None else FULL_MASK

    def _issue_more(self, w: Warp, policy: Any, first: StaticInstr, now: int) -> None:
        """Further instructions of `w` in the cycle it issued (dual issue)."""
        used = {first.unit}
        for _ in range(self.issue_width - 1):
            if w.done or not self.ready[w.sched].all >> w.slot & 1:
                return
            si = cast(StaticInstr, w.si)
            if si.kind == K_BAR or si.kind == K_EXIT:
                return
            unit = LDST if si.kind == K_MEM else self.units.class_of(si.unit)
            if self.diff_units and unit in used:
                return
            if si.kind == K_MEM:
                if not self.ldst.can_accept():
                    return
            elif self.units.free_at(w.sched, si.unit) > now:
                return
            if not self.try_issue(w.view, policy, now, True):
                return
            used.add(unit)


def _among(v: Any, cands: list[Any]) -> bool:
    """Whether `v` is one of the candidate views (by identity: a policy returns one it was given)."""
    for c in cands:
        if c is v:
            return True
    return False


def _bad_choice(policy: Any, method: str, v: Any, cands: list[Any]) -> Exception:
    from tlpsim.plugin_guard import bad_return

    what = (f"the warp in slot {v.slot}, which is not among this cycle's {len(cands)} candidates (finished, not "
            "ready, held, or another scheduler's)") if hasattr(v, "slot") else f"{v!r} ({type(v).__name__})"
    return bad_return(policy, method, f"must return one of the candidate WarpViews it was given (or None from "
                                      f"choose: issue none); it returned {what}")
