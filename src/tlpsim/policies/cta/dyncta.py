"""DYNCTA: dynamic CTA scheduling (Kayiran et al., "Neither more nor less:
optimizing thread-level parallelism for GPGPUs", PACT 2013: the DYNCTA algorithm), as
Lee et al. (HPCA 2014, §5.4) compare against it.

Each SM starts a kernel with n = max(1, T_max // 2) CTAs (Lee et al. §5.4). At the
end of every sampling period it reads two counters of that period, as Kayiran et
al. define them:

- C_idle: cycles the SM had no warp to issue — none resident, or none able to issue
  while none waits on memory or on a result in the pipeline (barriers, empty
  instruction buffers, paused warps): this model's IDLE cycle class;
- C_mem: cycles *all* its warps waited for data from memory (`SMWindow.
  mem_wait_cycles`: nothing issued and every warp not paused waited on a load). Not
  the MEM_STALL class, which counts a cycle as soon as *some* warp waits on memory
  and nothing issues: on a streaming kernel that exceeds t_mem_high even at n = 1,
  and drove n to its floor (blackscholes: 80.7k cycles against GTO's 35.4k).

and moves n by one (their algorithm):

    C_idle >= t_idle             -> n + 1   (not enough warps to hide latency)
    else C_mem < t_mem_low       -> n + 1   (memory lightly loaded)
    else C_mem > t_mem_high      -> n - 1   (memory congested)

within [1, T_max]. New CTAs are dispatched while fewer than n are resident. When n
falls below the CTAs resident, the most recently admitted ones are *paused*: their
warps are held (never issued) until a CTA retires or n grows, and a paused CTA is
resumed before any new CTA is dispatched (CTA pausing). The sampling period and
thresholds are Kayiran et al.'s (their parameter table; Lee et al.: "We used the
same set of thresholds that were used in [16]").

On a latency-bound kernel the rule can lock n low: with few CTAs all warps wait on
memory for much of a period, which reads as congestion (docs/experiments/lcs_bcs.md
gives the numbers); that is the mechanism as published, not tuned here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tlpsim.policies.cta.bcs import occupancy_limit
from tlpsim.policies.cta.round_robin import RoundRobinCTAScheduler
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter
from tlpsim.timing.views import CTAView, KernelInfo, KernelView, WindowCounters

__all__ = ["DynCTA", "DynCTAParams", "next_n"]


@dataclass(frozen=True)
class DynCTAParams:
    # Kayiran et al., PACT'13 (the DYNCTA algorithm and its table of parameters): the sampling
    # period and the three thresholds, in core cycles of one period
    window_cycles: int = 2048   # sampling period
    t_idle: int = 16            # C_idle at or above which n grows (too few warps)
    t_mem_low: int = 128        # C_mem below which n grows (memory lightly loaded)
    t_mem_high: int = 384       # C_mem above which n shrinks (memory congested)

    def __post_init__(self) -> None:
        if self.window_cycles < 1 or self.t_mem_low > self.t_mem_high:
            raise ValueError("need window_cycles >= 1 and t_mem_low <= t_mem_high")


def next_n(n: int, c_idle: int, c_mem: int, t_max: int, p: DynCTAParams) -> int:
    """DYNCTA's CTA count for the next period."""
    if c_idle >= p.t_idle or c_mem < p.t_mem_low:
        n += 1
    elif c_mem > p.t_mem_high:
        n -= 1
    return max(1, min(n, t_max))


@register("cta_scheduler", "dyncta")
class DynCTA(RoundRobinCTAScheduler):
    """DYNCTA (Kayiran et al. PACT'13): per-SM CTA count +-1 per sampling period from idle / memory-wait cycles, with CTA pausing."""
    stationarity = "non_stationary"  # re-decides every window for the whole launch

    Params = DynCTAParams
    events = frozenset({"kernel_start", "kernel_end", "window", "cta_retired"})
    counters = {
        "increments": Counter("decisions", "periods that raised an SM's CTA count"),
        "decrements": Counter("decisions", "periods that lowered an SM's CTA count"),
        "pauses": Counter("CTAs", "CTAs paused"),
        "resumes": Counter("CTAs", "paused CTAs resumed"),
        "n_sum": Counter("CTAs", "sum over periods and SMs of the CTA count n (mean n = n_sum / samples)"),
        "samples": Counter("periods", "SM-periods sampled"),
    }

    def __init__(self, params: Any = None, n_sms: int = 1, **context: Any) -> None:
        super().__init__(params or DynCTAParams(), n_sms, **context)
        self.n: list[int] = [0] * n_sms            # per SM: CTAs allowed (0 before a kernel starts)
        self.t_max: list[int] = [0] * n_sms
        self.paused: list[list[CTAView]] = [[] for _ in range(n_sms)]  # most recently paused last
        self.kids: set[int] = set()

    # ------------------------------------------------------------ launches

    def on_kernel_start(self, kernel: KernelInfo, now: int) -> None:
        self.kids.add(kernel.kid)
        kv = KernelView(kernel.kid, kernel.stream, kernel.n_ctas, kernel.n_ctas,
                        kernel.block[0] * kernel.block[1] * kernel.block[2], 0, kernel.regs_per_thread,
                        kernel.smem_per_cta, kernel.warps_per_cta)
        t = occupancy_limit(self.config, kv)
        for k in range(self.n_sms):
            if not self.n[k]:
                self.t_max[k] = t
                self.n[k] = max(1, t // 2)
            self.port.sm(k).set_cta_limit(kernel.kid, self.n[k])

    def on_kernel_end(self, kernel: KernelInfo, now: int) -> None:
        self.kids.discard(kernel.kid)
        self.port.set_cta_limit(kernel.kid, None)
        if not self.kids:
            self.n = [0] * self.n_sms
            self.paused = [[] for _ in range(self.n_sms)]

    # ------------------------------------------------------------ sampling

    def on_window(self, counters: WindowCounters, now: int) -> None:
        if not self.kids:
            return
        p = self.params
        for s in counters.sms:
            k = s.sm
            if not self.n[k]:
                continue
            new = next_n(self.n[k], s.cycles.get("idle", 0), s.mem_wait_cycles, self.t_max[k], p)
            if new > self.n[k]:
                self.counts.increments += 1
            elif new < self.n[k]:
                self.counts.decrements += 1
            self.n[k] = new
            self.counts.n_sum += new
            self.counts.samples += 1
            self._apply(k)

    def on_cta_retired(self, cta: CTAView, now: int) -> None:
        self.paused[cta.sm] = [c for c in self.paused[cta.sm] if c.index != cta.index or c.kid != cta.kid]
        if self.n[cta.sm]:
            self._apply(cta.sm)

    def _apply(self, k: int) -> None:
        """Pause or resume CTAs on SM k so that n of them run, and let dispatch fill up to n."""
        port = self.port.sm(k)
        n = self.n[k]
        paused = self.paused[k]
        held = {(c.kid, c.index) for c in paused}
        running = [c for c in port.resident_ctas() if (c.kid, c.index) not in held]
        while len(running) > n:
            victim = max(running, key=lambda c: (c.admitted, c.index))  # the most recently admitted
            running.remove(victim)
            for w in victim.warps:
                port.hold_warp(w.slot)
            paused.append(victim)
            self.counts.pauses += 1
        while len(running) < n and paused:
            c = paused.pop()
            for w in c.warps:
                port.release_warp(w.slot)
            running.append(c)
            self.counts.resumes += 1
        for kid in self.kids:
            port.set_cta_limit(kid, n)
