"""Typed statistics records of the timing model (declared fields, not strings
scraped from logs). Components own small counter records; `LaunchStats` and
`RunStats` aggregate them per launch and per run, with derived values computed
when the record is built."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Final

from librt.vecs import vec
from mypy_extensions import i64

from tlpsim.timing.cache import CacheStats, MSHRStats

# per-SM cycle classes (Lee et al. HPCA 2014, section 3)
ACTIVE: Final = "active"
IDLE: Final = "idle"
MEM_STALL: Final = "mem_stall"
CORE_STALL: Final = "core_stall"
CYCLE_CLASSES = (ACTIVE, IDLE, MEM_STALL, CORE_STALL)
# their indices in SMStats.class_cycles (the SM counts one every cycle)
ACTIVE_I: Final = 0
IDLE_I: Final = 1
MEM_STALL_I: Final = 2
CORE_STALL_I: Final = 3


# the reasons an SM's units note a stall for (SM.note_stall), by code
STALL_L1D_RESERVATION_FAIL: Final = 0
STALL_ISSUE_STALLED: Final = 1
STALL_UNIT_BUSY: Final = 2
STALL_SCHEDULER_HOLD: Final = 3
STALL_COLLECTOR_FULL: Final = 4
STALL_LDST_BUSY: Final = 5
STALL_REASONS: Final = ("l1d_reservation_fail", "issue_stalled", "unit_busy", "scheduler_hold", "collector_full",
                        "ldst_busy")


@dataclass
class SMStats:
    """Counters of one SM."""

    # cycles per class, in CYCLE_CLASSES order: unboxed, as the SM adds to one every
    # cycle (a dict of boxed counts cost a lookup and an allocation per cycle); read as
    # the `cycles` dict
    class_cycles: vec[i64] = field(default_factory=lambda: vec[i64]([0] * len(CYCLE_CLASSES)))
    warp_insts: int = 0
    thread_insts: int = 0
    issue_slots: int = 0          # scheduler-cycles available (n_schedulers x cycles with resident warps)
    issued: int = 0               # scheduler-cycles that issued
    # stall reason -> cycles it was met (read as the `stall_reasons` dict): unboxed counts
    # by reason code, as the SM adds to one nearly every cycle; the dict lists the reasons
    # in the order each was first counted
    stall_counts: vec[i64] = field(default_factory=lambda: vec[i64]([0] * len(STALL_REASONS)))
    stall_order: list[int] = field(default_factory=list)  # codes in the order first counted
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
    l1d_writes: int = 0            # stores looked up in the L1D (its write policy decides)
    l1d_write_hits: int = 0        # ... that a write-back line kept (nothing sent)
    l1d_writebacks: int = 0        # dirty lines a read miss evicted, written to the L2
    l1c_accesses: int = 0
    l1c_misses: int = 0
    mem_requests: int = 0          # packets sent to the interconnect
    ifetch_requests: int = 0       # instruction-cache lines requested from L2
    ifetch_prefetches: int = 0     # of which the instruction prefetcher's
    # memory latency of data replies and store acknowledgements, GPGPU-Sim's averagemflatency:
    # core cycles from the L2 slice accepting the request to the reply reaching the LD/ST
    # unit, summed per 32-byte sector (its sectored L2 splits a line request into sector
    # requests, each timed from its arrival), and the number of sectors
    mem_latency_sector_cycles: int = 0
    mem_latency_sectors: int = 0
    ctas_done: int = 0
    unit_ops: dict[str, int] = field(default_factory=dict)   # pipeline -> warp instructions executed
    opclass_insts: dict[str, int] = field(default_factory=dict)
    resident_warp_cycles: int = 0  # sum over cycles of resident warps (for average occupancy)
    resident_cta_cycles: int = 0
    # most CTAs / warps resident at once since the launch started (an allocator may admit
    # more than the occupancy limit); not deltas: reset to the current level when a launch starts
    peak_resident_ctas: int = 0
    peak_resident_warps: int = 0
    # cycles the SM held exactly n resident CTAs (index n; counted when the count changes,
    # so exact and free per cycle): the full-occupancy share is the part at the CTA limit
    cta_count_cycles: list[int] = field(default_factory=list)

    @property
    def cycles(self) -> dict[str, int]:
        """Cycles per class: ACTIVE / IDLE / MEM_STALL / CORE_STALL -> cycles."""
        return {c: int(self.class_cycles[k]) for k, c in enumerate(CYCLE_CLASSES)}

    @property
    def stall_reasons(self) -> dict[str, int]:
        """Stall reason -> cycles it was met (scheduler-cycles; repeats in a cycle count)."""
        counts = self.stall_counts
        return {STALL_REASONS[k]: int(counts[k]) for k in self.stall_order}

    def add_stall(self, code: i64, n: i64) -> None:
        """`n` more cycles of stall reason `code` (STALL_*)."""
        counts = self.stall_counts
        c = counts[code]
        if c == 0:
            self.stall_order.append(code)
        counts[code] = c + n

    def to_dict(self) -> dict:
        d: dict = {"cycles": self.cycles}
        for f in fields(self):
            name = f.name
            if name == "class_cycles" or name == "stall_order":
                continue
            if name == "stall_counts":  # (in the place the stall_reasons field had)
                d["stall_reasons"] = self.stall_reasons
                continue
            v = getattr(self, name)
            d[name] = dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v
        return d


@dataclass
class L2Stats:
    """Counters of one L2 slice; `cache` and `mshr` hold the tag-array and MSHR
    counters (hits, misses, pending hits, reservation fails by reason, evictions,
    writebacks, fills). Energy events: tag lookups = cache.accesses, data-array
    sector reads/writes = data_reads/data_writes."""

    reads: int = 0
    writes: int = 0
    atomics: int = 0
    replies: int = 0             # packets pushed to the interconnect (data replies + write acks)
    write_acks: int = 0
    dram_reads: int = 0          # requests pushed to the DRAM channel
    dram_read_sectors: int = 0
    dram_writes: int = 0
    dram_write_sectors: int = 0
    dram_fills: int = 0          # read replies taken from the DRAM channel
    dram_write_replies: int = 0  # write completions the channel chose to return (ignored)
    data_reads: int = 0          # sectors read from the data array (read/atomic hits, dirty victims)
    data_writes: int = 0         # sectors written (writes, fills, atomics)
    busy_cycles: int = 0         # data-port cycles used: utilisation = busy_cycles / cycles
    occupied_cycles: int = 0     # cycles with any request inside the slice
    stall_reply_cycles: int = 0  # lookups blocked by a full reply queue
    cache: CacheStats = field(default_factory=CacheStats)
    mshr: MSHRStats = field(default_factory=MSHRStats)

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("cache", "mshr")}
        d.update(self.cache.to_dict())
        d.update({f"mshr_{k}": v for k, v in self.mshr.to_dict().items()})
        return d


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
class EnergyStats:
    """Energy of a launch (or a run) from the activity-based model (tlpsim.power):
    per-structure dynamic and static energy in joules, and the average power over
    `seconds` of core-clock time."""

    technology_node: str = ""
    seconds: float = 0.0
    dynamic_j: dict = field(default_factory=dict)   # structure -> J
    static_j: dict = field(default_factory=dict)    # structure -> J (leakage x powered time)
    events: dict = field(default_factory=dict)      # structure -> {event: count}
    on_fraction: dict = field(default_factory=dict)  # structure -> powered share of its capacity-time
    total_dynamic_j: float = 0.0
    total_static_j: float = 0.0
    total_j: float = 0.0
    avg_power_w: float = 0.0

    def structure_j(self, name: str) -> float:
        return self.dynamic_j.get(name, 0.0) + self.static_j.get(name, 0.0)

    def share(self, *names: str) -> float:
        """Fraction of the total energy spent in the named structures."""
        return sum(self.structure_j(n) for n in names) / self.total_j if self.total_j else 0.0

    @classmethod
    def combine(cls, records: list) -> EnergyStats:
        """Run-level aggregate of launch records (energies and times add; the powered
        fractions are time-weighted)."""
        out = cls(technology_node=",".join(sorted({r.technology_node for r in records})))
        for r in records:
            out.seconds += r.seconds
            for part in ("dynamic_j", "static_j"):
                mine = getattr(out, part)
                for k, v in getattr(r, part).items():
                    mine[k] = mine.get(k, 0.0) + v
            for k, ev in r.events.items():
                mine = out.events.setdefault(k, {})
                for e, n in ev.items():
                    mine[e] = mine.get(e, 0) + n
            for k, f in r.on_fraction.items():
                out.on_fraction[k] = out.on_fraction.get(k, 0.0) + f * r.seconds
        if out.seconds:
            out.on_fraction = {k: v / out.seconds for k, v in out.on_fraction.items()}
        out.total_dynamic_j = sum(out.dynamic_j.values())
        out.total_static_j = sum(out.static_j.values())
        out.total_j = out.total_dynamic_j + out.total_static_j
        out.avg_power_w = out.total_j / out.seconds if out.seconds else 0.0
        return out


@dataclass
class EnergyInputs:
    """What the energy model needs of one launch: its counter deltas and the
    structures the plug-ins add (given to `GPU.energy_model`, see tlpsim.power)."""

    cycles: int
    per_sm: list                    # SMStats dicts
    sm_parts: list                  # SM.part_counters() deltas
    mem: dict                       # MemorySystem.counters() deltas
    regs_per_thread: int
    threads_per_cta: int
    smem_per_cta: int
    gates_subarrays: bool = False   # the operand storage reports per-subarray gating
    structures: dict = field(default_factory=dict)        # operand storage's table structures {name: instances}
    plugin_energy: dict = field(default_factory=dict)     # plug-in structure -> accesses (this launch)
    plugin_structures: dict = field(default_factory=dict)  # plug-in structure -> EnergyStructure


@dataclass
class LaunchStats:
    """Everything one kernel launch measured."""

    kernel: str
    cycles: int                     # first_cycle .. last_cycle (a launch latency included)
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
    # most CTAs / warps resident at once on one SM during the launch (above the limit when
    # a resource allocator admits more than the baseline would)
    peak_resident_ctas: int = 0
    peak_resident_warps: int = 0
    timeline: dict = field(default_factory=dict)   # sampled series
    components: dict = field(default_factory=dict)  # raw counters of memory-side components
    wall_seconds: float = 0.0
    energy: EnergyStats | None = None               # activity-based energy (power.enabled)
    plugins: dict = field(default_factory=dict)     # plug-in counters: {"point.name": {counter: value}}
    plugin_units: dict = field(default_factory=dict)  # {"point.name": {counter: unit}}
    plugin_aggs: dict = field(default_factory=dict)   # {"point.name": {counter: "max" | "mean"}} (levels, not sums)
    # core cycles (of the session's clock) of the launch's first CTA dispatch and last
    # CTA retirement: concurrent launches overlap, so their makespan is max(last) - min(first) + 1.
    # With a launch latency (gpu.kernel_launch_latency) the launch begins at its turn, the
    # latency before its first CTA counted in `cycles` and `first_cycle`
    first_cycle: int = -1
    last_cycle: int = -1
    avg_mem_latency: float = 0.0    # core cycles per sector (SMStats.mem_latency_*; 0: no data replies)
    # share of the launch's cycles an SM held at least `ctas_per_sm_limit` CTAs (the baseline's
    # maximum occupancy; SMStats.cta_count_cycles): the least-occupied SM's, and the mean over SMs
    full_occupancy_share_min: float = 0.0
    full_occupancy_share_mean: float = 0.0
    # KiB of L1 data cache each SM had for the launch (a unified array's carveout leaves it
    # per batch: l1d.shared_carveouts_kb; 0 without an L1D)
    l1d_kb: int = 0

    def to_dict(self) -> dict:
        d = asdict(self)
        return d
