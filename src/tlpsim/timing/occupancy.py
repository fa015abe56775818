"""Occupancy: how many CTAs of a kernel fit on one SM, and which resource limits it.

Rounding as GPGPU-Sim does it: registers per thread up to a multiple of
`reg_granularity`, threads per CTA up to a whole number of warps, shared memory
per CTA up to `smem_granularity` bytes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SMLimits:
    """Per-SM resource capacities that bound occupancy."""

    max_threads: int = 1536
    max_ctas: int = 8
    registers: int = 32768
    shared_bytes: int = 49152
    warp_size: int = 32
    reg_granularity: int = 4
    smem_granularity: int = 1


FERMI_GTX480 = SMLimits()  # GPGPU-Sim SM2_GTX480: 1536 threads, 8 CTAs, 32768 regs, 48 KiB shared


@dataclass(frozen=True)
class Occupancy:
    ctas: int                      # resident CTAs per SM
    limited_by: tuple[str, ...]    # every resource whose own limit equals `ctas`
    per_resource: dict             # resource -> CTAs that resource alone allows

    @property
    def limiter(self) -> str:
        return " ".join(self.limited_by)


def occupancy(limits: SMLimits, regs_per_thread: int, smem_per_cta: int, threads_per_cta: int,
              cta_cap: int | None = None) -> Occupancy:
    """CTAs per SM for a kernel; `cta_cap` is an extra CTA limit (a config override)."""
    if threads_per_cta <= 0:
        raise ValueError("threads_per_cta must be positive")
    ws = limits.warp_size
    threads = -(-threads_per_cta // ws) * ws
    g = limits.reg_granularity
    regs = -(-max(regs_per_thread, 0) // g) * g
    sg = limits.smem_granularity
    smem = -(-max(smem_per_cta, 0) // sg) * sg
    big = 1 << 30
    per = {
        "threads": limits.max_threads // threads,
        "ctas": limits.max_ctas,
        "regs": limits.registers // (regs * threads) if regs else big,
        "smem": limits.shared_bytes // smem if smem else big,
    }
    if cta_cap is not None:
        per["config"] = cta_cap
    n = min(per.values())
    return Occupancy(n, tuple(k for k, v in per.items() if v == n), per)
