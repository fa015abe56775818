"""Baseline CTA scheduling (GPGPU-Sim): each cycle, visit the SMs round-robin and
give each at most one CTA of the oldest kernel that still has CTAs and fits, up to
maximum occupancy."""

from __future__ import annotations

from typing import Sequence

from tlpsim.policies.cta.base import CTAScheduler, KernelView, SMView
from tlpsim.policies.registry import register


@register("cta_scheduler", "round_robin")
class RoundRobinCTAScheduler(CTAScheduler):
    stationarity = "stationary"
    def __init__(self, params=None, n_sms: int = 1, **context) -> None:
        super().__init__(params, n_sms, **context)
        self.next_sm = 0
        # exactly this rule (not a subclass that may override it): the CTA dispatcher
        # applies it itself, without building the views (timing/gpu.py, docs/compiled-core.md)
        self.inline_rule = "round_robin" if type(self) is RoundRobinCTAScheduler else ""

    def assign(self, sms: Sequence[SMView], kernels: Sequence[KernelView], now: int) -> list[tuple[int, int]]:
        out = []
        if not kernels:
            return out
        n = len(sms)
        start = self.next_sm
        for k in range(n):
            sm = sms[(start + k) % n]
            for kv in kernels:  # oldest launch first; a later kernel fills what an earlier leaves
                if kv.remaining > sum(1 for _, kid in out if kid == kv.kid) and sm.fits(kv.kid):
                    out.append((sm.sm, kv.kid))
                    break
        if out:
            self.next_sm = (out[-1][0] + 1) % n
        return out
