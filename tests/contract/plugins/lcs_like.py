"""LCS-like CTA throttle (a test of the port, not Lee et al.'s model): count the
instructions each resident CTA has issued until the first CTA of a kernel retires
on an SM, then hold that SM's dispatch of the kernel above floor(sum / max)."""

from tlpsim.policies.cta.round_robin import RoundRobinCTAScheduler
from tlpsim.policies.registry import register
from tlpsim.timing.plugin import Counter


@register("cta_scheduler", "contract_lcs")
class LcsLikeThrottle(RoundRobinCTAScheduler):
    """Round robin; after an SM's first retirement of a kernel, at most floor(sum/max) of its CTAs."""

    events = frozenset({"cta_admitted", "cta_retired"})
    counters = {"throttled_sms": Counter("SMs", "SM x kernel pairs given a limit"),
                "limit_sum": Counter("CTAs", "sum of the limits set")}
    decisions: list = []    # (sm, kid, now, insts of every resident CTA, limit), for tests
    admissions: list = []   # (sm, kid, now, resident CTAs of the kernel after the admission)

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        self.limits: dict = {}

    def on_cta_admitted(self, cta, now):
        type(self).admissions.append((cta.sm, cta.kid, now, self.port.sm(cta.sm).resident_of(cta.kid)))

    def on_cta_retired(self, cta, now):
        if (cta.sm, cta.kid) in self.limits:
            return
        sm = self.port.sm(cta.sm)
        insts = [c.insts for c in sm.resident_ctas() if c.kid == cta.kid and c.index != cta.index]
        insts.append(cta.insts)
        limit = max(1, sum(insts) // max(insts))
        self.limits[(cta.sm, cta.kid)] = limit
        sm.set_cta_limit(cta.kid, limit)
        type(self).decisions.append((cta.sm, cta.kid, now, sorted(insts), limit))
        self.counts.throttled_sms += 1
        self.counts.limit_sum += limit
