"""The shared-memory carveout of a unified L1/shared array (Volta and later): which
share a batch of launches runs with, and so how much L1 data cache it keeps.

The driver's rule, as NVIDIA's CUDA C Programming Guide ("Shared Memory" for compute
capabilities 7.x to 9.0) describes it and GPGPU-Sim models it
(`gpgpu_adaptive_cache_config`, `shader_core_config::max_cta`): with no preference, the
smallest supported carveout that holds the shared memory of as many CTAs as the other
limits allow, so shared memory never lowers occupancy; with a preference (a percentage
of the largest carveout, `cudaFuncAttributePreferredSharedMemoryCarveout`), the
smallest carveout at or above it; a kernel's own preference comes before the config's
`l1d.carveout_preference`. On the card a preference below what the occupancy
needs lowers the occupancy; here it is raised to that need instead (the CTA allocator
keeps `sm.shared_bytes`), which `l1d.carveout_preference` says. Launches that run
together (streams) share an SM's array: the batch takes the largest of their
carveouts (GPGPU-Sim's adaptive mode is for one kernel at a time).

The L1 keeps the rest of the array in whole ways of the same sets (GPGPU-Sim's
`set_assoc`), so a carveout changes associativity, not the set index."""

from __future__ import annotations

from collections.abc import Sequence

from tlpsim.timing.occupancy import SMLimits, occupancy
from tlpsim.timing.views import KernelResources

__all__ = ["choose_carveout", "shared_needed"]


def shared_needed(limits: SMLimits, kres: KernelResources) -> int:
    """Bytes of shared memory the launch's CTAs take at the occupancy every other limit
    (threads, registers, CTA slots) allows: what the default carveout must hold."""
    per_cta = limits.smem_per_cta(kres.smem_per_cta)
    if per_cta <= 0:
        return 0
    occ = occupancy(limits, kres.regs_per_thread, kres.smem_per_cta, kres.threads_per_cta)
    ctas = min(v for k, v in occ.per_resource.items() if k != "smem")
    return ctas * per_cta


def choose_carveout(options_kb: Sequence[int], limits: SMLimits, launches: Sequence[KernelResources],
                    preference: int = -1) -> int:
    """The carveout (KiB, one of `options_kb`, increasing) a batch of launches runs with.
    `preference`: -1 (none) or a percentage 0..100 of the largest carveout."""
    if not options_kb:
        raise ValueError("choose_carveout needs the supported carveouts")
    if not -1 <= preference <= 100:
        raise ValueError(f"a carveout preference is -1 or a percentage 0..100, not {preference}")
    largest = options_kb[-1]
    need = max((shared_needed(limits, k) for k in launches), default=0)
    floor = need if preference < 0 else max(need, preference * largest * 1024 // 100)
    for kb in options_kb:
        if kb * 1024 >= floor:
            return kb
    return largest
