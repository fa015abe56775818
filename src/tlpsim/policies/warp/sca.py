"""Sequential-CTA-aware warp scheduling, SCA (Lee et al., HPCA 2014, §4.2).

Made for block CTA scheduling (BCS), which places consecutive CTAs 2p and 2p+1 on
one SM. A *group* is warp i of both CTAs of a pair — the two warps that touch
neighbouring halves of the same cache lines. SCA is greedy on a group and round
robin inside it: it alternates between the group's warps while both can issue
("round robin between two warps of neighbouring thread blocks"); once one of them
stalls it moves to the next group of the same pair (warp i+1, ...), and when no
group of that pair can issue, to the oldest pair with a warp ready (greedy then
oldest, as GTO). Where a pair's CTAs are not on one SM (1D grids, odd leftovers) a
group has a single warp and SCA schedules greedily warp after warp.

Groups are formed among the warps of one scheduler unit (each unit schedules its
own warps); the warps of a pair's group share a unit when the CTAs occupy
consecutive warp slots.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler, WarpView
from tlpsim.timing.views import CTAView

__all__ = ["SequentialCTAAware"]

Group = tuple[int, int, int]  # (kernel launch, CTA pair, warp index within the CTA)


@register("warp_scheduler", "sca")
class SequentialCTAAware(WarpScheduler):
    """SCA (Lee et al. HPCA'14): round robin between warp i of two neighbouring CTAs, greedy on that pair of warps."""

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
        g = self.group(warp)
        self.group_of[warp.slot] = g
        self.members.setdefault(g, []).append(warp.slot)

    def on_finish(self, slot: int) -> None:
        g = self.group_of.pop(slot, None)
        if g is not None:
            ms = self.members.get(g, [])
            if slot in ms:
                ms.remove(slot)
            if not ms:
                self.members.pop(g, None)

    def group(self, w: WarpView) -> Group:
        wpc = max(self.wpc.get(w.kid, 1), 1)
        return (w.kid, w.cta_index // 2, w.gwarp % wpc)

    # ------------------------------------------------------------ choice

    def choose(self, ready: Sequence[WarpView], now: int) -> WarpView | None:
        by_group: dict[Group, list[WarpView]] = {}
        for w in ready:
            g = self.group_of.get(w.slot)
            if g is None:  # started before this scheduler saw it (not expected): place it now
                g = self.group_of[w.slot] = self.group(w)
                self.members.setdefault(g, []).append(w.slot)
            by_group.setdefault(g, []).append(w)
        g = self.current
        if g is None or not self._whole(g, by_group):
            g = self._next_group(g, by_group)
            self.current = g
        return self._round_robin(by_group[g])

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        first = self.choose(ready, now)
        rest = sorted((w for w in ready if w is not first), key=lambda w: (self.group_of.get(w.slot, (0, 0, 0)), w.age))
        return [first, *rest] if first is not None else rest

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        self.last = warp.slot
        g = self.group_of.get(warp.slot)
        if g is not None:
            self.current = g

    def _whole(self, g: Group, by_group: dict[Group, list[WarpView]]) -> bool:
        """Every resident warp of group g can issue now (none of them stalled)."""
        ready = by_group.get(g)
        return ready is not None and len(ready) == len(self.members.get(g, ()))

    def _next_group(self, g: Group | None, by_group: dict[Group, list[WarpView]]) -> Group:
        """After group g stalled: a whole group of the same pair after g, else any group of
        that pair with a ready warp (after g, wrapping), else the oldest ready group."""
        if g is not None:
            same = sorted(x for x in by_group if x[:2] == g[:2])
            if same:
                after = [x for x in same if x[2] > g[2]] + [x for x in same if x[2] <= g[2]]
                for x in after:
                    if self._whole(x, by_group):
                        return x
                return after[0]
        return min(by_group)

    def _round_robin(self, ws: list[WarpView]) -> WarpView:
        """The group's warp after the one that issued last (alternation within the group)."""
        if len(ws) == 1:
            return ws[0]
        ws = sorted(ws, key=lambda w: w.age)
        for k, w in enumerate(ws):
            if w.slot == self.last:
                return ws[(k + 1) % len(ws)]
        return ws[0]
