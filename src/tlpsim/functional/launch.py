"""Running one kernel launch functionally: marshal the arguments into the
parameter buffer, then execute the grid chunk by chunk of CTAs (so memory stays
bounded) and stream the trace to a writer (trace.spill.TraceWriter), which keeps
it in memory if small and spills it to a file piece by piece if large."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tlpsim.errors import KernelError
from tlpsim.functional.kernel import CompiledKernel
from tlpsim.functional.launch_args import as_dim3, check_shape, pack_params
from tlpsim.functional.runaway import RunLimits
from tlpsim.functional.simt import ChunkRunner
from tlpsim.functional.state import ChunkState, Geometry
from tlpsim.functional.tracer import TraceRecorder
from tlpsim.functional.xcta import CrossCtaTracker
from tlpsim.trace.format import Trace
from tlpsim.trace.spill import TraceFile, TraceWriter, chunk_rows as default_chunk_rows
from tlpsim.trace.spill import memory_rows as default_memory_rows

DEFAULT_CHUNK_THREADS = 1 << 16


OOB_READS = ("error", "zero")  # what a global load outside every allocation does


@dataclass
class LaunchOutcome:
    trace: Trace | TraceFile | None
    warp_instructions: int
    oob_reads: int | None = None  # lane loads that read 0 outside every allocation (None: they are errors)


def run_launch(ck: CompiledKernel, memory, grid, block, kernel_params: np.ndarray, dynamic_shared: int = 0, *,
               trace: bool = True, budget: int | None = None, chunk_threads: int = DEFAULT_CHUNK_THREADS,
               n_sms: int = 1, value_classes: bool = True, progress=None,
               limits: RunLimits | None = None, constants: dict | None = None,
               oob_reads: str = "error", writer: TraceWriter | None = None, key: str | None = None,
               extra=None) -> LaunchOutcome:
    """Execute a launch. `limits` (budgets, time limit; see functional.runaway) default
    to a plain total `budget`; `constants` set special registers (e.g. a cooperative
    launch's grid-barrier workspace, %envreg1/%envreg2). `oob_reads="zero"` lets
    global loads outside every allocation read 0 (counted) instead of faulting.

    The trace goes to `writer` (default: a TraceWriter with the TLPSIM_TRACE_* row
    budgets); `extra()` (called after the run) gives the arrays a cache entry keeps
    beside it under `key`, when the writer writes one."""
    if oob_reads not in OOB_READS:
        raise ValueError(f"oob_reads must be one of {OOB_READS}, not {oob_reads!r}")
    limits = limits or RunLimits(budget)
    deadline = limits.deadline(time.perf_counter())
    geom = Geometry(*check_shape(grid, block, ck.display_name))
    lay = ck.layout
    shared = lay.shared_static_bytes + int(dynamic_shared)
    wpc = geom.warps_per_cta
    n_warps = geom.n_ctas * wpc
    recorder = xcta = None
    if trace:
        spaces = [ck.oc.space_of_access(ins) if ins.opclass in ("mem", "atomic") else None
                  for ins in ck.fn.instructions]
        if writer is None:
            writer = TraceWriter(chunk_rows=default_chunk_rows(), memory_rows=default_memory_rows())
        recorder = TraceRecorder(ck.fn, spaces, geom.grid, geom.block, n_warps, wpc, value_classes, sink=writer,
                                 run_rows=writer.chunk_rows,
                                 meta={"shared_bytes": shared, "local_bytes": lay.local_bytes})
        # waits for values other CTAs write: the timing model checks their co-residency
        if ck.access_kinds[0].any():
            xcta = CrossCtaTracker(memory, *ck.access_kinds, warps_per_cta=wpc)
    per_chunk = max(1, chunk_threads // (wpc * 32))
    total = oob = 0
    remaining = limits.budget
    for begin in range(0, geom.n_ctas, per_chunk):
        end = min(begin + per_chunk, geom.n_ctas)
        st = ChunkState(geom, begin, end, ck.fn.reg_types, memory, kernel_params, shared, lay.local_bytes,
                        lay.param_frame_bytes, n_sms)
        st.constants["dynamic_smem_size"] = int(dynamic_shared)
        st.constants.update(constants or {})
        st.oob_zero = oob_reads == "zero"
        if recorder is not None:
            recorder.begin_chunk(begin * wpc, (end - begin) * wpc)
        runner = ChunkRunner(ck, st, recorder, remaining, warp_base=begin * wpc, limits=limits, deadline=deadline)
        if xcta is not None:
            runner.xcta = xcta
            xcta.begin_chunk(runner)
        try:
            runner.run()
        finally:
            # the runner and its guard refer to each other: break the cycle, so this chunk's
            # registers are freed now, not at the next full collection (dozens of chunks later)
            runner.runaway.r = None
        if recorder is not None:
            recorder.end_chunk()
        total += runner.warp_insts
        oob += st.oob_reads
        if remaining is not None:
            remaining -= runner.warp_insts
        if progress is not None:
            progress(end, geom.n_ctas, total)
    out = None
    if recorder is not None:
        if geom.n_ctas == 0:
            recorder.begin_chunk(0, 0)
            recorder.end_chunk()
        out = writer.close(deps=xcta.dependencies() if xcta is not None else None, key=key,
                           extra=extra() if extra is not None else None)
    return LaunchOutcome(out, total, oob if oob_reads == "zero" else None)


@dataclass(frozen=True)
class CooperativeLaunch:
    """What a cooperative launch (cudaLaunchCooperativeKernel) adds: the grid barrier's
    workspace, whose address the driver hands the kernel in %envreg1 (high 32 bits)
    and %envreg2 (low), and every CTA executing together, as co-residency guarantees."""

    workspace: int
    chunk_threads: int

    @property
    def constants(self) -> dict:
        return {"envreg1": self.workspace >> 32, "envreg2": self.workspace & 0xFFFFFFFF}


def cooperative_launch(memory, kernel: str, grid, block) -> CooperativeLaunch:
    g, b = as_dim3(grid, "grid"), as_dim3(block, "block")
    n_threads = g[0] * g[1] * g[2] * -(-(b[0] * b[1] * b[2]) // 32) * 32
    ws = memory.alloc(16, f"grid barrier workspace of {kernel}")
    return CooperativeLaunch(ws, n_threads)


__all__ = ["OOB_READS", "CooperativeLaunch", "KernelError", "LaunchOutcome", "as_dim3", "cooperative_launch", "pack_params",
           "run_launch"]
