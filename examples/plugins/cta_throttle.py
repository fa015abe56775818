"""A CTA throttle: at most `max_ctas` CTAs of each kernel per SM, set when the
kernel starts (GPGPU-Sim's round-robin dispatch otherwise). Parameters are declared
next to the policy and set from the config:

    tlpsim run btree --mode timing --plugin examples/plugins/cta_throttle.py \
        --set 'gpu.cta_scheduler={impl="cta_throttle", max_ctas=2}'
"""
from dataclasses import dataclass

from tlpsim.policies.cta.round_robin import RoundRobinCTAScheduler
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter


@register("cta_scheduler", "cta_throttle")
class CTAThrottle(RoundRobinCTAScheduler):
    """Round robin with a fixed per-kernel CTA limit on every SM."""

    @dataclass(frozen=True)
    class Params:
        max_ctas: int = 2   # resident CTAs of one kernel per SM

    events = frozenset({"kernel_start", "cta_admitted"})
    counters = {"admitted": Counter("CTAs", "CTAs dispatched under the limit")}

    def on_kernel_start(self, kernel, now):
        self.port.set_cta_limit(kernel.kid, self.params.max_ctas)   # on every SM

    def on_cta_admitted(self, cta, now):
        self.counts.admitted += 1
