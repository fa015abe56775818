"""Typed statistics records of the timing model (declared fields, not strings
scraped from logs). Components own small counter records; `LaunchStats` and
`RunStats` aggregate them per launch and per run, with derived values computed
when the record is built."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# per-SM cycle classes (Lee et al. HPCA 2014, section 3)
ACTIVE, IDLE, MEM_STALL, CORE_STALL = "active", "idle", "mem_stall", "core_stall"
CYCLE_CLASSES = (ACTIVE, IDLE, MEM_STALL, CORE_STALL)


@dataclass
class SMStats:
    """Counters of one SM."""

    cycles: dict = field(default_factory=lambda: {c: 0 for c in CYCLE_CLASSES})
    warp_insts: int = 0
    thread_insts: int = 0
    issue_slots: int = 0          # scheduler-cycles available (n_schedulers x cycles with resident warps)
    issued: int = 0               # scheduler-cycles that issued
    stall_reasons: dict = field(default_factory=dict)  # reason -> scheduler-cycles
    rf_reads: int = 0
    rf_writes: int = 0
    rf_bank_conflicts: int = 0
    collector_full: int = 0
    smem_accesses: int = 0
    smem_bank_conflict_cycles: int = 0
    l1d_accesses: int = 0
    l1d_hits: int = 0
    l1d_misses: int = 0
    l1d_pending_hits: int = 0
    l1d_reservation_fails: int = 0
    l1c_accesses: int = 0
    l1c_misses: int = 0
    mem_requests: int = 0          # packets sent to the interconnect
    ctas_done: int = 0
    unit_ops: dict = field(default_factory=dict)   # pipeline -> warp instructions executed
    opclass_insts: dict = field(default_factory=dict)
    resident_warp_cycles: int = 0  # sum over cycles of resident warps (for average occupancy)
    resident_cta_cycles: int = 0

    def add_stall(self, reason: str, n: int = 1) -> None:
        self.stall_reasons[reason] = self.stall_reasons.get(reason, 0) + n

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Utilisation:
    """Throughput utilisation of GPU components (GPUDuet section 4.1): achieved
    throughput over sustainable peak, averaged over the launch."""

    scheduler: float = 0.0
    rf: float = 0.0
    smem: float = 0.0
    l1d: float = 0.0
    l2: float = 0.0
    icnt_up: float = 0.0     # SM -> L2 direction
    icnt_down: float = 0.0   # L2 -> SM direction
    dram: float = 0.0


@dataclass
class LaunchStats:
    """Everything one kernel launch measured."""

    kernel: str
    cycles: int
    warp_insts: int
    thread_insts: int
    ipc: float                      # thread instructions per core cycle, whole GPU
    warp_ipc: float
    sm_cycles: dict                 # class -> cycles summed over SMs
    per_sm: list                    # SMStats.to_dict() per SM
    utilisation: Utilisation
    l1d_hit_rate: float
    l1d_miss_rate: float
    l2_hit_rate: float
    l2_miss_rate: float
    mshr_reservation_fails: int
    dram_reads: int
    dram_writes: int
    dram_row_hit_rate: float
    avg_resident_warps: float       # per SM, over cycles with resident warps
    avg_resident_ctas: float
    ctas_per_sm_limit: int
    limited_by: str
    timeline: dict = field(default_factory=dict)   # sampled series
    components: dict = field(default_factory=dict)  # raw counters of memory-side components
    wall_seconds: float = 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        return d
