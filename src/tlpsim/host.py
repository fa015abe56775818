"""The host API: a CuPy-compatible subset driving the simulated GPU from Python.

    import tlpsim.cupy as cp          # instead of `import cupy as cp`
    k = cp.RawKernel(src, "vecadd")
    a = cp.asarray(np.arange(n, dtype=np.float32)); c = cp.zeros_like(a)
    k((blocks,), (threads,), (a, a, c, np.int32(n)))
    c.get()

`Device` selects the simulated GPU (a context manager); every launch appends a
`LaunchRecord` to `Device.launches`. This layer sits above the functional model
(which executes launches and records traces) and the timing session (which replays
them): neither of those imports it.
"""

from __future__ import annotations

import errno
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tlpsim.analysis.schedule import ORDER_VERSION
from tlpsim.device_pointer import MemoryPointer
from tlpsim.errors import TlpsimError
from tlpsim.frontend.ir import Function, Module
from tlpsim.frontend.loader import Program
from tlpsim.frontend.names import qualified_name
from tlpsim.frontend.resources import ResourceUsage
from tlpsim.frontend.toolchains import DEFAULT_TOOLCHAIN, target_problem
from tlpsim.functional.kernel import CompiledKernel
from tlpsim.functional.launch import OOB_READS, LaunchOutcome, as_dim3, cooperative_launch, run_launch
from tlpsim.functional.launch_args import (
    LaunchArgumentError,
    check_shape,
    check_shared,
    pack_params,
)
from tlpsim.functional.memory import DeviceMemory
from tlpsim.functional.replay import apply_diff, launch_key, memory_diff, open_trace_cache
from tlpsim.functional.runaway import check_limit, env_factor, env_time_limit, launch_limits
from tlpsim.trace.format import Trace
from tlpsim.trace.spill import TraceFile, TraceWriter, chunk_rows, device_rows, memory_rows, spill_dir

DEFAULT_BUDGET = "auto"  # per launch: budget_factor x static instructions x warps (functional.runaway)


@dataclass
class LaunchRecord:
    """One kernel launch: what ran, with which shape and resources, and what it cost."""

    kernel: str
    mangled: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    stream: int
    resources: ResourceUsage | None
    warp_instructions: int = 0
    thread_instructions: int = 0
    # the launch's trace: in memory (Trace) if small, else streamed from a file (TraceFile)
    trace: Trace | TraceFile | None = field(default=None, repr=False)
    wall_seconds: float = 0.0
    from_cache: bool = False  # replayed from the trace cache instead of executed
    compile: dict = field(default_factory=dict)  # how the kernel's PTX was made: toolchain, arch, maxrregcount, flags
    oob_reads: int | None = None  # Device(oob_reads="zero"): lane loads outside every allocation that read 0
    sampling: dict | None = None  # sampled timing (Device(sampling=...)): how its cycles were obtained, and their interval
    device: Any = field(default=None, repr=False, compare=False)
    _stats: Any = field(default=None, repr=False)

    @property
    def stats(self):
        """Timing statistics (timing mode). Launches on explicit streams are simulated
        together when the device synchronises; reading this synchronises."""
        if self._stats is None and self.device is not None and self.device._pending:
            self.device.synchronize()
        return self._stats

    @stats.setter
    def stats(self, value) -> None:
        self._stats = value


def _env_chunk_threads(default: int = 1 << 16) -> int:
    """TLPSIM_CHUNK_THREADS (threads executed together), or the default; a value that
    is not a whole number >= 1 is an error naming the variable, like TLPSIM_BUDGET_FACTOR."""
    raw = os.environ.get("TLPSIM_CHUNK_THREADS", "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise TlpsimError(f"environment variable TLPSIM_CHUNK_THREADS={raw!r} is not a whole number "
                          f"(the threads executed together; default {default})") from None
    if value < 1:
        raise TlpsimError(f"environment variable TLPSIM_CHUNK_THREADS={raw!r} must be at least 1")
    return value


class Device:
    """A simulated GPU: device memory, loaded modules and the record of launches."""

    _stack: list["Device"] = []
    _lock = threading.Lock()
    _created = 0

    def __init__(self, config: Any = None, mode: str = "functional", *, trace: bool = True,
                 budget: int | str | None = DEFAULT_BUDGET, arch: str = "sm_80", value_classes: bool = True,
                 chunk_threads: int | None = None, maxrregcount: int | None = None,
                 trace_cache: bool | str | None = None, dense: bool = False,
                 poison_dead_registers: bool = False, budget_factor: float | None = None,
                 time_limit: float | None = None, oob_reads: str = "error", toolchain: str | None = None,
                 dry_run: bool = False, sampling: Any = None, block_schedule: str | None = None) -> None:
        if mode not in ("functional", "timing"):
            raise TlpsimError(f"Device mode must be 'functional' or 'timing', not {mode!r}")
        if dry_run and mode != "functional":
            raise TlpsimError("Device(dry_run=True) records launch shapes without executing them; "
                              "it has no timing mode")
        if oob_reads not in OOB_READS:
            raise TlpsimError(f"Device oob_reads must be 'error' (an illegal-address error, the default) or 'zero' "
                              f"(global loads outside every allocation read 0 and are counted), not {oob_reads!r}")
        if sampling is not None and getattr(sampling, "on", False) and mode != "timing":
            raise TlpsimError("Device(sampling=...) samples the timing simulation; it needs mode='timing'")
        self.config = config if config is not None else ("gtx480" if mode == "timing" else None)
        self.mode = mode
        Device._created += 1
        self.name = f"Device #{Device._created} ({mode})"  # for messages that must tell devices apart
        self.trace = trace or mode == "timing"
        # runaway launches (functional.runaway): "auto" = budget_factor x static instructions
        # x warps; an int = the launch's total warp instructions; None = no budget
        self.budget = budget if budget in (None, "auto") else check_limit(budget, "budget", integer=True)
        self.budget_factor = check_limit(budget_factor, "budget_factor") if budget_factor is not None \
            else env_factor()
        self.time_limit = check_limit(time_limit, "time_limit") if time_limit is not None else env_time_limit()
        self.arch = arch
        self.maxrregcount = maxrregcount  # e.g. 63 for Fermi-era presets
        # the compiler of this device's CUDA source: "cuda13" (nvcc 13.5) or "cuda11" (NVRTC 11.8)
        self.toolchain = toolchain or DEFAULT_TOOLCHAIN
        # the issue order within basic blocks (gpu.block_schedule): "ptx" or "list" (ptxas-like)
        if block_schedule not in (None, "ptx", "list"):
            raise TlpsimError(f"Device block_schedule must be 'ptx' (nvcc's order) or 'list' (list-scheduled "
                              f"blocks, as ptxas lays them out), not {block_schedule!r}")
        self.block_schedule = block_schedule or "ptx"
        self.value_classes = value_classes
        # overwrite registers where the analyses say they are dead (soundness check)
        self.poison_dead_registers = poison_dead_registers
        # global loads outside every allocation: "error" (CUDA's illegal address) or "zero" (read 0, counted)
        self.oob_reads = oob_reads
        # launches are checked (shape, shared memory, arguments), compiled and recorded, but not
        # executed: device memory keeps what the host wrote (the catalogue reads launch shapes so)
        self.dry_run = bool(dry_run)
        self.chunk_threads = check_limit(chunk_threads, "chunk_threads", integer=True) if chunk_threads \
            else _env_chunk_threads()
        self.memory = DeviceMemory()
        # memoise launches on disk: on by default in timing mode (sweeps re-run workloads)
        if trace_cache is None:
            trace_cache = mode == "timing"
        self.trace_cache = open_trace_cache(trace_cache)  # None, with a warning, when its directory is unwritable
        self.launches: list[LaunchRecord] = []
        self._held_rows = 0  # rows of the in-memory traces in `launches` (beyond device_rows(), traces spill)
        self._globals: dict[int, dict[str, int]] = {}
        self._compiled: dict[tuple[int, str], CompiledKernel] = {}
        self.current_stream = 0
        self._timing = None
        self._pending: list = []  # timing launches not simulated yet (explicit streams)
        # timing mode: which launches the timing model simulates, asked with (ordinal of the
        # launch on this device, kernel name); None = all. A launch it declines runs functionally
        # only (its record has no stats), for validations that cap the launches they simulate.
        self.timing_select: Any = None
        if mode == "timing":
            from tlpsim.session import TimingSession  # the timing layer only when it is used

            # dense: tick every cycle (reference); the time limit covers the timing run and its plug-ins
            self._timing = TimingSession(self.config, dense=dense, time_limit=self.time_limit, sampling=sampling)
            self.memory.host_write_hooks.append(self._timing.host_copy)
        if self.config is not None:
            # a preset's compile options apply in both modes, so a functional run and a
            # timing run of one config execute the same PTX
            g = self._timing.config.gpu if self._timing is not None else _gpu_section(self.config)
            self.toolchain = toolchain or g.toolchain
            # an explicit arch belongs to the explicit toolchain; else the preset's target for it
            preset_arch = g.cuda11_arch if self.toolchain == "cuda11" else g.arch
            self.arch = arch if arch != "sm_80" else preset_arch
            self.maxrregcount = maxrregcount if maxrregcount is not None else g.maxrregcount
            self.block_schedule = block_schedule or g.block_schedule
        problem = target_problem(self.toolchain, self.arch)
        if problem:
            raise TlpsimError(f"Device(toolchain={self.toolchain!r}, arch={self.arch!r}): {problem}")

    @property
    def compile_options(self) -> dict:
        """What kernels are compiled with on this device (unless a module overrides it)."""
        return {"toolchain": self.toolchain, "arch": self.arch, "maxrregcount": self.maxrregcount}

    def __enter__(self) -> "Device":
        Device._stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        Device._stack.remove(self)
        if exc[0] is None:
            self.synchronize()

    @classmethod
    def current(cls) -> "Device":
        if cls._stack:
            return cls._stack[-1]
        with cls._lock:
            global _default_device
            if _default_device is None:
                _default_device = Device()
            return _default_device

    # ------------------------------------------------------------ modules

    def module_globals(self, module: Module) -> dict[str, int]:
        """Device addresses of a module's .global/.const variables (allocated and
        initialised on first use)."""
        key = id(module)
        addrs = self._globals.get(key)
        if addrs is None:
            addrs = {}
            for v in module.variables.values():
                if v.space in ("global", "const") and not v.extern:
                    addrs[v.name] = self.memory.alloc(max(v.size, 1), f"{module.filename}:{v.name}", max(v.align, 16))
                    if v.init:
                        self.memory.write(addrs[v.name], v.init)
            for v in module.variables.values():
                for off, sym in v.relocs:
                    if sym in addrs:
                        self.memory.write(addrs[v.name] + off, np.uint64(addrs[sym]).tobytes())
            self._globals[key] = addrs
        return addrs

    def analyzed_kernel(self, mangled: str):
        """The AnalyzedKernel of kernel `mangled` as this device compiled it (None if it did not)."""
        for ck in self._compiled.values():
            if ck.source.name == mangled:
                return ck.analyzed
        return None

    def compiled(self, module: Module, kernel: Function) -> CompiledKernel:
        key = (id(module), kernel.name)
        ck = self._compiled.get(key)
        if ck is None:
            ck = CompiledKernel(module, kernel, self.module_globals(module), poison=self.poison_dead_registers,
                                scheduled=self.block_schedule == "list")
            self._compiled[key] = ck
        return ck

    # ------------------------------------------------------------ launching

    def launch(self, program: Program, kernel_name: str, grid, block, args: Sequence, shared_mem: int = 0,
               stream: "Stream | None" = None, resources: dict | None = None,
               max_dynamic_shared: int | None = None, cooperative: bool = False, carveout: int = -1) -> LaunchRecord:
        import time

        kernel = program.kernel(kernel_name)
        shown = qualified_name(kernel.name)
        grid, block = check_shape(grid, block, shown)  # CUDA's limits, before any work
        ck = self.compiled(program.module, kernel)
        shared_mem = check_shared(shared_mem, ck.layout.shared_static_bytes, shown, self.arch, max_dynamic_shared)
        params = pack_params(kernel.params, tuple(args), shown, _addresses_on(self))
        if self.dry_run:
            rec = LaunchRecord(kernel=qualified_name(kernel.name), mangled=kernel.name, grid=as_dim3(grid, "grid"),
                               block=as_dim3(block, "block"), shared_mem=int(shared_mem),
                               stream=(stream.id if stream is not None else self.current_stream),
                               resources=program.resources.get(kernel.name), compile=program.compile_record())
            self.launches.append(rec)
            return rec
        t0 = time.perf_counter()
        outcome, cached = None, False
        # a replayed launch would neither fault nor count its out-of-bounds reads
        memoise = (self.trace_cache is not None and not self.poison_dead_registers and not ck.has_syscalls
                   and self.oob_reads == "error")
        # a small trace stays in memory; a large one, or one past the device's in-memory share, streams
        in_memory = max(0, min(memory_rows(), device_rows() - self._held_rows))
        key = writer = extra = None
        if memoise:
            # a list-scheduled kernel's trace lists its instructions in another order
            ptx = program.module.source + (f"\0block_schedule=list{ORDER_VERSION}" if self.block_schedule == "list"
                                           else "")
            key = launch_key(ptx, kernel.name, as_dim3(grid, "grid"), as_dim3(block, "block"),
                             int(shared_mem), params, self.memory)
            hit = self.trace_cache.load_with_extra(key, memory_rows=in_memory)
            if hit is not None:
                apply_diff(self.memory, hit[1])
                outcome, cached = LaunchOutcome(hit[0], hit[0].warp_instructions), True
            else:
                before = self.memory.data[: self.memory.top].copy()
                writer = self.trace_cache.writer(key, chunk_rows=chunk_rows(), memory_rows=in_memory)

                def extra():
                    return memory_diff(before, self.memory.data)
        if outcome is None:
            limits = launch_limits(len(ck.fn.instructions), _n_warps(grid, block), self.budget, self.budget_factor,
                                   self.time_limit)
            coop = cooperative_launch(self.memory, kernel.name, grid, block) if cooperative else None
            writer = writer or TraceWriter(chunk_rows=chunk_rows(), memory_rows=in_memory)
            try:
                outcome = run_launch(ck, self.memory, grid, block, params, shared_mem, trace=self.trace,
                                     chunk_threads=coop.chunk_threads if coop else self.chunk_threads,
                                     value_classes=self.value_classes, limits=limits,
                                     constants=coop.constants if coop else None, oob_reads=self.oob_reads,
                                     writer=writer, key=key, extra=extra)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                where = writer.path.parent if writer.path is not None else spill_dir()
                raise TlpsimError(
                    f"kernel {shown}: no space left on the disk of {where} for this launch's trace "
                    f"({len(self.launches)} launches of this run finished before it). Point TLPSIM_CACHE_DIR "
                    "(trace cache) or TLPSIM_SPILL_DIR (uncached traces) at a larger disk, or lower "
                    "TLPSIM_TRACE_CACHE_MAX / raise TLPSIM_TRACE_CACHE_RESERVE (docs/memory.md)") from exc
        if isinstance(outcome.trace, Trace):
            self._held_rows += outcome.trace.warp_instructions
        rec = LaunchRecord(kernel=qualified_name(kernel.name), mangled=kernel.name, grid=as_dim3(grid, "grid"),
                           block=as_dim3(block, "block"), shared_mem=int(shared_mem),
                           stream=(stream.id if stream is not None else self.current_stream),
                           resources=program.resources.get(kernel.name),
                           warp_instructions=outcome.warp_instructions,
                           thread_instructions=outcome.trace.thread_instructions if outcome.trace else 0,
                           trace=outcome.trace, wall_seconds=time.perf_counter() - t0, from_cache=cached,
                           compile=program.compile_record(), oob_reads=outcome.oob_reads)
        simulate = self.timing_select is None or bool(self.timing_select(len(self.launches), rec.kernel))
        if self._timing is not None and outcome.trace is not None and simulate:
            res = program.resources.get(kernel.name)
            over = resources or {}
            regs = over.get("registers", res.registers if res else None)
            smem = over.get("shared_bytes", res.shared_bytes if res else ck.layout.shared_static_bytes)
            if regs is None:
                raise TlpsimError(f"kernel {shown}: no register count (ptxas cannot assemble this PTX's target); "
                                  "pass resources={'registers': N, 'shared_bytes': B} to the launch")
            rec.device = self
            self._pending.append((rec, (ck.fn, ck.oc.space_of_access, outcome.trace, regs, smem + int(shared_mem),
                                        rec.stream, ck.analyzed, carveout)))
            if stream is None or rec.stream == 0:
                self.synchronize()  # the default stream serialises with everything before it
        self.launches.append(rec)
        return rec

    def synchronize(self) -> None:
        """Simulate pending timing launches: those on different streams run concurrently."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        for k, (rec, stats) in enumerate(zip((p[0] for p in pending),
                                             self._timing.simulate_many([p[1] for p in pending]))):
            rec.stats = stats
            rec.sampling = self._timing.last_sampling[k] if k < len(self._timing.last_sampling) else None


_default_device: Device | None = None


def _gpu_section(config):
    """The [gpu] section (toolchain, arch, maxrregcount) of a preset name or a GPUConfig."""
    if isinstance(config, str):
        from tlpsim.config.loader import load_config

        config = load_config(config)
    return config.gpu


def _n_warps(grid, block) -> int:
    g, b = as_dim3(grid, "grid"), as_dim3(block, "block")
    return g[0] * g[1] * g[2] * -(-(b[0] * b[1] * b[2]) // 32)


def _addresses_on(device: Device):
    """`address_of(arg)` for pack_params: the device address of an array on `device`."""

    def address_of(a) -> int | None:
        # a MemoryPointer or a device array (tlpsim.device_array, which builds on this module)
        if isinstance(a, MemoryPointer) or isinstance(getattr(a, "device", None), Device) and hasattr(a, "ptr"):
            if a.device is not device:
                raise LaunchArgumentError(f"an array allocated on {a.device.name} was passed to a kernel launched on "
                                          f"{device.name}: its address means nothing there; copy it with "
                                          "tlpsim.asarray(a.get()) inside `with device:`")
            return a.ptr
        if isinstance(a, np.ndarray) and a.ndim > 0 and a.dtype.kind != "V":
            raise LaunchArgumentError("a NumPy array was passed as a kernel argument; copy it to the device first "
                                      "with tlpsim.asarray(...)")
        return None

    return address_of


class Stream:
    """A CUDA stream: launches on different streams are recorded as concurrent."""

    _ids = 0
    _active: list["Stream"] = []

    def __init__(self, non_blocking: bool = False, null: bool = False) -> None:
        if null:
            self.id = 0
        else:
            Stream._ids += 1
            self.id = Stream._ids

    def __enter__(self) -> "Stream":
        Stream._active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        Stream._active.remove(self)

    def use(self) -> "Stream":
        Stream._active.append(self)
        return self

    def synchronize(self) -> None:
        """Launches complete synchronously in the simulator."""

    @property
    def ptr(self) -> int:
        """The stream's handle (0: the default stream)."""
        return self.id

    @property
    def done(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    @classmethod
    def _current(cls) -> "Stream | None":
        return cls._active[-1] if cls._active else None


Stream.null = Stream(null=True)  # CuPy's `cupy.cuda.Stream.null`


class _CudaNamespace:
    """`tlpsim.cuda.Stream`, as in `cupy.cuda.Stream`."""

    Stream = Stream

    @staticmethod
    def Device(i: int = 0):  # noqa: N802 - CuPy spelling
        return Device.current()


cuda = _CudaNamespace()
