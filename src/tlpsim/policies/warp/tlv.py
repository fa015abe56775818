"""Two-level warp scheduling with fetch groups, TLV (Narasiman et al., MICRO 2011),
as Lee et al. (HPCA 2014, §5.4) compare against it: "subdivides warps to fetch
groups and select from one fetch group until all warps in the fetch group are
stalled. It schedules round robin in a fetch group."

A scheduler unit's warps form fetch groups of `group_size` by warp slot (its k-th
own slot goes to group k // group_size). The current group issues round robin;
when none of its warps can issue, priority passes to the next group (round robin
over groups) that has a ready warp, so groups reach their long-latency loads at
different times. (The `two_level` scheduler is the other two-level design, Gebhart
et al.'s active/pending sets.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler, WarpView

__all__ = ["FetchGroupTwoLevel"]


@dataclass(frozen=True)
class TLVParams:
    group_size: int = 8   # warps per fetch group (Narasiman et al.: 8)

    def __post_init__(self) -> None:
        if self.group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {self.group_size}")


@register("warp_scheduler", "tlv")
class FetchGroupTwoLevel(WarpScheduler):
    """Two-level round robin with fetch groups (Narasiman et al. MICRO'11): stay on one group until all its warps stall."""
    stationarity = "stationary"

    Params = TLVParams

    def __init__(self, params: Any = None, n_slots: int = 64, **context: Any) -> None:
        super().__init__(params or TLVParams(), n_slots, **context)
        n_sched = int(getattr(getattr(self.config, "sm", None), "n_schedulers", 0) or context.get("n_schedulers", 1))
        self.n_sched = max(n_sched, 1)
        per_unit = -(-n_slots // self.n_sched)
        self.n_groups = max(1, -(-per_unit // self.params.group_size))
        self.current = 0
        self.last = -1

    def fetch_group(self, slot: int) -> int:
        return (slot // self.n_sched) // self.params.group_size

    def choose(self, ready: Sequence[WarpView], now: int) -> WarpView | None:
        if not ready:
            return None
        groups = {self.fetch_group(w.slot) for w in ready}
        g = self.current
        if g not in groups:  # every warp of the current group stalled: next group with a ready warp
            g = min(groups, key=lambda x: (x - self.current) % self.n_groups)
            self.current = g
        mine = [w for w in ready if self.fetch_group(w.slot) == g]
        n = self.n_slots
        return min(mine, key=lambda w: (w.slot - self.last - 1) % n)

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        first = self.choose(ready, now)
        n, ng, cur = self.n_slots, self.n_groups, self.current
        return sorted(ready, key=lambda w: (w is not first, (self.fetch_group(w.slot) - cur) % ng,
                                            (w.slot - self.last - 1) % n))

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        self.last = warp.slot
        self.current = self.fetch_group(warp.slot)
