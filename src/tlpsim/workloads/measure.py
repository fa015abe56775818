"""Measured occupancy of a workload's kernels: a timing run at a size on a preset,
summarised per kernel (`tlpsim workloads --measure`).

The full-occupancy share of a launch is `LaunchStats.full_occupancy_share_min`: the
share of its cycles the least-occupied SM held the baseline's maximum resident CTAs
(from the SMs' exact CTA-count cycles). A kernel launched several times gets the
cycle-weighted mean over its launches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class KernelMeasure:
    kernel: str
    launches: int = 0
    cycles: int = 0
    warp_insts: int = 0
    insts_share: float = 0.0         # of the workload's warp instructions
    full_occupancy_min: float = 0.0  # cycle-weighted over launches; least-occupied SM
    full_occupancy_mean: float = 0.0  # cycle-weighted over launches; mean over SMs


@dataclass
class WorkloadMeasure:
    workload: str
    size: str
    preset: str
    verified: bool
    wall_seconds: float
    kernels: dict[str, KernelMeasure]


def measure(name: str, size: str, preset: str) -> WorkloadMeasure:
    """Simulate workload `name` at `size` on `preset` and summarise each kernel."""
    import tlpsim
    from tlpsim.workloads.registry import get_workload

    t0 = time.perf_counter()
    with tlpsim.Device(mode="timing", config=preset):
        result = get_workload(name).execute(size)
    wall = time.perf_counter() - t0
    kernels: dict[str, KernelMeasure] = {}
    for rec in result.launches:
        st = rec.stats
        k = kernels.setdefault(rec.kernel, KernelMeasure(rec.kernel))
        k.launches += 1
        k.cycles += st.cycles
        k.warp_insts += st.warp_insts
        k.full_occupancy_min += st.full_occupancy_share_min * st.cycles
        k.full_occupancy_mean += st.full_occupancy_share_mean * st.cycles
    total = sum(k.warp_insts for k in kernels.values())
    for k in kernels.values():
        k.insts_share = k.warp_insts / total if total else 0.0
        k.full_occupancy_min = k.full_occupancy_min / k.cycles if k.cycles else 0.0
        k.full_occupancy_mean = k.full_occupancy_mean / k.cycles if k.cycles else 0.0
    return WorkloadMeasure(name, size, preset, result.verified, wall, kernels)
