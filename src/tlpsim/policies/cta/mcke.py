"""Concurrent kernel execution, mixed (mCKE) and spatial (CKE) (Lee et al., HPCA
2014, §4.4, Fig. 11, Table 3).

Both run kernels of different streams at the same time, each kernel limited to a
number of CTAs per SM (`limits`, by kernel name: the T_new LCS found for it; a
kernel not named gets its occupancy limit).

- `mcke`: CTAs of every running kernel share each SM — every SM is offered one CTA
  of each kernel per dispatch round (the kernel it starts with rotates), so the
  kernels' CTAs interleave on every core.
- `cke`: the baseline concurrent kernel execution: an SM runs CTAs of one stream at
  a time. A drained SM (no resident CTA) takes the stream with pending CTAs that
  owns the fewest SMs, so the streams split the SMs evenly and an SM whose stream
  has nothing left to dispatch serves another once it drains (as an SM of
  GPGPU-Sim without concurrent kernels per SM picks its next kernel).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from tlpsim.policies.cta.base import CTAScheduler, KernelView, SMView
from tlpsim.policies.registry import register
from tlpsim.timing.views import KernelInfo

__all__ = ["ConcurrentKernels", "MixedConcurrentKernels", "SpatialConcurrentKernels"]


@dataclass(frozen=True)
class CKEParams:
    limits: dict[str, int] = field(default_factory=dict)  # kernel name -> CTAs per SM (Table 3 "# of CTAs per kernel")

    def __post_init__(self) -> None:
        bad = {k: v for k, v in self.limits.items() if not isinstance(v, int) or v < 1}
        if bad:
            raise ValueError(f"limits must be CTAs per SM >= 1, got {bad}")


class ConcurrentKernels(CTAScheduler):
    """Common part: the per-kernel CTA limits, set when a launch starts."""

    Params = CKEParams
    events = frozenset({"kernel_start"})

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params or CKEParams(), n_sms, **context)

    def on_kernel_start(self, kernel: KernelInfo, now: int) -> None:
        lim = self.params.limits.get(kernel.name)
        if lim is not None:
            self.port.set_cta_limit(kernel.kid, lim)


@register("cta_scheduler", "mcke")
class MixedConcurrentKernels(ConcurrentKernels):
    """Mixed concurrent kernel execution (Lee et al. HPCA'14 §4.4): kernels share every SM, each under its CTA limit."""

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params, n_sms, **context)
        self.next_sm = 0
        self.first_kernel = 0  # rotates: which pending kernel an SM is offered first

    def assign(self, sms: Sequence[SMView], kernels: Sequence[KernelView], now: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        if not kernels:
            return out
        given: dict[int, int] = {}
        n, m = len(sms), len(kernels)
        for k in range(n):
            sm = sms[(self.next_sm + k) % n]
            for j in range(m):
                kv = kernels[(self.first_kernel + k + j) % m]
                if kv.remaining > given.get(kv.kid, 0) and sm.fits(kv.kid):
                    out.append((sm.sm, kv.kid))
                    given[kv.kid] = given.get(kv.kid, 0) + 1
                    break  # one CTA per SM per dispatch round, like the baseline
        if out:
            self.next_sm = (out[-1][0] + 1) % n
            self.first_kernel = (self.first_kernel + 1) % m
        return out


@register("cta_scheduler", "cke")
class SpatialConcurrentKernels(ConcurrentKernels):
    """Baseline concurrent kernel execution (Lee et al. HPCA'14 §4.4): each SM runs one stream's CTAs at a time."""

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params, n_sms, **context)
        self.owner: dict[int, int] = {}  # sm -> stream it serves
        self.next_sm = 0

    def assign(self, sms: Sequence[SMView], kernels: Sequence[KernelView], now: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        if not kernels:
            return out
        pending_streams = sorted({kv.stream for kv in kernels})
        given: dict[int, int] = {}
        n = len(sms)
        for k in range(n):
            sm = sms[(self.next_sm + k) % n]
            own = self.owner.get(sm.sm)
            drained = not any(sm.resident_by_kernel.values())  # none resident or arriving
            if drained and own not in pending_streams:
                own = self._least_served(pending_streams)
                self.owner[sm.sm] = own
            for kv in kernels:  # the owner stream's oldest pending launch
                if kv.stream == own and kv.remaining > given.get(kv.kid, 0) and sm.fits(kv.kid):
                    out.append((sm.sm, kv.kid))
                    given[kv.kid] = given.get(kv.kid, 0) + 1
                    break
        if out:
            self.next_sm = (out[-1][0] + 1) % n
        return out

    def _least_served(self, streams: list[int]) -> int:
        count = {s: 0 for s in streams}
        for s in self.owner.values():
            if s in count:
                count[s] += 1
        return min(streams, key=lambda s: (count[s], s))
