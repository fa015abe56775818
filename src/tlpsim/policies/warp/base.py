"""The WarpScheduler extension point.

A warp scheduler sees only candidates — `WarpView`s of the warps that could issue
this cycle — and returns them in the order it prefers; the scheduler unit issues
the first one whose functional unit can accept it. Hooks tell the policy what
happened (issue, long-latency stall, warp finished) so stateful policies such as
two-level can keep their own bookkeeping; they never see the SM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(slots=True)
class WarpView:
    """What a policy may know about a candidate warp."""

    slot: int        # warp slot in the scheduler's SM
    age: int         # dynamic warp id: lower = dispatched earlier
    cta: int         # CTA slot of the warp
    last_issue: int  # cycle this warp last issued (-1 never)
    waiting_mem: bool = False  # the warp has outstanding global-memory loads


class WarpScheduler:
    """Base class: oldest-first order; no state."""

    Params = None
    # True when `order` may leave candidates out (e.g. two-level: only the active
    # set may issue); the SM then asks the policy even about a lone candidate
    filters = False

    def __init__(self, params=None, n_slots: int = 64) -> None:
        self.params = params
        self.n_slots = n_slots

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
