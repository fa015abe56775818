"""Occupancy: how many CTAs of a kernel fit on one SM, and which resource limits it.

Rounding as GPGPU-Sim does it: registers per thread up to a multiple of
`reg_granularity`, threads per CTA up to a whole number of warps, shared memory
per CTA up to `smem_granularity` bytes.

Modern GPUs follow CUDA's occupancy calculator instead, chosen by three fields
that default to GPGPU-Sim's rule: `reg_per_warp` rounds each warp's registers
(registers/thread x warp size) up to `reg_granularity`; `reg_partitions` splits the
register file into that many equal parts (the SM sub-partitions), a warp's
registers living in one part, so the register limit is parts x floor(part /
registers per warp) warps; `smem_reserved` bytes are added to every CTA's shared
memory before rounding (CUDA 11+ reserves 1 KiB per CTA on compute capability 8.0+).
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
    reg_per_warp: bool = False     # granularity applies to a warp's registers (CUDA), not a thread's
    reg_partitions: int = 1        # register-file parts; each warp's registers in one part
    smem_reserved: int = 0         # bytes reserved per CTA, added before rounding

    def regs_per_warp(self, regs_per_thread: int) -> int:
        """Registers one warp is allocated."""
        g = self.reg_granularity
        if self.reg_per_warp:
            return -(-max(regs_per_thread, 0) * self.warp_size // g) * g
        return -(-max(regs_per_thread, 0) // g) * g * self.warp_size

    def smem_per_cta(self, smem_bytes: int) -> int:
        """Shared memory one CTA is allocated (its own bytes, the reserve, rounded)."""
        sg = self.smem_granularity
        if self.smem_reserved == 0 and smem_bytes <= 0:
            return 0
        return -(-(max(smem_bytes, 0) + self.smem_reserved) // sg) * sg


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
    big = 1 << 30
    if limits.reg_per_warp or limits.reg_partitions > 1 or limits.smem_reserved:
        warps = threads // ws
        rpw = limits.regs_per_warp(regs_per_thread)
        part_warps = (limits.registers // limits.reg_partitions) // rpw if rpw else big
        smem = limits.smem_per_cta(smem_per_cta)
        per = {
            "threads": limits.max_threads // threads,
            "ctas": limits.max_ctas,
            "regs": part_warps * limits.reg_partitions // warps if rpw else big,
            "smem": limits.shared_bytes // smem if smem else big,
        }
    else:   # GPGPU-Sim's rule, exactly as it always was
        g = limits.reg_granularity
        regs = -(-max(regs_per_thread, 0) // g) * g
        sg = limits.smem_granularity
        smem = -(-max(smem_per_cta, 0) // sg) * sg
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
