"""What plug-ins see of the simulated GPU: small records, never the SM or GPU objects.

A `WarpView` and a `CTAView` live as long as their warp or CTA is resident, so a
policy may keep references to them between events; the SM updates the few fields
that change (`last_issue`, `waiting_mem`, `insts`). The other records are built
when they are handed out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(slots=True)
class WarpView:
    """A resident warp as a policy may know it."""

    slot: int        # warp slot in its SM
    age: int         # dynamic warp id in its SM: lower = admitted earlier
    cta: int         # CTA slot of the warp
    last_issue: int  # cycle this warp last issued (-1 never)
    waiting_mem: bool = False  # the warp has outstanding global/local/generic loads
    sched: int = 0   # warp scheduler (issue unit) that owns it
    sm: int = 0
    kid: int = 0     # kernel launch id
    cta_index: int = 0  # CTA index in its grid (linearised)
    gwarp: int = 0   # warp index within its launch (dynamic warp id of the grid)


@dataclass(slots=True)
class CTAView:
    """A resident CTA: its warps and the instructions it has issued so far."""

    sm: int
    kid: int
    index: int       # CTA index in its grid (linearised, dispatch order)
    slot: int        # CTA slot in its SM
    n_warps: int
    warps: list[WarpView] = field(default_factory=list)  # its admitted warps
    insts: int = 0   # warp instructions issued by the CTA so far (refreshed when an event reports it)
    admitted: int = -1  # cycle it became resident
    grant: Any = None   # what the resource allocator's allocate() returned for it (its own Grant type)


@dataclass(frozen=True, slots=True)
class DispatchGroup:
    """CTAs a CTA scheduler dispatches to one SM as a unit (BCS's block of consecutive
    CTAs): the signal from the CTA scheduler to the SM's plug-ins (the SCA warp
    scheduler groups the warps of one block). Declared with `GPUPort.group_ctas`,
    read with `SMPort.dispatch_group`."""

    kid: int                 # the launch
    group: int               # serial number of the group (unique within the run)
    sm: int                  # the SM the group is dispatched to
    ctas: tuple[int, ...]    # its CTAs' indices in the grid, as planned


@dataclass(frozen=True)
class KernelResources:
    """Per-CTA needs of a kernel, as the resource allocator sees them."""

    threads_per_cta: int
    regs_per_thread: int
    smem_per_cta: int   # static + dynamic bytes
    kid: int = 0        # the launch (kernel id) whose CTAs need these


@dataclass
class Grant:
    """What a resource allocator granted one CTA (returned to it on release).

    `warps` is what the CTA holds now; an allocator that admits partial CTAs
    (WarpMan) grants fewer warps than the CTA has and more later (`grant_warps`)."""

    threads: int
    warps: int
    regs: int
    smem: int
    extra: Any = None   # allocator-specific bookkeeping (e.g. registers placed in scratchpad)


@dataclass(slots=True)
class KernelView:
    """A launch with CTAs still to dispatch, as a CTA scheduler sees it."""

    kid: int                 # launch sequence number
    stream: int
    remaining: int           # CTAs not yet dispatched
    n_ctas: int
    threads_per_cta: int
    next_cta: int            # index of the next CTA to dispatch
    regs_per_thread: int = 0
    smem_per_cta: int = 0    # bytes (static + dynamic)
    warps_per_cta: int = 0
    resident: int = 0        # CTAs of this launch resident on any SM now
    done: int = 0            # CTAs of this launch finished
    grid: tuple[int, int, int] = (1, 1, 1)
    name: str = ""
    block: tuple[int, int, int] = (1, 1, 1)   # CTA shape (threads along x, y, z)

    @property
    def regs_per_cta(self) -> int:
        return self.regs_per_thread * self.threads_per_cta


@dataclass(slots=True)
class SMView:
    """One SM, as a CTA scheduler sees it."""

    sm: int
    resident_ctas: int
    fits: Callable[[int], bool]   # fits(kid): one more CTA of kernel kid would be admitted now
    resident_by_kernel: dict[int, int] = field(default_factory=dict)  # kid -> resident CTAs
    limits: dict[int, int] = field(default_factory=dict)              # kid -> CTA limit set through the port
    held: bool = False            # some plug-in holds CTA dispatch to this SM

    def resident_of(self, kid: int) -> int:
        return self.resident_by_kernel.get(kid, 0)


@dataclass(frozen=True)
class KernelInfo:
    """A launch, as `kernel_start` / `kernel_end` report it."""

    kid: int
    name: str
    stream: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    n_ctas: int
    warps_per_cta: int
    regs_per_thread: int
    smem_per_cta: int
    static: Any          # timing.static.StaticKernel: per-instruction facts, physical registers
    analyzed: Any = None  # analysis.analyzed.AnalyzedKernel when the launch carries one
    # the two per-thread register counts; `regs_per_thread` (what the RF reserves) is the
    # one `rf_sized_by` names
    compiler_regs: int | None = None    # ptxas's count (or the launch's resources override)
    allocation_regs: int | None = None  # the analyses' packed allocation (fewest registers)
    rf_sized_by: str = "ptxas"          # "ptxas" or "allocation" (sm.register_count, or packed > ptxas)
    # the highest register an instruction names + 1: `regs_per_thread`, except under
    # sm.register_count = 'ptxas_exact' when the allocation needs more names than ptxas's count
    named_regs: int | None = None


@dataclass
class SMWindow:
    """One SM's counters over a monitor window (deltas)."""

    sm: int
    cycles: dict[str, int]           # ACTIVE / IDLE / MEM_STALL / CORE_STALL -> cycles
    warp_insts: int
    thread_insts: int
    issued: int                      # scheduler-cycles that issued
    issue_slots: int                 # scheduler-cycles available
    stall_reasons: dict[str, int]
    l1d_accesses: int
    l1d_misses: int
    mem_requests: int
    ctas_done: int
    resident_ctas: int               # at the end of the window
    resident_warps: int
    mem_blocked_warps: int           # warps waiting on a memory load at the end of the window
    resident_by_kernel: dict[int, int] = field(default_factory=dict)
    # cycles nothing issued while every warp not held by a plug-in waited on a memory
    # load (Kayiran et al.'s C_mem); MEM_STALL counts cycles where *some* warp does
    mem_wait_cycles: int = 0


@dataclass
class WindowCounters:
    """Counters of one sampling window (`window` event): per SM and GPU-wide."""

    first_cycle: int
    last_cycle: int
    sms: list[SMWindow]
    l2_accesses: int
    l2_hits: int
    dram_busy_cycles: int
    icnt_up_flits: int
    icnt_down_flits: int
    utilisation: dict[str, float]    # GPUDuet-style component utilisation over the window

    @property
    def cycles(self) -> int:
        return self.last_cycle - self.first_cycle + 1

    @property
    def ipc(self) -> float:
        """Thread instructions per core cycle over the window, whole GPU."""
        return sum(s.thread_insts for s in self.sms) / self.cycles if self.cycles > 0 else 0.0


__all__ = ["CTAView", "DispatchGroup", "Grant", "KernelInfo", "KernelResources", "KernelView", "SMView", "SMWindow", "WarpView",
           "WindowCounters"]
