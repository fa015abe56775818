"""Warp and CTA slots of an SM: admission of dispatched CTAs, completion of warps,
retirement of CTAs, and the dispatch controls plug-ins set (holds, per-kernel CTA
limits).

The slot tables are sized from the resource allocator's `max_contexts()`, so an
allocator that provides storage for them (EXPARS, Virtual Thread, GPUDuet) may keep
more CTAs and warps resident than the baseline limits. A dispatched CTA becomes
resident the cycle after dispatch (so when in a cycle the dispatcher ticks does not
matter). An allocator may grant part of a CTA's warps (WarpMan): the rest wait in
the CTA and are admitted when the allocator grants them (`grant_waiting`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from tlpsim.timing.warp import CTA, Warp

if TYPE_CHECKING:
    from tlpsim.timing.barriers import Barriers
    from tlpsim.timing.events import SMEvents
    from tlpsim.timing.fetch import Fetch
    from tlpsim.timing.issue import IssueStage
    from tlpsim.timing.stats import SMStats


class Slots:
    # wired by the SM
    issue: IssueStage
    fetch: Fetch
    barriers: Barriers
    stats: SMStats

    def __init__(self, sm_id: int, max_ctas: int, max_warps: int, n_schedulers: int, allocator: Any,
                 events: SMEvents, on_cta_done: Callable[[int, Any, int, int], None],
                 keep_masks: bool = False, keep_vclass: bool = False) -> None:
        self.sm_id = sm_id
        self.n_schedulers = n_schedulers
        self.allocator = allocator
        self.events = events
        self.on_cta_done = on_cta_done          # (sm id, run, CTA index, now): the GPU's bookkeeping
        self.keep_masks = keep_masks
        self.keep_vclass = keep_vclass
        self.warps: list[Warp | None] = [None] * max_warps
        self.ctas: list[CTA | None] = [None] * max_ctas
        self.n_warps = 0
        self.n_ctas = 0
        self.count_since = 0                    # cycle n_ctas last changed (stats.cta_count_cycles)
        self.age = 0
        # (cycle, run, cta index, grant, cta slot); a list (a few CTAs at most): its truth is a
        # native read in the SM's every tick
        self.incoming: list[tuple[int, Any, int, Any, int]] = []
        self.booked: list[bool] = [False] * max_ctas  # CTA slots of arriving CTAs
        self.incoming_warps = 0
        self.by_kernel: dict[int, int] = {}     # kid -> CTAs resident or arriving
        self.limits: dict[int, int] = {}        # kid -> CTA limit set by a plug-in
        self.dispatch_holds = 0                 # hold bits on CTA dispatch to this SM
        self.partial: list[CTA] = []            # resident CTAs with warps not admitted yet
        # issued instructions per pc of finished warps, id(static kernel) -> (static, counts,
        # pcs of finished warps not counted yet): the SM derives opclass_insts and unit_ops
        # from them (no per-issue dict updates; counted in batches)
        self.pc_counts: dict[int, tuple[Any, Any, list[Any]]] = {}

    # ------------------------------------------------------------ dispatch

    def can_accept(self, run: Any) -> bool:
        if self.dispatch_holds:
            return False
        if self.n_ctas + len(self.incoming) >= len(self.ctas) or self.n_warps + self.incoming_warps >= len(self.warps):
            return False
        if self.limits:
            lim = self.limits.get(run.kid)
            if lim is not None and self.by_kernel.get(run.kid, 0) >= lim:
                return False
        return bool(self.allocator.fits(run.kres))

    def launch(self, run: Any, index: int, now: int) -> None:
        """Accept a CTA from the dispatcher: its CTA slot is booked and resources are
        granted now (the allocator learns the slot and, in `kres.kid`, the launch); the
        CTA becomes resident in that slot at the next cycle."""
        slot = self._free_cta_slot()
        self.booked[slot] = True
        grant = self.allocator.allocate(run.kres, slot)
        self.incoming.append((now + 1, run, index, grant, slot))
        self.incoming_warps += min(max(int(grant.warps), 0), run.trace.warps_per_cta)
        self.by_kernel[run.kid] = self.by_kernel.get(run.kid, 0) + 1

    def _free_cta_slot(self) -> int:
        """The lowest CTA slot neither resident nor booked by an arriving CTA."""
        ctas, booked = self.ctas, self.booked
        for k in range(len(ctas)):
            if ctas[k] is None and not booked[k]:
                return k
        raise RuntimeError(f"SM {self.sm_id}: a CTA was dispatched with every CTA slot taken")

    def admit(self, now: int) -> None:
        """Make the CTAs due by `now` resident."""
        while self.incoming and self.incoming[0][0] <= now:
            _, run, index, grant, slot = self.incoming.pop(0)
            wpc = run.trace.warps_per_cta
            n_now = min(max(int(grant.warps), 0), wpc)
            self.incoming_warps -= n_now
            self.booked[slot] = False
            cta = CTA(slot, run, index, self.sm_id, now)
            cta.alloc = grant
            cta.view.grant = grant
            self.ctas[slot] = cta
            self.count_cycles(now)
            self.n_ctas += 1
            st = self.stats
            if self.n_ctas > st.peak_resident_ctas:
                st.peak_resident_ctas = self.n_ctas
            n_now = min(n_now, len(self.warps) - self.n_warps)
            cta.waiting = list(range(n_now, wpc))
            cta.live = len(cta.waiting)
            if cta.waiting:
                self.partial.append(cta)
            started = [self._admit_warp(cta, k, now) for k in range(n_now)]
            ev = self.events
            if ev.cta_admitted:
                for h in ev.cta_admitted:
                    h(cta.view, now)
            if ev.warp_started:
                for w in started:
                    for h in ev.warp_started:
                        h(w.view, now)
            if cta.live == 0:
                self.retire(cta, now)

    def count_cycles(self, now: int) -> None:
        """Credit the cycles since the CTA count last changed to the current count."""
        hist = self.stats.cta_count_cycles
        n = self.n_ctas
        while len(hist) <= n:
            hist.append(0)
        if now > self.count_since:
            hist[n] += now - self.count_since
            self.count_since = now

    def _admit_warp(self, cta: CTA, k: int, now: int) -> Warp:
        run = cta.run
        warps = self.warps
        ws = 0
        while warps[ws] is not None:  # the first free slot (list.index would compare every warp with ==)
            ws += 1
        w = Warp(ws, ws % self.n_schedulers, cta, run, cta.index * run.trace.warps_per_cta + k, self.age,
                 self.sm_id, self.keep_masks, self.keep_vclass, run.watch[self.sm_id] if run.watch else None)
        self.age += 1
        self.warps[ws] = w
        self.n_warps += 1
        st = self.stats
        if self.n_warps > st.peak_resident_warps:
            st.peak_resident_warps = self.n_warps
        cta.warps.append(w)
        cta.view.warps.append(w.view)
        if not w.done:
            cta.live += 1
            self.fetch.want(w)
            if w.gate == 0:  # its first instruction reads another CTA's write (timing.xcta)
                run.gates.reach(w, self.issue.sm, run)
        return w

    def grant_waiting(self, now: int) -> None:
        """Ask the allocator for the waiting warps of partially admitted CTAs (oldest first)."""
        for cta in list(self.partial):
            free = len(self.warps) - self.n_warps - self.incoming_warps
            if free <= 0:
                return
            n = min(int(self.allocator.grant_warps(cta.alloc, len(cta.waiting))), len(cta.waiting), free)
            if n <= 0:
                continue
            ks, cta.waiting = cta.waiting[:n], cta.waiting[n:]
            if not cta.waiting:
                self.partial.remove(cta)
            started = []
            for k in ks:
                cta.live -= 1  # counted while waiting; _admit_warp counts it again if it has work
                started.append(self._admit_warp(cta, k, now))
            if self.events.warp_started:
                for w in started:
                    for h in self.events.warp_started:
                        h(w.view, now)
            if cta.live == 0:
                self.retire(cta, now)
            else:
                self.barriers.check(cta, now)

    # ------------------------------------------------------------ completion

    def warp_done(self, w: Warp, now: int) -> None:
        """`w` issued its last instruction (or exited)."""
        if w.done:
            return
        w.done = True
        issue = self.issue
        issue.drop(w)
        issue.policies[w.sched].on_finish(w.slot)  # e.g. leaves a two-level active set now
        run = w.run
        run.warp_insts += w.pos
        run.thread_insts += sum(w.lanes[:w.pos]) if w.pos < w.n else w.thread_total
        entry = self.pc_counts.get(id(run.static))
        if entry is None:
            entry = self.pc_counts[id(run.static)] = (run.static, np.zeros(len(run.static.instrs), np.int64), [])
        # exited before the end of its recorded stream: the part it issued
        entry[2].append(w.pc_slice if w.pos >= w.n else w.pc_slice[:w.pos])
        if len(entry[2]) >= 64:
            self._count_pcs(entry)
        if self.events.warp_finished:
            for h in self.events.warp_finished:
                h(w.view, now)
        cta = w.cta
        cta.live -= 1
        if w.inflight:  # its stores await acknowledgment: the CTA keeps its slots meanwhile
            cta.draining += 1
        if cta.live == 0:
            if not cta.draining:
                self.retire(cta, now)
        else:
            self.barriers.check(cta, now)

    @staticmethod
    def _count_pcs(entry: tuple[Any, Any, list[Any]]) -> None:
        _, counts, waiting = entry
        if waiting:
            counts += np.bincount(np.concatenate(waiting), minlength=len(counts))
            waiting.clear()

    def pc_totals(self) -> list[tuple[Any, Any]]:
        """(static kernel, issued instructions per pc) of the warps finished so far."""
        for entry in self.pc_counts.values():
            self._count_pcs(entry)
        return [(static, counts) for static, counts, _ in self.pc_counts.values()]

    def drained(self, w: Warp, now: int) -> None:
        """A finished warp's last outstanding memory operation completed."""
        cta = w.cta
        cta.draining -= 1
        if cta.live == 0 and not cta.draining:
            self.retire(cta, now)

    def retire(self, cta: CTA, now: int) -> None:
        for w in cta.warps:
            self.warps[w.slot] = None
            self.n_warps -= 1
        self.ctas[cta.slot] = None
        self.count_cycles(now)
        self.n_ctas -= 1
        kid = cta.run.kid
        self.by_kernel[kid] -= 1
        if not self.by_kernel[kid]:
            del self.by_kernel[kid]
        self.allocator.release(cta.alloc)
        self.stats.ctas_done += 1
        cta.run.ctas_done += 1
        if self.events.cta_retired:
            cta.view.insts = cta.issued()
            for h in self.events.cta_retired:
                h(cta.view, now)
        self.on_cta_done(self.sm_id, cta.run, cta.index, now)
        # a CTA and its warps refer to each other: unlinked, they and the warps' instruction
        # streams are freed now, not at the next full garbage collection (which a long
        # kernel may not reach before every warp of the launch has piled up)
        cta.warps = []
        if self.partial:
            self.grant_waiting(now)
