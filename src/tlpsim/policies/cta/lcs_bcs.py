"""LCS and BCS combined (Lee et al., HPCA 2014, §4.3, Fig. 10).

A kernel with 1D CTAs runs under LCS: round robin up to T_max, then Eq. 1's T_new.
A kernel with 2D CTAs runs under BCS from its first CTA — Phase 1 dispatches
consecutive CTA pairs — and Eq. 1 at the first retirement on an SM sets the T_new
that bounds its BCS block slots from then on (T_new // 2 pairs, and a single CTA in
the odd slot under BCS's default `odd_slot = "fill"`). The warp scheduler is chosen
by the configuration: the paper uses GTO for 1D and SCA for 2D workloads (SCA
degenerates to greedy scheduling of single warps where no pair shares the SM).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tlpsim.policies.cta.bcs import BCSParams, BlockCTAScheduler
from tlpsim.policies.cta.lazy import LAZY_COUNTERS, LAZY_EVENTS, LazyPhases
from tlpsim.policies.cta.lcs import LCSParams
from tlpsim.policies.registry import register


@dataclass(frozen=True)
class LCSBCSParams(BCSParams, LCSParams):
    """BCS's block size and LCS's Eq. 1 rounding, scope and Phase-1 record."""

    def __post_init__(self) -> None:
        BCSParams.__post_init__(self)
        LCSParams.__post_init__(self)


@register("cta_scheduler", "lcs_bcs")
class LazyBlockCTAScheduler(LazyPhases, BlockCTAScheduler):
    """LCS+BCS (Lee et al. HPCA'14 Fig. 10): BCS pairs for 2D grids, throttled to Eq. 1's T_new; LCS for 1D."""
    stationarity = "settles"

    Params = LCSBCSParams
    events = BlockCTAScheduler.events | LAZY_EVENTS
    counters = {**BlockCTAScheduler.counters, **LAZY_COUNTERS}

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params or LCSBCSParams(), n_sms, **context)
        self.init_lazy()
