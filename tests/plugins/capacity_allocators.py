"""Two resource allocators that admit more CTAs than the baseline (tests of the
conformance harness's capacity workloads, tests/plugins/test_capacity_conformance.py):

- `double_capacity`: an SM with twice the baseline's registers, shared memory,
  threads and CTA slots (as if a mechanism stored the extra contexts elsewhere);
- `stranded_extra`: the baseline, plus one CTA beyond it that is granted no warps
  and never gets any — a bug that only shows when an SM is full."""

from dataclasses import replace

from tlpsim.policies.alloc.base import BaselineAllocator
from tlpsim.policies.registry import register
from tlpsim.timing.views import Grant


@register("resource_allocator", "double_capacity")
class DoubleCapacity(BaselineAllocator):
    """The baseline allocator on an SM twice as large."""

    def __init__(self, params=None, limits=None, cta_cap=None, **context):
        super().__init__(params, limits, cta_cap, **context)
        lim = self.limits
        self.limits = replace(lim, max_ctas=2 * lim.max_ctas, max_threads=2 * lim.max_threads,
                              registers=2 * lim.registers, shared_bytes=2 * lim.shared_bytes)
        self.cta_cap = None


@register("resource_allocator", "stranded_extra")
class StrandedExtra(BaselineAllocator):
    """Admits one CTA beyond the baseline, with no warps, and never grants them."""

    def max_contexts(self):
        ctas, warps = super().max_contexts()
        return ctas + 1, warps

    def __init__(self, params=None, limits=None, cta_cap=None, **context):
        super().__init__(params, limits, cta_cap, **context)
        self.stranded = 0

    def fits(self, kres):
        return super().fits(kres) or self.stranded == 0

    def allocate(self, kres, slot):
        if super().fits(kres):
            return super().allocate(kres, slot)
        self.stranded += 1
        return Grant(0, 0, 0, 0, extra="stranded")

    def release(self, grant):
        if grant.extra == "stranded":
            self.stranded -= 1
        else:
            super().release(grant)
