"""A warp scheduler in a dozen lines: the youngest ready warp first (the reverse of
the base's oldest-first), counting how often it changes warps.

    tlpsim run sgemm --mode timing --plugin examples/plugins/youngest_first.py \
        --set sm.warp_scheduler=youngest_first
"""
from tlpsim.policies.registry import register
from tlpsim.policies.warp.base import WarpScheduler
from tlpsim.timing.plugin import Counter


@register("warp_scheduler", "youngest_first")
class YoungestFirst(WarpScheduler):
    """Youngest ready warp first."""

    counters = {"switches": Counter("issues", "issues from another warp than the last one")}
    last = -1

    def choose(self, ready, now):
        w = max(ready, key=lambda w: w.age)
        if w.slot != self.last:
            self.counts.switches += 1
            self.last = w.slot
        return w
