"""The WarpScheduler extension point.

A warp scheduler sees only candidates — `WarpView`s of the warps that could issue
this cycle — and returns them in the order it prefers; the scheduler unit issues
the first one whose functional unit and operand storage accept it. Hooks tell the
policy what happened (issue, long-latency stall, warp finished) so stateful
policies such as two-level can keep their own bookkeeping; they never see the SM.
Anything more (events such as `l1d_access` or `cta_admitted`, holding warps) goes
through the plug-in contract: `events`, `self.port` (`tlpsim.timing.port.SMPort`).

There is one instance per scheduler unit; context keywords: `n_slots` (warp slots
of the SM), `index` (this scheduler's number; warp `w` belongs to scheduler
`w.sched`), `port`, `config`.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from tlpsim.policies.registry import interface
from tlpsim.timing.plugin import Plugin
from tlpsim.timing.views import WarpView

__all__ = ["WarpScheduler", "WarpView"]


@interface("warp_scheduler")
class WarpScheduler(Plugin):
    """Base class: oldest-first order; no state."""

    # True when `order` may leave candidates out (e.g. two-level: only the active
    # set may issue); the SM then asks the policy even about a lone candidate
    filters = False

    def __init__(self, params: Any = None, n_slots: int = 64, **context: Any) -> None:
        super().__init__(params, **context)
        self.n_slots = n_slots
        self.index = int(context.get("index", 0))

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        return sorted(ready, key=lambda w: w.age)

    def choose(self, ready: Sequence[WarpView], now: int) -> WarpView | None:
        """The policy's first choice (what `order` would put first; None when it
        allows none of them); policies may override it with a cheaper computation."""
        return next(iter(self.order(ready, now)), None)

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        """`warp` issued an instruction; `long_latency` for global/local memory loads and
        barriers (the warp will wait long: two-level moves it out of the active set)."""

    def on_finish(self, slot: int) -> None:
        """The warp in `slot` finished (the slot may be reused by a new warp)."""
