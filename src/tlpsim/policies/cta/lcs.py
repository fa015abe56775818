"""Lazy CTA scheduling, LCS (Lee et al., HPCA 2014, §4.1, Eq. 1, Fig. 8).

Dispatch is the baseline's round robin up to the occupancy limit T_max; when the
first CTA of a kernel retires on an SM, Eq. 1 over the instructions each of its
CTAs issued sets T_new, and from then on at most T_new CTAs of that kernel are
resident there (see `tlpsim.policies.cta.lazy`). Run it with a greedy warp
scheduler (`sm.warp_scheduler = "gto"`), as the paper does: the greedy scheduler
is what makes the instruction counts differ between CTAs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tlpsim.policies.cta.lazy import LAZY_COUNTERS, LAZY_EVENTS, LazyPhases
from tlpsim.policies.cta.round_robin import RoundRobinCTAScheduler
from tlpsim.policies.registry import register


@dataclass(frozen=True)
class LCSParams:
    rounding: Literal["floor", "ceil"] = "floor"   # Eq. 1 rounds down; §5.1 discusses rounding up
    scope: Literal["per_sm", "one_sm"] = "per_sm"  # measure on every SM, or on `monitor_sm` and apply to all (§4.1)
    monitor_sm: int = 0                            # the measuring SM when scope = "one_sm"
    trace_sm: int = -1                             # record Phase 1 per-CTA instructions on this SM (Fig. 8); -1: off
    trace_every: int = 200                         # sampling interval of that record, core cycles

    def __post_init__(self) -> None:
        if self.trace_every < 1:
            raise ValueError(f"trace_every must be >= 1, got {self.trace_every}")


@register("cta_scheduler", "lcs")
class LazyCTAScheduler(LazyPhases, RoundRobinCTAScheduler):
    """Lazy CTA scheduling (Lee et al. HPCA'14): throttle each SM to Eq. 1's T_new after its first CTA retires."""
    stationarity = "settles"  # Eq. 1 decides once per SM and launch (port.settled when all have)

    Params = LCSParams
    events = LAZY_EVENTS
    counters = LAZY_COUNTERS

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params or LCSParams(), n_sms, **context)
        self.init_lazy()
