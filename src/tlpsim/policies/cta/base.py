"""The CTAScheduler extension point.

The GPU asks the policy for CTA assignments when something changed: a launch
arrived, a CTA retired, a plug-in changed a dispatch hold or CTA limit, the policy
asked again (`self.port.redispatch()`), or its own timer fired (`port.wake_at`). (In
dense mode it is also asked every cycle, so an answer must not depend on time
except through timers: the conformance harness checks it.) The policy sees
`SMView`s (CTAs resident per SM and per kernel, whether one more CTA of a kernel
would be admitted now) and `KernelView`s (launch order, CTAs not yet dispatched,
CTA shape and resources) and returns (sm, kernel) pairs; the GPU dispatches the next
CTA of that kernel to that SM. `on_cta_done` reports completions; through the
plug-in contract the policy may also subscribe to every SM's events (`cta_retired`
carries the instructions the CTA issued) and act on SMs through its `GPUPort`
(`port.sm(k).set_cta_limit(kid, n)`, `hold_dispatch()`).

Context keywords: `n_sms`, `port` (a `tlpsim.timing.port.GPUPort`), `config`.
"""

from __future__ import annotations

from typing import Any, Sequence

from tlpsim.policies.registry import interface
from tlpsim.timing.plugin import Plugin
from tlpsim.timing.views import KernelView, SMView

__all__ = ["CTAScheduler", "KernelView", "SMView"]


@interface("cta_scheduler")
class CTAScheduler(Plugin):
    """Base: nothing assigned."""

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params, **context)
        self.n_sms = n_sms

    def assign(self, sms: Sequence[SMView], kernels: Sequence[KernelView], now: int) -> list[tuple[int, int]]:
        return []

    def on_cta_done(self, sm: int, kid: int, cta: int, now: int) -> None:
        """CTA number `cta` (its index in the grid) of kernel `kid` finished on SM `sm`."""
