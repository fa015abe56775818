"""The ResourceAllocator extension point and the baseline allocator.

The allocator sees a kernel's per-CTA needs (`KernelResources`) and the SM's
capacities (`SMLimits`); it answers whether one more CTA fits and records what it
granted, so mechanisms such as EXPARS (registers spilled into scratchpad) or
WarpMan (partial CTAs) can grant differently. It never sees the SM object.
"""

from __future__ import annotations

from dataclasses import dataclass

from tlpsim.policies.registry import register
from tlpsim.timing.occupancy import SMLimits


@dataclass(frozen=True)
class KernelResources:
    threads_per_cta: int
    regs_per_thread: int
    smem_per_cta: int   # static + dynamic bytes


@dataclass
class Grant:
    threads: int
    warps: int
    regs: int
    smem: int


class ResourceAllocator:
    """Interface; see BaselineAllocator."""

    Params = None

    def __init__(self, params=None, limits: SMLimits | None = None, cta_cap: int | None = None) -> None:
        self.params = params
        self.limits = limits or SMLimits()
        self.cta_cap = cta_cap

    def fits(self, kres: KernelResources) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def allocate(self, kres: KernelResources) -> Grant:  # pragma: no cover - interface
        raise NotImplementedError

    def release(self, grant: Grant) -> None:  # pragma: no cover - interface
        raise NotImplementedError


@register("resource_allocator", "baseline")
class BaselineAllocator(ResourceAllocator):
    """Registers, shared memory, threads and CTA slots, with GPGPU-Sim's rounding."""

    def __init__(self, params=None, limits: SMLimits | None = None, cta_cap: int | None = None) -> None:
        super().__init__(params, limits, cta_cap)
        self.used = Grant(0, 0, 0, 0)
        self.ctas = 0

    def need(self, kres: KernelResources) -> Grant:
        lim = self.limits
        warps = -(-kres.threads_per_cta // lim.warp_size)
        threads = warps * lim.warp_size
        g = lim.reg_granularity
        regs = -(-kres.regs_per_thread // g) * g * threads
        sg = lim.smem_granularity
        smem = -(-kres.smem_per_cta // sg) * sg
        return Grant(threads, warps, regs, smem)

    def fits(self, kres: KernelResources) -> bool:
        n = self.need(kres)
        lim, u = self.limits, self.used
        if self.ctas >= lim.max_ctas or (self.cta_cap is not None and self.ctas >= self.cta_cap):
            return False
        return (u.threads + n.threads <= lim.max_threads and u.regs + n.regs <= lim.registers
                and u.smem + n.smem <= lim.shared_bytes)

    def allocate(self, kres: KernelResources) -> Grant:
        n = self.need(kres)
        u = self.used
        u.threads += n.threads
        u.warps += n.warps
        u.regs += n.regs
        u.smem += n.smem
        self.ctas += 1
        return n

    def release(self, grant: Grant) -> None:
        u = self.used
        u.threads -= grant.threads
        u.warps -= grant.warps
        u.regs -= grant.regs
        u.smem -= grant.smem
        self.ctas -= 1
