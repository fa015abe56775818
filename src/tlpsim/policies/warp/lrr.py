"""Loose round-robin: rotate priority, starting after the warp that issued last."""

from __future__ import annotations

from typing import Iterable, Sequence

from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler, WarpView


@register("warp_scheduler", "lrr")
class LooseRoundRobin(WarpScheduler):
    """GPGPU-Sim's `lrr`: the next warp after the last issued one goes first."""
    stationarity = "stationary"

    def __init__(self, params=None, n_slots: int = 64, **context) -> None:
        super().__init__(params, n_slots, **context)
        self.last = -1

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        n, last = self.n_slots, self.last
        return sorted(ready, key=lambda w: (w.slot - last - 1) % n)

    def choose(self, ready: Sequence[WarpView], now: int) -> WarpView:
        n, last = self.n_slots, self.last
        return min(ready, key=lambda w: (w.slot - last - 1) % n)

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        self.last = warp.slot
