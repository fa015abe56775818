"""Greedy-then-oldest (Rogers et al., MICRO 2012): keep issuing from the same warp
until it stalls, then switch to the oldest ready warp."""

from __future__ import annotations

from typing import Iterable, Sequence

from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler, WarpView


@register("warp_scheduler", "gto")
class GreedyThenOldest(WarpScheduler):
    stationarity = "stationary"  # a fixed priority rule: the same choices at any point of a launch
    def __init__(self, params=None, n_slots: int = 64, **context) -> None:
        super().__init__(params, n_slots, **context)
        self.greedy = -1
        # exactly this rule (not a subclass that may override it): the compiled issue
        # stage applies it natively, keeping `greedy` current (timing/issue.py, docs/compiled-core.md)
        self.inline_rule = "gto" if type(self) is GreedyThenOldest else ""

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        g = self.greedy
        return sorted(ready, key=lambda w: (w.slot != g, w.age))

    def choose(self, ready: Sequence[WarpView], now: int) -> WarpView:
        g = self.greedy
        best = None
        for w in ready:
            if w.slot == g:
                return w
            if best is None or w.age < best.age:
                best = w
        return best

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        self.greedy = warp.slot
