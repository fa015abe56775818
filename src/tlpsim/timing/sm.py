"""A streaming multiprocessor: wires its units — slots (`slots.py`), fetch
(`fetch.py`), issue and scoreboard (`issue.py`, `writeback.py`), barriers
(`barriers.py`), execution pipelines (`units.py`), the operand-storage plug-in and
the LD/ST unit (`ldst.py`) — and runs them once per cycle.

Per cycle, in reverse pipeline order so a result is not consumed in the cycle it
is produced: dispatched CTAs become resident; plug-in timers due now fire;
writebacks due now release scoreboard bits; the LD/ST unit advances one access;
each scheduler issues from its ready warps; instruction buffers are refilled.
Work is proportional to events: ready warps are kept in per-scheduler sets,
writebacks in a heap, and an SM with nothing to do sleeps until its next
writeback, a freed unit, a memory reply, a timer or a plug-in's command.
"""

from __future__ import annotations

from heapq import heappop, heappush
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from librt.vecs import append, vec
from mypy_extensions import i64

from tlpsim.timing.barriers import Barriers
from tlpsim.timing.engine import ClockDomain, Component
from tlpsim.timing.events import SMEvents
from tlpsim.timing.fetch import Fetch
from tlpsim.timing.iprefetch import StreamPrefetcher
from tlpsim.timing.issue import IssueStage
from tlpsim.timing.ldst import LdstUnit
from tlpsim.timing.regbanks import OperandStats, RegisterBanks
from tlpsim.timing.slots import Slots
from tlpsim.timing.static import DP, K_BAR, K_EXIT, SFU, SP
from tlpsim.timing.stats import ACTIVE_I, CORE_STALL_I, IDLE_I, MEM_STALL_I, STALL_L1D_RESERVATION_FAIL, SMStats
from tlpsim.timing.units import FunctionalUnits
from tlpsim.timing.warp import Warp
from tlpsim.timing.writeback import Writeback


class SMParams:
    """The SM numbers the core model needs (taken from the typed config by the builder)."""

    def __init__(self, *, max_warps: int = 48, max_ctas: int = 8, n_schedulers: int = 2, ibuf_entries: int = 2,
                 units: dict[str, int] | None = None, l1d: Any = None, issue_width: int = 1,
                 dual_issue_diff_units: bool = True, sub_core: bool = False, fetch_throughput: int = 1,
                 wb_width: int = 1 << 30, l1i: Any = None, fetch_width: int = 2,
                 iprefetch_lines: int = 0, rotate_schedulers: bool = False) -> None:
        self.max_warps = max_warps          # slot tables (the allocator's max_contexts)
        self.max_ctas = max_ctas
        self.n_schedulers = n_schedulers
        self.ibuf_entries = ibuf_entries
        # pipelines per class (GTX480: 2 SP, 1 SFU; DP ops issue to the SP pipes with their own latency)
        self.units = units or {SP: 2, SFU: 1, DP: 1}
        self.aliases: dict[str, str] = {}  # pipeline class -> the class whose units run it (e.g. dp -> sfu)
        self.issue_width = issue_width
        self.dual_issue_diff_units = dual_issue_diff_units
        self.sub_core = sub_core
        self.fetch_throughput = fetch_throughput
        self.fetch_width = fetch_width      # instruction slots one fetch brings (GPGPU-Sim: 16 bytes)
        self.wb_width = wb_width            # result buses (arithmetic writebacks per cycle)
        self.l1i = l1i                      # the instruction cache (a CachePort), None = perfect
        self.iprefetch_lines = iprefetch_lines  # stream-buffer instruction prefetch depth, 0 = none
        self.rotate_schedulers = rotate_schedulers  # sm.scheduler_order == "rotate"


class SM(Component):
    name = "sm"

    def __init__(self, sm_id: int, domain: ClockDomain, params: SMParams, schedulers: list[Any], operands: Any,
                 allocator: Any, ldst: LdstUnit, on_cta_done: Callable[[int, Any, int, int], None],
                 events: SMEvents | None = None, keep_masks: bool = False, keep_vclass: bool = False) -> None:
        super().__init__(domain)
        self.id = sm_id
        self.p = params
        self._rotate = params.rotate_schedulers and params.n_schedulers > 1
        self.operands = operands            # OperandStorage
        self.ops_stats: OperandStats = operands.stats
        # issue attempts the operand storage refused in the last ticked cycle: a skipped
        # cycle would refuse them again, so skipped() counts them as dense ticking does
        self.last_refusals = 0
        # an operand storage that is exactly the compiled register banks lends them so
        # the issue path calls them natively (same methods, no Python-level call)
        banks = getattr(operands, "compiled_banks", None)
        self._banks: RegisterBanks | None = banks if isinstance(banks, RegisterBanks) else None
        self.allocator = allocator          # ResourceAllocator
        self.ldst = ldst                    # LdstUnit
        self.events = ev = events if events is not None else SMEvents()
        self.stats = SMStats()
        ldst.attach(self, self.stats)
        self.units = FunctionalUnits(params.units, params.aliases, params.n_schedulers, params.sub_core, SP)
        self.issue = IssueStage(params.n_schedulers, schedulers, self.units, operands, self._banks, ev,
                                params.issue_width, params.dual_issue_diff_units, params.wb_width)
        self.slots = Slots(sm_id, params.max_ctas, params.max_warps, params.n_schedulers, allocator, ev, on_cta_done,
                           keep_masks, keep_vclass)
        self.fetch = Fetch(params.ibuf_entries, params.fetch_throughput, params.l1i, params.fetch_width,
                           StreamPrefetcher(params.iprefetch_lines, 128) if params.iprefetch_lines else None)
        self.barriers = Barriers()
        self.wb = Writeback(operands, self._banks, ev)
        # wiring: each unit knows the neighbours it hands work to
        iss, sl, fe, ba, wb = self.issue, self.slots, self.fetch, self.barriers, self.wb
        iss.sm, iss.slots, iss.fetch, iss.barriers, iss.wb, iss.ldst, iss.stats = self, sl, fe, ba, wb, ldst, self.stats
        sl.issue, sl.fetch, sl.barriers, sl.stats = iss, fe, ba, self.stats
        fe.issue, fe.ldst = iss, ldst
        ba.issue, ba.fetch, ba.slots = iss, fe, sl
        wb.issue = iss
        self.last_class = IDLE_I   # (an index of stats.class_cycles)
        # cycles nothing issued while every warp that may issue (not held by a plug-in)
        # waited on a memory load: Kayiran et al.'s C_mem (DYNCTA), for the window event
        self.mem_wait_cycles = 0
        self.last_mem_wait = False
        self.count_mem_wait = False  # set by the GPU when a plug-in takes `window` events (the count's only reader)
        # codes of the stall reasons met in the current (or, between ticks, the last
        # ticked) cycle, repeats counting: the first _n_stalls entries (skipped() counts
        # the last ticked cycle's again for every cycle slept)
        self._stall_codes = vec[i64]([0] * 16)
        self._n_stalls = 0
        # plug-in timers and timed warp holds: (cycle, seq, callback(tag, cycle), tag)
        self.timers: list[tuple[int, int, Callable[[Any, int], Any], Any]] = []
        self._timer_seq = 0
        self.plugins: list[tuple[str, Any]] = []   # (statistics key, instance) of the SM-level plug-ins
        self.energy_events: dict[str, int] = {}    # plug-in energy structure -> accesses

    # ------------------------------------------------------------ views used by the GPU and the port

    @property
    def warps(self) -> list[Warp | None]:
        return self.slots.warps

    @property
    def n_ctas(self) -> int:
        return self.slots.n_ctas

    @property
    def n_warps(self) -> int:
        return self.slots.n_warps

    def now(self) -> int:
        """The current core cycle (inside or outside this SM's tick)."""
        eng = self.engine
        return self.domain.cycle_at(eng.now) if eng is not None else 0

    def collect(self, now: int = -1) -> dict:
        """The SM's counters, with those its parts keep (operand storage) folded in;
        `now` (the core cycle) closes the current CTA-count interval."""
        st = self.stats
        if now >= 0:
            self.slots.count_cycles(now)
        ops = self.operands.stats
        st.rf_reads, st.rf_writes = ops.reads, ops.writes
        st.rf_bank_conflicts, st.collector_full = ops.bank_conflict_cycles, ops.collector_full
        st.l1d_reservation_fails = int(st.stall_counts[STALL_L1D_RESERVATION_FAIL])
        opclass: dict[str, int] = {}
        units: dict[str, int] = {}
        for static, counts in self.slots.pc_totals():
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
        constant caches, plug-in energy structures), for the energy model; snapshotted
        with collect() so a launch sees its own deltas."""
        ldst = self.ldst
        return {"ops": asdict(self.operands.stats),
                "l1d": ldst.l1d.stats.to_dict() if ldst.l1d is not None else {},
                "l1c": ldst.l1c.stats.to_dict() if ldst.l1c is not None else {},
                "plugin_energy": dict(self.energy_events)}

    # ------------------------------------------------------------ CTA management (the dispatcher's interface)

    def can_accept(self, run: Any) -> bool:
        return self.slots.can_accept(run)

    def launch_cta(self, run: Any, index: int, now: int) -> None:
        self.slots.launch(run, index, now)
        self.wake_at(now + 1)

    # ------------------------------------------------------------ timers (plug-ins, timed holds)

    def add_timer(self, cycle: int, callback: Callable[[Any, int], Any], tag: Any) -> None:
        """Call `callback(tag, cycle)` at the start of this SM's tick at `cycle`."""
        self._timer_seq += 1
        heappush(self.timers, (cycle, self._timer_seq, callback, tag))
        self.wake_at(cycle)

    def _fire_timers(self, now: int) -> None:
        timers = self.timers
        while timers and timers[0][0] <= now:
            _, _, cb, tag = heappop(timers)
            cb(tag, now)

    # ------------------------------------------------------------ diagnostics

    def waiting_on(self, w: Warp) -> str:
        """What a resident, unfinished warp waits for (deadlock reports)."""
        if w.at_barrier:
            return "barrier"
        if w.ibuf == 0:
            return "instruction fetch"
        if self.issue.is_ready(w):
            return "issue (ready; not chosen by the warp scheduler, or refused by the operand storage or a busy unit)"
        si = w.instrs[w.pcs[w.pos]]
        if w.pending & (si.src_mask | si.dst_mask):
            return "memory" if w.pending_mem else "scoreboard"
        from tlpsim.timing.xcta import HOLD_XCTA

        if w.holds & HOLD_XCTA:
            return "a value another CTA writes (cross-CTA dependency)"
        if w.holds:
            from tlpsim.timing.plugin import HOLD_BITS

            who = [p for p, b in HOLD_BITS.items() if w.holds & b]
            return "a hold by the " + " and ".join(who) + " plug-in"
        return "scoreboard"

    def note_stall(self, code: i64) -> None:
        """A part of the SM could not proceed this cycle, for reason `code` (stats.STALL_*)."""
        n = self._n_stalls
        if n == len(self._stall_codes):
            self._stall_codes = append(self._stall_codes, code)
        else:
            self._stall_codes[n] = code
        self._n_stalls = n + 1

    def complete(self, w: Warp, si: Any, cycle: int, from_mem: bool, pos: int) -> None:
        """Schedule the writeback of `si`'s destinations for `w` at `cycle` (the LD/ST
        unit, when a load's data has arrived)."""
        self.wb.schedule(w, si, cycle, 1 if from_mem else 0, pos)

    # ------------------------------------------------------------ the cycle

    def busy(self) -> bool:
        return self.slots.n_warps > 0 or len(self.wb) > 0 or self.ldst.busy() or bool(self.slots.incoming)

    def tick(self, now: int) -> bool:
        progress = False
        slots = self.slots
        if slots.incoming:
            slots.admit(now)
        if self.timers and self.timers[0][0] <= now:
            self._fire_timers(now)
            progress = True
        st = self.stats
        self._n_stalls = 0
        # 1. writebacks due
        if self.wb.tick(now, slots.warps):
            progress = True
        # 2. LD/ST unit
        if self.ldst.tick(now):
            progress = True
        # 3. issue
        issued = 0
        structural = False
        issue = self.issue
        refusals = 0
        if slots.n_warps:
            ops = self.ops_stats
            refused0 = ops.collector_full
            # the scheduler that goes first gets the units they share (the memory issue
            # slot, the SFU); with sm.scheduler_order = "rotate" they take turns
            # (GPGPU-Sim 4.x's Issue_Prio; a function of the cycle, so skip-ahead == dense)
            ready = issue.ready
            n_s = len(ready)
            s = now % n_s if self._rotate else 0
            for _ in range(n_s):
                rs = ready[s]
                if rs.all:
                    if issue.issue(s, rs.all, now):
                        issued += 1
                    else:
                        structural = True
                s += 1
                if s == n_s:
                    s = 0
            refusals = ops.collector_full - refused0
        self.last_refusals = refusals
        if issue.held_on_read:
            issue.held_on_read = False
            progress = True
        # 4. fetch
        if self.fetch.tick(slots.warps, now):
            progress = True
        # 5. statistics of this cycle
        n_warps = slots.n_warps
        if issued:
            cls = ACTIVE_I
        elif not n_warps:
            cls = IDLE_I
        else:
            cls = self._classify(structural)
        cyc = st.class_cycles
        cyc[cls] = cyc[cls] + 1  # (not +=: docs/compiled-core.md)
        if n_warps:
            st.issue_slots += self.p.n_schedulers
            st.resident_warp_cycles += n_warps
            st.resident_cta_cycles += slots.n_ctas
        st.issued += issued
        self.last_class = cls
        # the scan over the warps costs ~15% of a memory-bound run's time, so only when read
        wait = self.count_mem_wait and not issued and n_warps > 0 and issue.n_mem_blocked > 0 \
            and self._all_wait_memory()
        self.last_mem_wait = wait
        if wait:
            self.mem_wait_cycles += 1
        n_stalls = self._n_stalls
        if n_stalls:
            codes = self._stall_codes
            for j in range(n_stalls):
                st.add_stall(codes[j], 1)
        if issued or progress or len(self.fetch):
            return True
        # nothing happened this cycle: sleep until the next known event
        any_ready = False
        for rs in issue.ready:
            if rs.all:
                any_ready = True
                break
        nxt = self._next_unit_free(now) if any_ready else self.ldst.next_event(now)
        t = self.wb.next_cycle()
        if t >= 0:
            nxt = t if nxt is None else min(nxt, t)
        if slots.incoming:
            t = slots.incoming[0][0]
            nxt = t if nxt is None else min(nxt, t)
        if self.timers:
            t = self.timers[0][0]
            nxt = t if nxt is None else min(nxt, t)
        if nxt is not None:
            self.wake_at(max(nxt, now + 1))
        return False

    def skipped(self, first: int, last: int) -> None:
        n = last - first + 1
        st = self.stats
        cyc = st.class_cycles
        cyc[self.last_class] = cyc[self.last_class] + n
        if self.last_mem_wait:
            self.mem_wait_cycles += n
        codes = self._stall_codes
        for j in range(self._n_stalls):
            st.add_stall(codes[j], n)
        if self.last_refusals:
            self.ops_stats.collector_full += self.last_refusals * n
        slots = self.slots
        if slots.n_warps:
            st.issue_slots += self.p.n_schedulers * n
            st.resident_warp_cycles += slots.n_warps * n
            st.resident_cta_cycles += slots.n_ctas * n

    def _all_wait_memory(self) -> bool:
        """Every resident warp waits on a memory load, but those a plug-in holds (out of
        the scheduling pool, e.g. a paused CTA's) and are not waiting on one."""
        for w in self.slots.warps:
            if w is not None and not w.done and not w.mem_blocked and not w.holds:
                return False
        return True

    def _classify(self, structural: bool) -> int:
        if structural or self.ldst.stalled:
            return CORE_STALL_I
        if self.issue.n_mem_blocked:
            return MEM_STALL_I
        if len(self.wb):
            return CORE_STALL_I  # waiting on pipeline results
        return IDLE_I

    def _next_unit_free(self, now: int) -> int | None:
        times: list[int] = []
        t = self.units.next_free(now)
        if t is not None:
            times.append(t)
        t = self.units.lanes_next_free(now)
        if t is not None:
            times.append(t)
        ev = self._banks.next_event(now) if self._banks is not None else self.operands.next_event(now)
        if ev is not None:
            times.append(ev)
        ev = self.ldst.next_event(now)
        if ev is not None:
            times.append(ev)
        ev = self.issue.stall_end(now)
        if ev is not None:
            times.append(ev)
        return min(times) if times else None  # blocked on the LD/ST unit: its reply or queue slot wakes us
