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

import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tlpsim.errors import ArgumentError, ArgumentWarning, KernelNotFound, TlpsimError
from tlpsim.frontend.ir import Function, Module
from tlpsim.frontend.loader import Program, load_program
from tlpsim.frontend.names import qualified_name
from tlpsim.frontend.name_expressions import add_name_expressions, check_expressions, is_template_name, lowered_names
from tlpsim.frontend.resources import ResourceUsage
from tlpsim.frontend.toolchains import DEFAULT_TOOLCHAIN, target_problem
from tlpsim.functional.kernel import CompiledKernel
from tlpsim.functional.launch import OOB_READS, LaunchOutcome, as_dim3, cooperative_launch, run_launch
from tlpsim.functional.launch_args import (
    DEFAULT_SHARED_PER_BLOCK,
    LaunchArgumentError,
    check_max_dynamic,
    check_shape,
    check_shared,
    pack_params,
)
from tlpsim.functional.memory import DeviceMemory
from tlpsim.functional.replay import apply_diff, launch_key, memory_diff, open_trace_cache
from tlpsim.functional.runaway import check_limit, env_factor, env_time_limit, launch_limits
from tlpsim.trace.format import Trace
from tlpsim.trace.spill import TraceFile, TraceWriter, chunk_rows, device_rows, memory_rows

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
                 dry_run: bool = False) -> None:
        if mode not in ("functional", "timing"):
            raise TlpsimError(f"Device mode must be 'functional' or 'timing', not {mode!r}")
        if dry_run and mode != "functional":
            raise TlpsimError("Device(dry_run=True) records launch shapes without executing them; "
                              "it has no timing mode")
        if oob_reads not in OOB_READS:
            raise TlpsimError(f"Device oob_reads must be 'error' (an illegal-address error, the default) or 'zero' "
                              f"(global loads outside every allocation read 0 and are counted), not {oob_reads!r}")
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
        if mode == "timing":
            from tlpsim.session import TimingSession  # the timing layer only when it is used

            # dense: tick every cycle (reference); the time limit covers the timing run and its plug-ins
            self._timing = TimingSession(self.config, dense=dense, time_limit=self.time_limit)
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
            ck = CompiledKernel(module, kernel, self.module_globals(module), poison=self.poison_dead_registers)
            self._compiled[key] = ck
        return ck

    # ------------------------------------------------------------ launching

    def launch(self, program: Program, kernel_name: str, grid, block, args: Sequence, shared_mem: int = 0,
               stream: "Stream | None" = None, resources: dict | None = None,
               max_dynamic_shared: int | None = None, cooperative: bool = False) -> LaunchRecord:
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
            key = launch_key(program.module.source, kernel.name, as_dim3(grid, "grid"), as_dim3(block, "block"),
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
            outcome = run_launch(ck, self.memory, grid, block, params, shared_mem, trace=self.trace,
                                 chunk_threads=coop.chunk_threads if coop else self.chunk_threads,
                                 value_classes=self.value_classes, limits=limits,
                                 constants=coop.constants if coop else None, oob_reads=self.oob_reads,
                                 writer=writer or TraceWriter(chunk_rows=chunk_rows(), memory_rows=in_memory),
                                 key=key, extra=extra)
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
        if self._timing is not None and outcome.trace is not None:
            res = program.resources.get(kernel.name)
            over = resources or {}
            regs = over.get("registers", res.registers if res else None)
            smem = over.get("shared_bytes", res.shared_bytes if res else ck.layout.shared_static_bytes)
            if regs is None:
                raise TlpsimError(f"kernel {shown}: no register count (ptxas cannot assemble this PTX's target); "
                                  "pass resources={'registers': N, 'shared_bytes': B} to the launch")
            rec.device = self
            self._pending.append((rec, (ck.fn, ck.oc.space_of_access, outcome.trace, regs, smem + int(shared_mem),
                                        rec.stream, ck.analyzed)))
            if stream is None or rec.stream == 0:
                self.synchronize()  # the default stream serialises with everything before it
        self.launches.append(rec)
        return rec

    def synchronize(self) -> None:
        """Simulate pending timing launches: those on different streams run concurrently."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        for rec, stats in zip((p[0] for p in pending), self._timing.simulate_many([p[1] for p in pending])):
            rec.stats = stats


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
        if isinstance(a, ndarray):
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


# ---------------------------------------------------------------- arrays


def _shape(shape) -> tuple[int, ...]:
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) for d in dims):
        raise ArgumentError(f"shape {shape!r}: dimensions must be whole numbers")
    if any(d < 0 for d in dims):  # NumPy's words
        raise ArgumentError(f"shape {shape!r}: negative dimensions are not allowed")
    return tuple(int(d) for d in dims)


def _dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ArgumentError(f"dtype {dtype!r} is not a NumPy data type") from None
    if dt.kind in "OU":  # device memory holds numbers or raw records: an object array's bytes are Python pointers
        raise ArgumentError(f"dtype {dt} is not supported on the device: arrays hold booleans, integers, floats, "
                            "complex numbers or fixed-size records")
    return dt


class ndarray:
    """A C-contiguous array in simulated device memory."""

    def __init__(self, shape, dtype=np.float32, device: Device | None = None, _ptr: int | None = None) -> None:
        self.device = device or Device.current()
        self.shape = _shape(shape)
        self.dtype = _dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        self.ptr = _ptr if _ptr is not None else self.device.memory.alloc(self.nbytes, f"ndarray{self.shape}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def data(self) -> "ndarray":
        return self

    def get(self, stream=None) -> np.ndarray:
        raw = self.device.memory.read(self.ptr, self.nbytes)
        return raw.view(self.dtype).reshape(self.shape).copy()

    def set(self, arr, stream=None) -> None:
        a = np.ascontiguousarray(arr, dtype=self.dtype)
        if a.shape != self.shape:
            raise TlpsimError(f"set: shape {a.shape} does not match {self.shape}")
        self.device.memory.write(self.ptr, a)

    def copy(self) -> "ndarray":
        out = ndarray(self.shape, self.dtype, self.device)
        out.set(self.get())
        return out

    def fill(self, value) -> None:
        self.set(np.full(self.shape, value, dtype=self.dtype))

    def reshape(self, *shape) -> "ndarray":
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        shape = tuple(int(s) for s in shape)
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1]))
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if int(np.prod(shape)) != self.size:
            raise TlpsimError(f"cannot reshape array of size {self.size} into shape {shape}")
        return ndarray(shape, self.dtype, self.device, _ptr=self.ptr)

    def ravel(self) -> "ndarray":
        return self.reshape(self.size)

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    def __repr__(self) -> str:
        return f"tlpsim.ndarray(shape={self.shape}, dtype={self.dtype}, ptr={self.ptr:#x})"

    def __array__(self, dtype=None, copy=None):
        out = self.get()
        return out.astype(dtype) if dtype is not None else out


def asarray(a, dtype=None) -> ndarray:
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    host = np.ascontiguousarray(a.get() if isinstance(a, ndarray) else a, dtype=dtype)
    if host.dtype.kind in "OU":
        raise ArgumentError(f"asarray: argument a has dtype {host.dtype} ({type(a).__name__}); a device array holds "
                            "booleans, integers, floats, complex numbers or fixed-size records (convert it first, "
                            "e.g. np.asarray(a, dtype=np.float32))")
    out = ndarray(host.shape, host.dtype)
    out.set(host)
    return out


array = asarray


def asnumpy(a, stream=None) -> np.ndarray:
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def empty(shape, dtype=np.float32) -> ndarray:
    return ndarray(shape, dtype)


def zeros(shape, dtype=np.float32) -> ndarray:
    return ndarray(shape, dtype)  # fresh device memory is zeroed


def ones(shape, dtype=np.float32) -> ndarray:
    out = ndarray(shape, dtype)
    out.fill(1)
    return out


def full(shape, fill_value, dtype=None) -> ndarray:
    dtype = dtype or np.asarray(fill_value).dtype
    out = ndarray(shape, dtype)
    out.fill(fill_value)
    return out


def empty_like(a, dtype=None) -> ndarray:
    return ndarray(a.shape, dtype or a.dtype)


def zeros_like(a, dtype=None) -> ndarray:
    return ndarray(a.shape, dtype or a.dtype)


def arange(*args, dtype=None) -> ndarray:
    return asarray(np.arange(*args, dtype=dtype))


# ---------------------------------------------------------------- kernels and modules


class RawModule:
    """CUDA source (or PTX) compiled once; kernels are fetched with get_function().

    `options` are passed to nvcc as CuPy passes them to NVRTC (`-I`, `-D`, `--std`,
    `-maxrregcount` are understood; see frontend.options). `name_expressions`
    (e.g. ["scale<float, 3>"]) instantiate template kernels and let
    `get_function` find them by that expression, as in CuPy. With
    `enable_cooperative_groups`, launches are cooperative (grid.sync() works; all
    CTAs are executed together). A module pickles as its source and options and is
    recompiled (from the PTX cache) where it is unpickled, as CuPy's does."""

    def __init__(self, code: str | None = None, *, path: str | None = None, options: Sequence[str] = (),
                 backend: str = "nvcc", name_expressions=None, arch: str | None = None,
                 maxrregcount: int | None = None, jitify: bool = False,
                 enable_cooperative_groups: bool = False, toolchain: str | None = None) -> None:
        if (code is None) == (path is None):
            raise TlpsimError("RawModule needs exactly one of code= or path=")
        if code is not None:
            _check_code(code, "RawModule")
        if backend not in ("nvcc", "nvrtc"):
            raise TlpsimError(f"RawModule backend must be 'nvcc' or 'nvrtc' (both compile with nvcc here), "
                              f"not {backend!r}")
        self._spec = dict(code=code, path=path, options=tuple(options) if not isinstance(options, str) else options,
                          name_expressions=name_expressions, arch=arch, maxrregcount=maxrregcount,
                          enable_cooperative_groups=enable_cooperative_groups, toolchain=toolchain)
        self.options = self._spec["options"]
        self.cooperative = bool(enable_cooperative_groups)
        exprs = check_expressions(name_expressions)
        if path is not None:
            from tlpsim.source_files import check_source_file

            check_source_file(path)
        dev = Device.current()
        kw = dict(arch=arch or dev.arch, maxrregcount=maxrregcount or dev.maxrregcount, options=self.options,
                  toolchain=toolchain or dev.toolchain)
        if exprs:
            from pathlib import Path

            text = code if code is not None else _read_source(path)
            kw.update(include_dirs=[str(Path(path).resolve().parent)] if path is not None else [],
                      name=str(path) if path is not None else None)
            self.program: Program = load_program(add_name_expressions(text, exprs), **kw)
        else:
            from pathlib import Path

            self.program = load_program(Path(path) if path is not None else code, **kw)
        self._lowered = lowered_names(self.program.module, exprs) if exprs else {}

    def get_lowered_name(self, name_expression: str) -> str:
        """The mangled name of a kernel given in `name_expressions`."""
        try:
            return self._lowered[name_expression]
        except KeyError:
            raise KernelNotFound(f"{name_expression!r} was not given in name_expressions "
                                 f"(given: {', '.join(map(repr, self._lowered)) or 'none'})") from None

    def get_function(self, name: str) -> "RawKernel":
        mangled = self._lowered.get(name, name)
        self.program.kernel(mangled)  # resolve now so a bad name fails here
        return RawKernel(None, name, _program=self.program, _module=self)

    def get_global(self, name: str) -> ndarray:
        module = self.program.module
        if name not in module.variables:
            raise TlpsimError(f"module has no global variable '{name}'")
        var = module.variables[name]
        addr = Device.current().module_globals(module)[name]
        return ndarray((var.size,), np.uint8, _ptr=addr)

    def __reduce__(self):
        return (_module_from_spec, (self._spec,))

    def pointer_types(self, name: str) -> list[tuple[str, np.dtype | None]]:
        """(declaration, element type or None) of each parameter of kernel `name`, from
        the CUDA source; [] for PTX or a kernel the source does not define once."""
        from tlpsim.frontend.loader import _is_ptx_text
        from tlpsim.frontend.signatures import kernel_parameters, pointee_dtype

        code, path = self._spec["code"], self._spec["path"]
        if path is not None and str(path).endswith(".ptx"):
            return []
        text = code if code is not None else _read_source(path)
        if _is_ptx_text(text):
            return []
        decls = kernel_parameters(text, name.split("<")[0].rsplit("::", 1)[-1].strip())
        return [(d, pointee_dtype(d)) for d in decls or []]


_REINTERPRET_WARNED: set[tuple[str, int, str]] = set()  # (kernel, parameter, dtype) already warned about


def _check_code(code, who: str) -> None:
    """`code` is source text; PTX (which CuPy also takes) must say so with `.version`,
    or nvcc would compile it as CUDA C++ and report C++ errors about PTX."""
    if not isinstance(code, str):
        raise ArgumentError(f"{who}: code must be CUDA C++ or PTX source text (a str), got {type(code).__name__}"
                            + (f" {code!r}" if isinstance(code, (int, float)) else ""))
    head = "\n".join(ln for ln in code.lstrip().splitlines()[:40] if not ln.lstrip().startswith("//"))
    looks_ptx = any(d in head for d in (".target", ".address_size", ".visible .entry", ".entry "))
    if looks_ptx and ".version" not in head:
        raise ArgumentError(f"{who}: code looks like PTX (it has {'.target' if '.target' in head else '.entry'}) "
                            "but no .version directive, so it would be compiled as CUDA C++; start it with "
                            "`.version X.Y` (e.g. .version 8.0) and `.target sm_XX`")


def _module_from_spec(spec: dict) -> RawModule:
    return RawModule(**spec)


def _read_source(path) -> str:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError as exc:
        raise TlpsimError(f"cannot read CUDA source file {str(path)!r}: {exc.strerror or exc}") from None


class RawKernel:
    """A kernel callable as `kernel(grid, block, args, shared_mem=0, stream=None)`.
    A name with template arguments ("scale<float, 3>") is looked up as a name
    expression. Pickles as its module's source and its name (see RawModule)."""

    def __init__(self, code: str | None, name: str, options: Sequence[str] = (), backend: str = "nvcc", *,
                 _program: Program | None = None, arch: str | None = None, maxrregcount: int | None = None,
                 jitify: bool = False, enable_cooperative_groups: bool = False,
                 _module: RawModule | None = None) -> None:
        if not isinstance(name, str):
            raise ArgumentError(f"RawKernel: name must be the kernel's name (a str), got {type(name).__name__} "
                                f"{name!r}")
        self.name = name
        if _module is None:
            _check_code(code, "RawKernel")
            _module = RawModule(code, options=options, backend=backend, arch=arch, maxrregcount=maxrregcount,
                                name_expressions=[name] if is_template_name(name) else None,
                                enable_cooperative_groups=enable_cooperative_groups)
        self._module = _module
        self.program = _program if _program is not None else _module.program
        self.kernel = self.program.kernel(_module._lowered.get(name, name))
        self._max_dynamic: int | None = None
        self._pointers: list[tuple[str, np.dtype | None]] | None = None  # from the source, on first launch

    @property
    def attributes(self) -> dict:
        res = self.program.resources.get(self.kernel.name)
        return {"num_regs": res.registers if res else None, "shared_size_bytes": res.shared_bytes if res else None,
                "local_size_bytes": res.local_bytes if res else None, "max_threads_per_block": 1024,
                "max_dynamic_shared_size_bytes": self.max_dynamic_shared_size_bytes}

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        """Dynamic shared memory a launch may use (CUDA's 48 KiB default until raised, as in CuPy)."""
        return self._max_dynamic if self._max_dynamic is not None else DEFAULT_SHARED_PER_BLOCK

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        self._max_dynamic = check_max_dynamic(value, Device.current().arch)

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream: "Stream | None" = None,
                 resources: dict | None = None) -> LaunchRecord:
        """Launch. `resources` (tlpsim extension) overrides ptxas's counts for the timing
        model, e.g. {'registers': 32, 'shared_bytes': 1296} to match another toolchain."""
        if not isinstance(args, (tuple, list)):
            raise LaunchArgumentError(f"kernel {self.name}: arguments must be a tuple, got {type(args).__name__}")
        if stream is not None and not isinstance(stream, Stream):
            raise LaunchArgumentError(f"kernel {self.name}: stream must be a tlpsim.Stream (cupy.cuda.Stream) or "
                                      f"None, got {type(stream).__name__} {stream!r}")
        stream = stream or Stream._current()
        self._warn_reinterpreted(args)
        return Device.current().launch(self.program, self.kernel.name, grid, block, args, shared_mem, stream,
                                       resources, max_dynamic_shared=self._max_dynamic,
                                       cooperative=self._module.cooperative)

    def __reduce__(self):
        return (_kernel_from_module, (self._module, self.name, self._max_dynamic))

    def _warn_reinterpreted(self, args) -> None:
        """An array for a `float*` holding float64 (or ints, ...) is passed as is, as on a
        GPU and in CuPy, but almost never meant: say so once per parameter and type."""
        if self._pointers is None:
            self._pointers = self._module.pointer_types(self.name)
        if len(self._pointers) != len(args):
            return
        for k, ((decl, want), a) in enumerate(zip(self._pointers, args)):
            if want is None or not isinstance(a, ndarray) or a.dtype == want:
                continue
            have = a.dtype
            if have.itemsize == want.itemsize and (have.kind in "fc") == (want.kind in "fc"):
                continue  # int32 for unsigned*, uint8 for bool*: the same bytes, on purpose
            key = (self.kernel.name, k, have.str)
            if key in _REINTERPRET_WARNED:
                continue
            _REINTERPRET_WARNED.add(key)
            warnings.warn(f"kernel {self.name}: argument {k} (parameter '{decl}') is a {have} array; the kernel reads "
                          f"its bytes as {want} ({want.itemsize} bytes each), as CuPy does; pass "
                          f"a.astype(numpy.{want.name}) if that is not what you meant", ArgumentWarning, stacklevel=3)


def _kernel_from_module(module: RawModule, name: str, max_dynamic: int | None) -> RawKernel:
    k = module.get_function(name)
    k._max_dynamic = max_dynamic
    return k


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

    @classmethod
    def _current(cls) -> "Stream | None":
        return cls._active[-1] if cls._active else None


class _CudaNamespace:
    """`tlpsim.cuda.Stream`, as in `cupy.cuda.Stream`."""

    Stream = Stream

    @staticmethod
    def Device(i: int = 0):  # noqa: N802 - CuPy spelling
        return Device.current()


cuda = _CudaNamespace()
