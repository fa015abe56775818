"""Running one kernel launch functionally: marshal the arguments into the
parameter buffer, then execute the grid chunk by chunk of CTAs (so memory stays
bounded) and collect the trace."""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

import numpy as np

from tlpsim.errors import KernelError, TlpsimError
from tlpsim.frontend.ir import Param
from tlpsim.functional.kernel import CompiledKernel
from tlpsim.functional.runaway import RunLimits
from tlpsim.functional.simt import ChunkRunner
from tlpsim.functional.state import ChunkState, Geometry
from tlpsim.functional.tracer import TraceRecorder
from tlpsim.trace.format import Trace

DEFAULT_CHUNK_THREADS = 1 << 16

_SCALAR_FMT = {"u8": "<B", "s8": "<b", "b8": "<B", "u16": "<H", "s16": "<h", "b16": "<H", "u32": "<I",
               "s32": "<i", "b32": "<I", "f32": "<f", "u64": "<Q", "s64": "<q", "b64": "<Q", "f64": "<d"}


@dataclass
class LaunchOutcome:
    trace: Trace | None
    warp_instructions: int


def as_dim3(v, what: str) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    try:
        dims = tuple(int(x) for x in v)
    except TypeError:
        raise TlpsimError(f"{what} must be an int or a tuple of up to 3 ints, got {v!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise TlpsimError(f"{what} must have 1-3 positive dimensions, got {v!r}")
    return (dims + (1, 1))[:3]  # type: ignore[return-value]


def pack_params(params: list[Param], args: tuple, kernel: str, address_of) -> np.ndarray:
    """Lay kernel arguments out as the `.param` space expects. `address_of(arg)`
    returns a device address for array-like arguments, or None."""
    if len(args) != len(params):
        raise TlpsimError(f"kernel {kernel} takes {len(params)} argument(s), {len(args)} given")
    buf = bytearray()
    for k, (p, a) in enumerate(zip(params, args)):
        start = -(-len(buf) // p.align) * p.align
        buf.extend(bytes(start - len(buf)))
        addr = address_of(a)
        if addr is not None:
            if p.size != 8:
                raise TlpsimError(f"argument {k} of kernel {kernel} is an array but parameter '{p.name}' is "
                                  f".{p.type} ({p.size} bytes), not a 64-bit pointer")
            buf.extend(struct.pack("<Q", addr))
            continue
        if isinstance(a, (bytes, bytearray)) or (isinstance(a, np.ndarray) and a.dtype.kind == "V") or \
                isinstance(a, np.void):
            raw = bytes(a) if not isinstance(a, (np.ndarray, np.void)) else a.tobytes()
        elif isinstance(a, np.generic) or isinstance(a, np.ndarray) and a.ndim == 0:
            raw = np.asarray(a).tobytes()
        elif isinstance(a, (bool, int, float)):
            fmt = _SCALAR_FMT.get(p.type)
            if fmt is None:
                raise TlpsimError(f"argument {k} of kernel {kernel}: cannot pass a Python {type(a).__name__} to "
                                  f"parameter '{p.name}' of type .{p.type}[{p.count}]; pass bytes or a NumPy value")
            try:
                raw = struct.pack(fmt, a)
            except struct.error as exc:
                raise TlpsimError(f"argument {k} of kernel {kernel} ({a!r}) does not fit .{p.type}: {exc}") from None
        else:
            raise TlpsimError(f"argument {k} of kernel {kernel} has unsupported type {type(a).__name__}")
        if len(raw) != p.size:
            raise TlpsimError(f"argument {k} of kernel {kernel} is {len(raw)} bytes but parameter '{p.name}' "
                              f"(.{p.type}) takes {p.size}; pass a NumPy scalar of the right dtype")
        buf.extend(raw)
    out = np.zeros(max(16, -(-len(buf) // 16) * 16), dtype=np.uint8)
    out[: len(buf)] = np.frombuffer(bytes(buf), dtype=np.uint8)
    return out


def run_launch(ck: CompiledKernel, memory, grid, block, kernel_params: np.ndarray, dynamic_shared: int = 0, *,
               trace: bool = True, budget: int | None = None, chunk_threads: int = DEFAULT_CHUNK_THREADS,
               n_sms: int = 1, value_classes: bool = True, progress=None,
               limits: RunLimits | None = None) -> LaunchOutcome:
    """Execute a launch. `limits` (budgets, time limit; see functional.runaway) default
    to a plain total `budget`."""
    limits = limits or RunLimits(budget)
    deadline = limits.deadline(time.perf_counter())
    geom = Geometry(as_dim3(grid, "grid"), as_dim3(block, "block"))
    tpc = geom.threads_per_cta
    if tpc > 1024:
        raise TlpsimError(f"kernel {ck.source.name}: a CTA of {tpc} threads exceeds the 1024-thread limit")
    lay = ck.layout
    shared = lay.shared_static_bytes + int(dynamic_shared)
    wpc = geom.warps_per_cta
    n_warps = geom.n_ctas * wpc
    recorder = None
    if trace:
        spaces = [ck.oc.space_of_access(ins) if ins.opclass in ("mem", "atomic") else None
                  for ins in ck.fn.instructions]
        recorder = TraceRecorder(ck.fn, spaces, geom.grid, geom.block, n_warps, wpc, value_classes)
    per_chunk = max(1, chunk_threads // (wpc * 32))
    total = 0
    remaining = limits.budget
    for begin in range(0, geom.n_ctas, per_chunk):
        end = min(begin + per_chunk, geom.n_ctas)
        st = ChunkState(geom, begin, end, ck.fn.reg_types, memory, kernel_params, shared, lay.local_bytes,
                        lay.param_frame_bytes, n_sms)
        st.constants["dynamic_smem_size"] = int(dynamic_shared)
        if recorder is not None:
            recorder.begin_chunk(begin * wpc)
        runner = ChunkRunner(ck, st, recorder, remaining, warp_base=begin * wpc, limits=limits, deadline=deadline)
        runner.run()
        total += runner.warp_insts
        if remaining is not None:
            remaining -= runner.warp_insts
        if progress is not None:
            progress(end, geom.n_ctas, total)
    out = recorder.finish(tuple(i.opclass for i in ck.fn.instructions),
                          {"shared_bytes": shared, "local_bytes": lay.local_bytes}) if recorder else None
    return LaunchOutcome(out, total)


__all__ = ["run_launch", "pack_params", "as_dim3", "LaunchOutcome", "KernelError"]
