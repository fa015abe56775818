"""The CTAScheduler extension point.

Each core cycle the GPU asks the policy for CTA assignments. The policy sees
`SMView`s (how many CTAs each SM holds and whether one more CTA of a given kernel
would fit) and `KernelView`s (launch order, CTAs not yet dispatched, CTA shape)
and returns (sm, kernel) pairs; the GPU dispatches the next CTA of that kernel to
that SM. Hooks report CTA completions so adaptive policies (LCS, DYNCTA) can learn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(slots=True)
class KernelView:
    kid: int                 # launch sequence number
    stream: int
    remaining: int           # CTAs not yet dispatched
    n_ctas: int
    threads_per_cta: int
    next_cta: int            # index of the next CTA to dispatch


@dataclass(slots=True)
class SMView:
    sm: int
    resident_ctas: int
    fits: Callable[[int], bool]   # fits(kid): one more CTA of kernel kid would fit now


class CTAScheduler:
    """Base: nothing assigned."""

    Params = None

    def __init__(self, params=None, n_sms: int = 1) -> None:
        self.params = params
        self.n_sms = n_sms

    def assign(self, sms: Sequence[SMView], kernels: Sequence[KernelView], now: int) -> list[tuple[int, int]]:
        return []

    def on_cta_done(self, sm: int, kid: int, cta: int, now: int) -> None:
        """A CTA of kernel `kid` finished on SM `sm`."""
