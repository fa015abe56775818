"""The throttle decision of lazy CTA scheduling (Lee et al., HPCA 2014, §4.1), shared
by the `lcs` and `lcs_bcs` CTA schedulers.

Phase 1 (monitor): the SM runs T_max CTAs of a kernel under a greedy warp
scheduler. Phase 2 (throttle): when the first of them retires, Eq. 1 gives

    T_new = floor( Σ_x inst_x / max_x inst_x )

over the CTAs of that kernel on the SM (the retired one included; `inst_x` = warp
instructions CTA x issued so far). Phase 3 (lazy execution): at most T_new CTAs of
the kernel stay resident on the SM — a per-kernel CTA limit through the port, so
the CTAs already there run on and new ones are dispatched only below the limit.

The decision is made per kernel launch, on every SM (`scope = "per_sm"`) or on one
SM and applied to all (`scope = "one_sm"`, the paper's hardware-complexity note:
"the measurement is only needed in a single core"); §5.1's `ceil` variant rounds
Eq. 1 up.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Sequence

from tlpsim.timing.plugin import Counter
from tlpsim.timing.views import CTAView

__all__ = ["LAZY_COUNTERS", "LAZY_EVENTS", "LazyPhases", "LazyThrottle", "PhaseOneTrace", "eq1"]

Rounding = Literal["floor", "ceil"]
Scope = Literal["per_sm", "one_sm"]

LAZY_EVENTS = frozenset({"kernel_start", "kernel_end", "cta_retired", "timer"})

LAZY_COUNTERS = {
    "decisions": Counter("decisions", "throttle decisions (one per SM and kernel launch; per launch with one_sm)"),
    "t_new_sum": Counter("CTAs", "sum of T_new over the decisions (mean T_new = t_new_sum / decisions)"),
    "t_max_sum": Counter("CTAs", "sum of the CTAs resident when each decision was made"),
    "throttled": Counter("decisions", "decisions with T_new below the CTAs resident at the time"),
}


def eq1(insts: Sequence[int], rounding: Rounding = "floor") -> int:
    """T_new of Eq. 1 from the instructions issued by each CTA of the kernel on the
    SM; at least 1. Raises ValueError on an empty list."""
    if not insts:
        raise ValueError("Eq. 1 needs the instruction count of at least one CTA")
    top = max(insts)
    if top <= 0:
        return 1
    ratio = sum(insts) / top
    t = math.ceil(ratio - 1e-12) if rounding == "ceil" else math.floor(ratio + 1e-12)
    return max(1, int(t))


class LazyThrottle:
    """Decisions of one CTA scheduler: which (SM, kernel) pairs have been throttled,
    to what, and (optionally) the Phase-1 record of one SM for Fig. 8.

    `port` is the scheduler's GPUPort; `counts` its declared counters."""

    def __init__(self, port: Any, counts: Any, rounding: Rounding = "floor", scope: Scope = "per_sm",
                 monitor_sm: int = 0) -> None:
        self.port = port
        self.counts = counts
        self.rounding = rounding
        self.scope = scope
        self.monitor_sm = monitor_sm
        self.t_new: dict[tuple[int, int], int] = {}   # (sm, kid) -> T_new decided (while the launch runs)
        self.decided_kernels: set[int] = set()        # one_sm: kernels decided for every SM
        self.history: list[tuple[int, int, int, int]] = []  # every decision: (kid, sm, CTAs resident, T_new)

    def decided(self, sm: int, kid: int) -> bool:
        return kid in self.decided_kernels if self.scope == "one_sm" else (sm, kid) in self.t_new

    def on_retired(self, cta: CTAView, resident: Sequence[CTAView]) -> int | None:
        """The first CTA of its kernel to retire on its SM ends Phase 1 there: apply
        Eq. 1 over it and `resident` (the SM's CTAs still resident; other kernels'
        are ignored). Returns T_new when a decision was made, else None."""
        sm, kid = cta.sm, cta.kid
        if self.decided(sm, kid):
            return None
        if self.scope == "one_sm" and sm != self.monitor_sm:
            return None
        insts = [cta.insts] + [c.insts for c in resident if c.kid == kid]
        t_new = eq1(insts, self.rounding)
        c = self.counts
        c.decisions += 1
        c.t_new_sum += t_new
        c.t_max_sum += len(insts)
        if t_new < len(insts):
            c.throttled += 1
        self.history.append((kid, sm, len(insts), t_new))
        if self.scope == "one_sm":
            self.decided_kernels.add(kid)
            for k in range(self.port.n_sms):
                self.t_new[(k, kid)] = t_new
            self.port.set_cta_limit(kid, t_new)
        else:
            self.t_new[(sm, kid)] = t_new
            self.port.sm(sm).set_cta_limit(kid, t_new)
        if self.scope == "one_sm" or all((k, kid) in self.t_new for k in range(self.port.n_sms)):
            self.port.settled(kid)  # every SM's limit is set: the launch is stationary from here (sampling)
        return t_new

    def forget(self, kid: int) -> None:
        """The launch ended: drop its decisions and lift its limits."""
        self.decided_kernels.discard(kid)
        for key in [k for k in self.t_new if k[1] == kid]:
            del self.t_new[key]
        self.port.set_cta_limit(kid, None)


class PhaseOneTrace:
    """Per-CTA issued instructions on one SM, sampled every `every` cycles from the
    launch's start until that SM's throttle decision (the data of Fig. 8)."""

    def __init__(self, port: Any, sm: int, every: int) -> None:
        self.port = port
        self.sm = sm
        self.every = every
        self.samples: list[tuple[int, int, dict[int, int]]] = []  # (cycle, kid, {CTA index: insts})
        self.active: set[int] = set()

    def start(self, kid: int, now: int) -> None:
        self.active.add(kid)
        self.port.wake_at(now + self.every, ("phase1", kid))

    def sample(self, kid: int, now: int, extra: CTAView | None = None) -> None:
        ctas = {c.index: c.insts for c in self.port.sm(self.sm).resident_ctas() if c.kid == kid}
        if extra is not None:
            ctas[extra.index] = extra.insts
        self.samples.append((now, kid, ctas))

    def tick(self, tag: Any, now: int) -> bool:
        """Timer handler; False when the tag is not ours."""
        if not (isinstance(tag, tuple) and len(tag) == 2 and tag[0] == "phase1"):
            return False
        kid = tag[1]
        if kid in self.active:
            self.sample(kid, now)
            self.port.wake_at(now + self.every, tag)
        return True

    def stop(self, kid: int, now: int, retired: CTAView) -> None:
        if kid in self.active:
            self.sample(kid, now, retired)
            self.active.discard(kid)


class LazyPhases:
    """Mixin of a CTA scheduler that throttles lazily: the event handlers of LCS's
    three phases. The scheduler's `params` carry `rounding`, `scope`, `monitor_sm`,
    `trace_sm` and `trace_every`; it declares `LAZY_EVENTS` and `LAZY_COUNTERS`."""

    port: Any
    counts: Any
    params: Any

    def init_lazy(self) -> None:
        p = self.params
        self.throttle = LazyThrottle(self.port, self.counts, p.rounding, p.scope, p.monitor_sm)
        self.trace = PhaseOneTrace(self.port, p.trace_sm, p.trace_every) if p.trace_sm >= 0 else None

    def on_kernel_start(self, kernel: Any, now: int) -> None:
        if self.trace is not None:
            self.trace.start(kernel.kid, now)

    def on_kernel_end(self, kernel: Any, now: int) -> None:
        parent = getattr(super(), "on_kernel_end", None)
        if parent is not None:
            parent(kernel, now)
        self.throttle.forget(kernel.kid)
        if self.trace is not None:
            self.trace.active.discard(kernel.kid)

    def on_cta_retired(self, cta: CTAView, now: int) -> None:
        if self.throttle.decided(cta.sm, cta.kid):
            return
        resident = self.port.sm(cta.sm).resident_ctas()
        if self.throttle.on_retired(cta, resident) is not None and self.trace is not None \
                and cta.sm == self.trace.sm:
            self.trace.stop(cta.kid, now, cta)

    def on_timer(self, tag: Any, now: int) -> None:
        if self.trace is not None:
            self.trace.tick(tag, now)
