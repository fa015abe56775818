"""From run records to the numbers of the study's figures: a compact digest of each
run, and the derived series (performance curves and types, speedups, miss rates,
energy savings, T_new against OPT)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlpsim.experiments.lcs_bcs.classify import classify, grid_limited, sweep_top
from tlpsim.policies.cta.bcs import is_2d
from tlpsim.report.metrics import geomean

__all__ = ["Digest", "StudyData", "digest", "kernel_t_new", "speedup"]

CLASSES = ("active", "idle", "mem_stall", "core_stall")
GATED = ("rf_bank", "smem")   # energy structures whose static energy ideal gating (power.gate_unused) follows


@dataclass
class Digest:
    """What the study reads of one run."""

    verified: bool
    cycles: int                         # sum over launches (sequential launches)
    makespan: int                       # first dispatch to last retirement (concurrent launches)
    n_sms: int
    launches: list[dict]                # kernel, cycles, limit (CTAs/SM by occupancy), n_ctas, grid, block, plugins
    classes: dict[str, int]             # SM-cycles per class, summed over SMs and launches
    l1_accesses: int
    l1_misses: int                      # lines fetched: MISS (and SECTOR_MISS), not HIT_RESERVED
    l2_accesses: int
    l2_misses: int
    energy_j: float | None
    gateable_j: float | None = None     # static energy of the RF and shared memory (what ideal gating acts on)

    # Miss rates as GPGPU-Sim prints them (L1D_total_cache_miss_rate, L2_total_cache_miss_rate;
    # cache_stats::get_sub_stats), the simulator the paper measured with: misses over accesses,
    # where an access that merges into a line already in flight (HIT_RESERVED, a pending hit)
    # is not a miss. `1 - hit rate` would count those merges as misses, and hide exactly the
    # inter-CTA sharing BCS creates: two CTAs of a pair asking for one line within its latency.
    @property
    def l1_miss_rate(self) -> float:
        return self.l1_misses / self.l1_accesses if self.l1_accesses else 0.0

    @property
    def l2_miss_rate(self) -> float:
        return self.l2_misses / self.l2_accesses if self.l2_accesses else 0.0

    @property
    def two_d(self) -> bool:
        """Some launch has 2D (or 3D) CTAs: BCS applies (§4.2: not to one-dimensional CTAs,
        whatever the grid's shape)."""
        return any(is_2d(tuple(ln.get("block") or (1,))) for ln in self.launches)

    def kernels(self) -> list[tuple[int, int]]:
        """(CTAs in the grid, occupancy limit) of every launch."""
        return [(ln["n_ctas"], ln["limit"]) for ln in self.launches]

    def sweep_top(self) -> int:
        return sweep_top(self.kernels(), self.n_sms)

    def grid_limited(self) -> bool:
        return grid_limited(self.kernels(), self.n_sms)

    def kernel_cycles(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for ln in self.launches:
            out[ln["kernel"]] = out.get(ln["kernel"], 0) + ln["cycles"]
        return out

    def class_fractions(self) -> dict[str, float]:
        tot = sum(self.classes.values()) or 1
        return {c: self.classes.get(c, 0) / tot for c in CLASSES}

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def digest(record: dict) -> Digest:
    stats = record.get("stats") or []
    rows = record.get("launches") or []
    firsts = [s.get("first_cycle", -1) for s in stats]
    lasts = [s.get("last_cycle", -1) for s in stats]
    cycles = sum(s["cycles"] for s in stats)
    makespan = max(lasts) - min(firsts) + 1 if stats and min(firsts) >= 0 and min(lasts) >= 0 else cycles
    launches = []
    for k, s in enumerate(stats):
        grid = list(rows[k]["grid"]) if k < len(rows) else [1, 1, 1]
        block = list(rows[k].get("block") or [1, 1, 1]) if k < len(rows) else [1, 1, 1]
        n = 1
        for g in grid:
            n *= int(g)
        launches.append({"kernel": s["kernel"], "cycles": s["cycles"], "limit": s["ctas_per_sm_limit"], "n_ctas": n,
                         "grid": grid, "block": block, "plugins": s.get("plugins") or {}})
    classes = {c: sum(s["sm_cycles"].get(c, 0) for s in stats) for c in CLASSES}
    energy = [s["energy"]["total_j"] for s in stats if isinstance(s.get("energy"), dict)]
    gate = [sum((s["energy"].get("static_j") or {}).get(x, 0.0) for x in GATED) for s in stats
            if isinstance(s.get("energy"), dict)]
    n_sms = int(((record.get("config") or {}).get("gpu") or {}).get("n_sms", 1))
    return Digest(
        verified=bool(record.get("verified")), cycles=cycles, makespan=makespan, n_sms=n_sms, launches=launches,
        classes=classes,
        l1_accesses=sum(sm["l1d_accesses"] for s in stats for sm in s["per_sm"]),
        l1_misses=sum(sm["l1d_misses"] for s in stats for sm in s["per_sm"]),
        l2_accesses=sum(s["components"].get("l2_accesses", 0) for s in stats),
        l2_misses=sum(sl["misses"] + sl["sector_misses"] for s in stats for sl in s["components"].get("l2_slices", [])),
        energy_j=sum(energy) if len(energy) == len(stats) and stats else None,
        gateable_j=sum(gate) if len(gate) == len(stats) and stats else None)


def speedup(base: Digest | None, other: Digest | None, makespan: bool = False) -> float | None:
    """Performance of `other` relative to `base` (cycles ratio); None if either is missing."""
    if base is None or other is None:
        return None
    a, b = (base.makespan, other.makespan) if makespan else (base.cycles, other.cycles)
    return a / b if b else None


def kernel_t_new(lcs: Digest, key: str = "cta_scheduler.lcs") -> dict[str, float]:
    """Mean T_new per kernel name over its launches' throttle decisions."""
    sums: dict[str, list[float]] = {}
    for ln in lcs.launches:
        c = ln["plugins"].get(key) or {}
        if c.get("decisions"):
            sums.setdefault(ln["kernel"], []).append(c["t_new_sum"] / c["decisions"])
    return {k: sum(v) / len(v) for k, v in sums.items()}


@dataclass
class Curve:
    """A workload's performance over CTA counts 1..N (Fig. 4) and what came of it."""

    counts: list[int]
    cycles: list[int]
    classes: list[dict[str, float]]
    l1_miss: list[float]
    l2_miss: list[float]
    kernel_cycles: list[dict[str, int]]
    t_max: int
    grid_limited: bool
    type: str = "n/a"
    opt: int = 1

    @property
    def perf(self) -> list[float]:
        """Performance normalised to one CTA per SM."""
        return [self.cycles[0] / c for c in self.cycles]

    @classmethod
    def of(cls, points: list[tuple[int, Digest]], t_max: int, limited: bool) -> Curve:
        points = sorted(points)
        c = cls([n for n, _ in points], [d.cycles for _, d in points], [d.class_fractions() for _, d in points],
                [d.l1_miss_rate for _, d in points], [d.l2_miss_rate for _, d in points],
                [d.kernel_cycles() for _, d in points], t_max, limited)
        c.type, c.opt = classify(c.perf)
        return c


@dataclass
class StudyData:
    """Everything the figures, tables and claims of the study read."""

    size: str = ""
    workloads: list[str] = field(default_factory=list)
    study: list[str] = field(default_factory=list)   # the paper's stand-ins: averages are over these
    curves: dict[str, Curve] = field(default_factory=dict)              # Fig. 4-6
    kernels: list[dict] = field(default_factory=list)                   # Fig. 13: per kernel T_max, OPT, T_new
    lcs: dict[str, dict] = field(default_factory=dict)                  # Fig. 12, 14: per workload
    variants: dict[str, dict[str, float | None]] = field(default_factory=dict)  # LCS floor / ceil / one SM
    bcs: dict[str, dict[str, Any]] = field(default_factory=dict)        # Fig. 16, 17: 2D stand-ins
    fig15: dict[str, dict[str, Any]] = field(default_factory=dict)
    mixes: dict[str, dict[str, Any]] = field(default_factory=dict)      # Fig. 18
    compare: dict[str, dict[str, float | None]] = field(default_factory=dict)  # Fig. 19
    fig8: dict[str, Any] = field(default_factory=dict)
    tnew_check: dict[str, Any] = field(default_factory=dict)  # T_new on a thrashing kernel (tnew_check.record)
    waves: dict[str, float] = field(default_factory=dict)              # stand-in -> fewest CTA waves (static)
    missing: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def type_of(self, workload: str) -> str:
        c = self.curves.get(workload)
        return c.type if c is not None else "n/a"

    def group(self, types: tuple[str, ...], values: dict[str, float | None]) -> float | None:
        """Geometric mean of the values of workloads whose type is in `types`."""
        vals = [v for w, v in values.items() if v is not None and self.type_of(w) in types]
        return geomean(vals) if vals else None
