"""The ResourceAllocator extension point and the baseline allocator.

The allocator sees a kernel's per-CTA needs (`KernelResources`) and the SM's
capacities (`SMLimits`); it answers whether one more CTA fits and records what it
granted, so mechanisms such as EXPARS (registers spilled into scratchpad) or
WarpMan (partial CTAs) can grant differently. It never sees the SM object.

- `max_contexts()` sizes the SM's CTA and warp slot tables: an allocator that
  provides storage for more contexts (EXPARS, Virtual Thread, GPUDuet) returns more
  than the baseline's CTA and warp limits.
- `allocate(kres, slot)` returns a `Grant` (or the allocator's own subclass of it):
  `kres.kid` names the launch and `slot` is the CTA slot the CTA will occupy, so the
  grant can be found again from the CTA (`CTAView.grant`, `CTAView.slot`) and shared
  with the SM's other plug-ins (`port.peer(point)`). `grant.warps` fewer than the CTA's warps admits a
  partial CTA (WarpMan), whose other warps wait until `grant_warps` grants them
  (asked whenever resources are released; call `port.resources_changed()` after
  freeing resources outside a CTA retirement, e.g. on `warp_finished`).
- `usage()` reports the bytes of register file and scratchpad it has allocated, so
  plug-ins can find spare storage (`port.spare_bytes`).

Context keywords: `limits` (`SMLimits`), `cta_cap` (gpu.max_ctas_per_sm), `port`, `config`.
"""

from __future__ import annotations

from typing import Any

from tlpsim.policies.registry import interface, register
from tlpsim.timing.occupancy import SMLimits
from tlpsim.timing.plugin import Plugin
from tlpsim.timing.views import Grant, KernelResources

__all__ = ["BaselineAllocator", "Grant", "KernelResources", "ResourceAllocator"]


@interface("resource_allocator")
class ResourceAllocator(Plugin):
    """Interface; see BaselineAllocator."""

    def __init__(self, params: Any = None, limits: SMLimits | None = None, cta_cap: int | None = None,
                 **context: Any) -> None:
        super().__init__(params, **context)
        self.limits = limits or SMLimits()
        self.cta_cap = cta_cap

    def max_contexts(self) -> tuple[int, int]:
        """(CTA slots, warp slots) the SM needs for what this allocator may grant."""
        lim = self.limits
        return lim.max_ctas, lim.max_threads // lim.warp_size

    def grant_warps(self, grant: Grant, waiting: int) -> int:
        """How many of a partial CTA's `waiting` warps to admit now (0: none)."""
        return 0

    def usage(self) -> dict[str, int]:
        """Bytes allocated now per storage ("rf", "smem")."""
        return {}

    def fits(self, kres: KernelResources) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def allocate(self, kres: KernelResources, slot: int) -> Grant:  # pragma: no cover - interface
        """Grant one CTA of launch `kres.kid` the resources it occupies in CTA slot `slot`."""
        raise NotImplementedError

    def release(self, grant: Grant) -> None:  # pragma: no cover - interface
        raise NotImplementedError


@register("resource_allocator", "baseline")
class BaselineAllocator(ResourceAllocator):
    """Registers, shared memory, threads and CTA slots, with GPGPU-Sim's rounding, or
    CUDA's occupancy rule when the SM limits ask for it (registers rounded per warp and
    placed in one register-file part each, a shared-memory reserve per CTA)."""
    stationarity = "stationary"

    def __init__(self, params: Any = None, limits: SMLimits | None = None, cta_cap: int | None = None,
                 **context: Any) -> None:
        super().__init__(params, limits, cta_cap, **context)
        self.used = Grant(0, 0, 0, 0)
        self.ctas = 0
        lim = self.limits
        # CUDA's rule (per-warp register rounding, register-file parts, a per-CTA shared
        # reserve) when the configuration asks for any of it; GPGPU-Sim's otherwise
        self.modern = lim.reg_per_warp or lim.reg_partitions > 1 or lim.smem_reserved > 0
        self.part_size = lim.registers // lim.reg_partitions
        self.part_used = [0] * lim.reg_partitions

    def usage(self) -> dict[str, int]:
        return {"rf": self.used.regs * 4, "smem": self.used.smem}

    def need(self, kres: KernelResources) -> Grant:
        lim = self.limits
        warps = -(-kres.threads_per_cta // lim.warp_size)
        threads = warps * lim.warp_size
        if self.modern:   # CUDA's occupancy rule (tlpsim.timing.occupancy)
            return Grant(threads, warps, lim.regs_per_warp(kres.regs_per_thread) * warps,
                         lim.smem_per_cta(kres.smem_per_cta))
        g = lim.reg_granularity
        regs = -(-kres.regs_per_thread // g) * g * threads
        sg = lim.smem_granularity
        smem = -(-kres.smem_per_cta // sg) * sg
        return Grant(threads, warps, regs, smem)

    def _place(self, per_warp: int, warps: int) -> list[int] | None:
        """The register-file part of each of a CTA's warps, each to the part with the
        most free registers (lowest index on ties), or None when one does not fit."""
        free = [self.part_size - used for used in self.part_used]
        where = []
        for _ in range(warps):
            best = max(range(len(free)), key=lambda i: (free[i], -i))
            if free[best] < per_warp:
                return None
            free[best] -= per_warp
            where.append(best)
        return where

    def fits(self, kres: KernelResources) -> bool:
        n = self.need(kres)
        lim, u = self.limits, self.used
        if self.ctas >= lim.max_ctas or (self.cta_cap is not None and self.ctas >= self.cta_cap):
            return False
        if self.modern:
            return (u.threads + n.threads <= lim.max_threads and u.smem + n.smem <= lim.shared_bytes
                    and self._place(n.regs // n.warps if n.warps else 0, n.warps) is not None)
        return (u.threads + n.threads <= lim.max_threads and u.regs + n.regs <= lim.registers
                and u.smem + n.smem <= lim.shared_bytes)

    def allocate(self, kres: KernelResources, slot: int) -> Grant:
        n = self.need(kres)
        if self.modern:
            where = self._place(n.regs // n.warps if n.warps else 0, n.warps)
            if where is None:
                raise RuntimeError("allocate() called for a CTA that does not fit (fits() was not asked)")
            for part in where:
                self.part_used[part] += n.regs // n.warps
            n.extra = where
        u = self.used
        u.threads += n.threads
        u.warps += n.warps
        u.regs += n.regs
        u.smem += n.smem
        self.ctas += 1
        return n

    def release(self, grant: Grant) -> None:
        if self.modern and grant.extra:
            for part in grant.extra:
                self.part_used[part] -= grant.regs // grant.warps
        u = self.used
        u.threads -= grant.threads
        u.warps -= grant.warps
        u.regs -= grant.regs
        u.smem -= grant.smem
        self.ctas -= 1
