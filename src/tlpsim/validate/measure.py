"""tlpsim's figures for a validation, counted the way GPGPU-Sim counts the
reference's (per launch, or summed over a program's launches), GPGPU-Sim's own
figures from the reference entries, and running one host program in a timing-mode
device under a time limit.

Conventions. IPC = thread instructions of active lanes whose guard held (GPGPU-Sim's
`gpu_tot_sim_insn`) per core cycle, whole GPU. Miss rates = misses / accesses with
MSHR-merged pending hits counted as accesses, not misses (GPGPU-Sim's
L1D/L2_total_cache_miss_rate); tlpsim's L1D counts load line-accesses, its L2 one
access per request (line + sector mask), GPGPU-Sim's L2 one per sector. DRAM
utilisation = data-bus busy cycles / DRAM cycles, mean over channels (GPGPU-Sim's
mean per-channel `bw_util`).
"""

from __future__ import annotations

import resource
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tlpsim as cp

__all__ = ["ProgramOutcome", "counts", "gs_launch_metrics", "gs_program_metrics", "run_timed", "timing_metrics"]


def counts(recs: list) -> dict:
    """Warp / thread instruction totals of launches, under both lane conventions."""
    warp = sum(rc.warp_instructions for rc in recs)
    active = sum(rc.trace.active_thread_instructions for rc in recs if rc.trace is not None)
    executed = sum(rc.trace.thread_instructions for rc in recs if rc.trace is not None)
    return {"warp_insn": warp, "thread_insn_active": active, "thread_insn_executed": executed}


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _float_or_none(x: Any) -> float | None:
    return None if x is None else float(x)


def timing_metrics(records: list, max_warps: int) -> dict:
    """tlpsim's figures over `records` (one launch, or a program's launches)."""
    stats = [rc.stats for rc in records]
    c = counts(records)
    cycles = sum(s.cycles for s in stats)
    func_wall = sum(rc.wall_seconds for rc in records)
    tim_wall = sum(s.wall_seconds for s in stats)

    def sm_total(key):
        return sum(sum(p[key] for p in s.per_sm) for s in stats)

    def l2_total(key):
        return sum(sum(sl.get(key, 0) for sl in s.components.get("l2_slices", [])) for s in stats)

    l1_acc, l1_miss = sm_total("l1d_accesses"), sm_total("l1d_misses")
    l2_acc = l2_total("accesses")
    l2_miss = l2_total("misses") + l2_total("sector_misses")
    dram_weighted = sum(s.utilisation.dram * s.cycles for s in stats)
    occ = sum(s.avg_resident_warps * s.cycles for s in stats)
    return {
        "cycles": cycles,
        "warp_insn": sum(s.warp_insts for s in stats), "thread_insn_active": c["thread_insn_active"],
        "thread_insn_executed": c["thread_insn_executed"],
        "ipc_active": _ratio(c["thread_insn_active"], cycles),
        "ipc": _ratio(c["thread_insn_executed"], cycles),                       # GPGPU-Sim's gpu_tot_ipc
        "l1d_accesses": l1_acc, "l1d_misses": l1_miss, "l1d_pending_hits": sm_total("l1d_pending_hits"),
        "l1d_reservation_fails": sm_total("l1d_reservation_fails"),
        "l1d_miss_rate": _ratio(l1_miss, l1_acc),
        "l2_accesses": l2_acc, "l2_misses": l2_miss, "l2_pending_hits": l2_total("pending_hits"),
        "l2_miss_rate": _ratio(l2_miss, l2_acc),
        "l2_miss_rate_incl_pending": (1.0 - l2_total("hits") / l2_acc) if l2_acc else None,
        "dram_reads": sum(s.dram_reads for s in stats), "dram_writes": sum(s.dram_writes for s in stats),
        "dram_read_sectors": l2_total("dram_read_sectors"),   # 32-byte sectors (GPGPU-Sim's dram_reads counts these)
        "dram_util": _ratio(dram_weighted, cycles),
        "avg_mem_latency": _ratio(sm_total("mem_latency_sector_cycles"), sm_total("mem_latency_sectors")),
        "occupancy_pct": (100.0 * occ / cycles / max_warps) if cycles else None,
        "ctas_per_sm_limit": stats[0].ctas_per_sm_limit if stats else None,
        "limited_by": stats[0].limited_by if stats else None,
        "functional_wall_s": func_wall, "timing_wall_s": tim_wall,
        "thread_insn_per_wall_s": _ratio(c["thread_insn_executed"], func_wall + tim_wall),
        "timing_thread_insn_per_s": _ratio(c["thread_insn_executed"], tim_wall),
    }


def gs_program_metrics(ref: dict) -> dict:
    """GPGPU-Sim's figures of a reference program (gpgpusim-gtx480.json entry)."""
    util = float(ref["dram_bw_util_avg"]) if "dram_bw_util_avg" in ref else None
    return {"cycles": int(ref["gpu_tot_sim_cycle"]), "ipc": float(ref["gpu_tot_ipc"]),
            "warp_insn": int(ref["warp_insn"]), "thread_insn": int(ref["gpu_tot_sim_insn"]),
            "l1d_miss_rate": float(ref["l1d_miss_rate"]), "l2_miss_rate": float(ref["l2_miss_rate"]),
            "dram_util": util, "occupancy_pct": float(ref["gpu_tot_occupancy_pct"]),
            "avg_mem_latency": _float_or_none(ref.get("averagemflatency")),
            "ctas_per_sm_limit": int(ref["cta_per_sm_limit"]),
            "wall_s": float(ref["wall_s"]), "thread_insn_per_wall_s": float(ref["thread_insn_per_wall_s"])}


def gs_launch_metrics(launch: dict) -> dict:
    """GPGPU-Sim's figures of one microbenchmark launch (micro JSON `launches` entry)."""

    def rate(miss: str, acc: str) -> float | None:
        return launch[miss] / launch[acc] if launch.get(acc) else None

    return {"cycles": int(launch["gpu_sim_cycle"]), "ipc": float(launch["gpu_ipc"]),
            "warp_insn": int(launch["warp_insn"]), "thread_insn": int(launch["thread_insn"]),
            "l1d_miss_rate": rate("l1d_misses", "l1d_accesses"), "l2_miss_rate": rate("l2_misses", "l2_accesses"),
            "dram_util": float(launch["dram_bw_util_avg"]) if "dram_bw_util_avg" in launch else None,
            "avg_mem_latency": _float_or_none(launch.get("averagemflatency")),
            "occupancy_pct": float(launch["gpu_occupancy_pct"])}


# ---------------------------------------------------------------- running a host program

class _TimeLimit(Exception):
    pass


def _on_alarm(signum, frame):
    raise _TimeLimit()


@dataclass
class ProgramOutcome:
    """A host program run in a timing-mode device: its result (None when it failed),
    the error, and the wall time of the whole program."""

    result: Any = None
    records: list = field(default_factory=list)
    error: str | None = None
    traceback: str | None = None
    wall_s: float = 0.0
    max_warps: int = 48
    peak_rss_mb: float = 0.0


def run_timed(program: Callable[[], Any], config: Any, time_limit: int = 0, trace_cache: bool = True) -> ProgramOutcome:
    """Run `program()` (a host program returning a `RunResult`) on a fresh timing-mode
    device of `config`. A failure or exceeding `time_limit` seconds (SIGALRM; 0 = none;
    main thread only) is recorded in the outcome, not raised."""
    out = ProgramOutcome()
    old = signal.signal(signal.SIGALRM, _on_alarm) if time_limit else None
    t0 = time.perf_counter()
    try:
        if time_limit:
            signal.alarm(int(time_limit))
        with cp.Device(mode="timing", config=config, trace_cache=trace_cache) as dev:
            out.max_warps = dev._timing.config.sm.max_warps
            try:
                out.result = program()
            finally:
                out.records = list(dev.launches)
    except _TimeLimit:
        out.error = f"time limit {time_limit} s exceeded after {len(out.records)} completed launch(es)"
    except Exception as exc:  # noqa: BLE001 - report the program and go on with the others
        out.error = f"{type(exc).__name__}: {exc}".strip()[:600]
        out.traceback = traceback.format_exc(limit=8)
    finally:
        if time_limit:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    out.wall_s = time.perf_counter() - t0
    out.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if out.error is None and any(rc.stats is None for rc in out.records):
        out.error = "a launch record has no timing statistics"
    return out
