"""Two-level warp scheduling (Gebhart et al., ISCA 2011; Narasiman et al., MICRO 2011):
a small active set is scheduled round-robin; a warp that issues a long-latency
(global/local memory) load leaves the active set, and the oldest ready pending
warp takes its place. The RFV thesis' baseline uses a 6-warp active (ready) queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler, WarpView


@register("warp_scheduler", "two_level")
class TwoLevel(WarpScheduler):
    stationarity = "stationary"
    @dataclass(frozen=True)
    class Params:
        active_warps: int = 6  # size of the active set (ready queue)

    filters = True  # only warps in the active set may issue

    def __init__(self, params=None, n_slots: int = 64, **context) -> None:
        super().__init__(params or self.Params(), n_slots, **context)
        self.active: list[int] = []  # slots, in round-robin order
        self.last = -1

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        cap = self.params.active_warps
        in_active = [w for w in ready if w.slot in self.active]
        if len(self.active) < cap:
            for w in sorted((w for w in ready if w.slot not in self.active), key=lambda w: w.age):
                if len(self.active) >= cap:
                    break
                self.active.append(w.slot)
                in_active.append(w)
        pos = {s: k for k, s in enumerate(self.active)}
        last = pos.get(self.last, -1)
        n = max(len(self.active), 1)
        return sorted(in_active, key=lambda w: (pos[w.slot] - last - 1) % n)

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        self.last = warp.slot
        if long_latency and warp.slot in self.active:
            self.active.remove(warp.slot)

    def on_finish(self, slot: int) -> None:
        if slot in self.active:
            self.active.remove(slot)
