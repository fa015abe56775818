"""Sequential-CTA-aware warp scheduling, SCA (Lee et al., HPCA 2014, §4.2).

Made for block CTA scheduling (BCS), which dispatches consecutive CTAs to one SM as
a block (a pair). A *group* is warp i of every CTA of one block — the warps that
touch neighbouring parts of the same cache lines. The block is what the CTA
scheduler dispatched: the SM port's `dispatch_group` (BCS declares each block
through `GPUPort.group_ctas`), so a CTA dispatched alone (the end of the grid,
T_new = 1, BCS's odd slot) forms a block of its own and never shifts the pairing
of the CTAs after it.

SCA is greedy on a group and round robin inside it (§4.2: "scheduled in a
round-robin manner between two warps of neighboring thread blocks ... the warp
scheduler remains greedy as these set of warps are prioritized, similar to GTO
warp scheduler, until one of the two warps stall. Then, the next group of warps
within the same block is scheduled"):

- the current group keeps the priority while one of its warps can issue and none
  of them *stalls* — waits on a long-latency operation (a global/local load's data,
  or a barrier). A warp that merely cannot issue this cycle (a short scoreboard
  wait, an empty instruction buffer) is not a stall: the group's other warp issues;
- inside the group the warps alternate (the one after the warp that issued last);
- when the group stalls, the next group of the same block (warp i+1, ..., wrapping)
  whose warps can issue and none stalls takes over, else one of that block with a
  warp ready; when no group of the block can issue, the oldest ready group (greedy
  then oldest, as GTO).

Where no block shares the SM (1D kernels, which BCS dispatches one by one) every
group has a single warp and SCA schedules greedily warp after warp of a CTA.

Groups are formed among the warps of one scheduler unit (each unit schedules its
own warps); the warps of a block's group share a unit when the CTAs occupy
consecutive warp slots.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler, WarpView
from tlpsim.timing.views import CTAView

__all__ = ["LONG_STALLS", "SequentialCTAAware"]

Group = tuple[int, int, int]  # (kernel launch, block, warp index within the CTA)

#: why a warp that cannot issue counts as stalled (SMPort.blocked_on): long-latency waits
LONG_STALLS = frozenset({"memory", "barrier"})


@register("warp_scheduler", "sca")
class SequentialCTAAware(WarpScheduler):
    """SCA (Lee et al. HPCA'14): round robin between warp i of the CTAs BCS dispatched together, greedy on that group."""
    stationarity = "stationary"

    events = frozenset({"cta_admitted", "warp_started"})

    def __init__(self, params: Any = None, n_slots: int = 64, **context: Any) -> None:
        super().__init__(params, n_slots, **context)
        self.wpc: dict[int, int] = {}                 # kid -> warps per CTA
        self.group_of: dict[int, Group] = {}          # my warp slots -> group
        self.members: dict[Group, list[int]] = {}     # group -> my resident warp slots (admission order)
        self.current: Group | None = None
        self.last = -1                                # slot that issued last

    # ------------------------------------------------------------ bookkeeping

    def on_cta_admitted(self, cta: CTAView, now: int) -> None:
        self.wpc[cta.kid] = cta.n_warps

    def on_warp_started(self, warp: WarpView, now: int) -> None:
        if warp.sched != self.index:
            return
        self._place(warp)

    def on_finish(self, slot: int) -> None:
        g = self.group_of.pop(slot, None)
        if g is not None:
            ms = self.members.get(g, [])
            if slot in ms:
                ms.remove(slot)
            if not ms:
                self.members.pop(g, None)

    def block(self, w: WarpView) -> int:
        """The block of w's CTA: the CTA scheduler's dispatch group, else the CTA alone
        (a negative number, distinct from every group's)."""
        dg = self.port.dispatch_group(w.kid, w.cta_index) if self.port is not None else None
        return dg.group if dg is not None else -1 - w.cta_index

    def group(self, w: WarpView) -> Group:
        wpc = max(self.wpc.get(w.kid, 1), 1)
        return (w.kid, self.block(w), w.gwarp % wpc)

    def _place(self, w: WarpView) -> Group:
        g = self.group_of[w.slot] = self.group(w)
        self.members.setdefault(g, []).append(w.slot)
        return g

    # ------------------------------------------------------------ choice

    def choose(self, ready: Sequence[WarpView], now: int) -> WarpView | None:
        by_group: dict[Group, list[WarpView]] = {}
        for w in ready:
            g = self.group_of.get(w.slot)
            if g is None:  # started before this scheduler saw it (not expected): place it now
                g = self._place(w)
            by_group.setdefault(g, []).append(w)
        if not by_group:
            return None
        g = self.current
        if g is None or g not in by_group or self._stalled(g, by_group[g]):
            g = self._next_group(g, by_group)
            self.current = g
        return self._round_robin(by_group[g])

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        first = self.choose(ready, now)
        rest = sorted((w for w in ready if w is not first), key=lambda w: w.age)
        return [first, *rest] if first is not None else rest

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        self.last = warp.slot
        g = self.group_of.get(warp.slot)
        if g is not None:
            self.current = g

    def _stalled(self, g: Group, ready: list[WarpView]) -> bool:
        """A resident warp of group g that cannot issue waits on a long-latency operation."""
        ms = self.members.get(g, ())
        if len(ready) == len(ms) or self.port is None:
            return False
        can = {w.slot for w in ready}
        return any(s not in can and self.port.blocked_on(s) in LONG_STALLS for s in ms)

    def _next_group(self, g: Group | None, by_group: dict[Group, list[WarpView]]) -> Group:
        """After group g stalled: a group of the same block after g (wrapping) with no
        stalled warp, else any group of that block with a ready warp, else the group
        of the oldest ready warp."""
        if g is not None:
            same = sorted(x for x in by_group if x[:2] == g[:2])
            if same:
                after = [x for x in same if x[2] > g[2]] + [x for x in same if x[2] <= g[2]]
                for x in after:
                    if x != g and not self._stalled(x, by_group[x]):
                        return x
                return after[0]
        return min(by_group, key=lambda x: min(w.age for w in by_group[x]))

    def _round_robin(self, ws: list[WarpView]) -> WarpView:
        """The group's warp after the one that issued last (alternation within the group)."""
        if len(ws) == 1:
            return ws[0]
        ws = sorted(ws, key=lambda w: w.age)
        for k, w in enumerate(ws):
            if w.slot == self.last:
                return ws[(k + 1) % len(ws)]
        return ws[0]
