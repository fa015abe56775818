"""The host API: a CuPy-compatible subset driving the simulated GPU from Python.

    import tlpsim.cupy as cp          # instead of `import cupy as cp`
    k = cp.RawKernel(src, "vecadd")
    a = cp.asarray(np.arange(n, dtype=np.float32)); c = cp.zeros_like(a)
    k((blocks,), (threads,), (a, a, c, np.int32(n)))
    c.get()

`Device` selects the simulated GPU (a context manager); every launch appends a
`LaunchRecord` to `Device.launches`.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tlpsim.errors import TlpsimError
from tlpsim.frontend.ir import Function, Module
from tlpsim.frontend.loader import Program, load_program
from tlpsim.frontend.resources import ResourceUsage
from tlpsim.functional.kernel import CompiledKernel
from tlpsim.functional.launch import LaunchOutcome, as_dim3, pack_params, run_launch
from tlpsim.functional.memory import DeviceMemory
from tlpsim.functional.replay import TraceCache, apply_diff, launch_key, memory_diff
from tlpsim.trace.format import Trace

DEFAULT_BUDGET = 500_000_000  # warp instructions per launch before it is declared runaway


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
    trace: Trace | None = field(default=None, repr=False)
    wall_seconds: float = 0.0
    from_cache: bool = False  # replayed from the trace cache instead of executed
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


class Device:
    """A simulated GPU: device memory, loaded modules and the record of launches."""

    _stack: list["Device"] = []
    _lock = threading.Lock()

    def __init__(self, config: Any = None, mode: str = "functional", *, trace: bool = True,
                 budget: int | None = DEFAULT_BUDGET, arch: str = "sm_80", value_classes: bool = True,
                 chunk_threads: int | None = None, maxrregcount: int | None = None,
                 trace_cache: bool | str | None = None, dense: bool = False,
                 poison_dead_registers: bool = False) -> None:
        if mode not in ("functional", "timing"):
            raise TlpsimError(f"Device mode must be 'functional' or 'timing', not {mode!r}")
        self.config = config if config is not None else ("gtx480" if mode == "timing" else None)
        self.mode = mode
        self.trace = trace or mode == "timing"
        self.budget = budget
        self.arch = arch
        self.maxrregcount = maxrregcount  # e.g. 63 for Fermi-era presets
        self.value_classes = value_classes
        # overwrite registers where the analyses say they are dead (soundness check)
        self.poison_dead_registers = poison_dead_registers
        self.chunk_threads = chunk_threads or int(os.environ.get("TLPSIM_CHUNK_THREADS", 1 << 16))
        self.memory = DeviceMemory()
        # memoise launches on disk: on by default in timing mode (sweeps re-run workloads)
        if trace_cache is None:
            trace_cache = mode == "timing"
        self.trace_cache = TraceCache(trace_cache if isinstance(trace_cache, str) else None) if trace_cache else None
        self.launches: list[LaunchRecord] = []
        self._globals: dict[int, dict[str, int]] = {}
        self._compiled: dict[tuple[int, str], CompiledKernel] = {}
        self.current_stream = 0
        self._timing = None
        self._pending: list = []  # timing launches not simulated yet (explicit streams)
        if mode == "timing":
            from tlpsim.timing.session import TimingSession

            self._timing = TimingSession(self.config, dense=dense)  # dense: tick every cycle (reference)
            self.memory.host_write_hooks.append(self._timing.host_copy)
            g = self._timing.config.gpu
            self.arch = arch if arch != "sm_80" else g.arch
            self.maxrregcount = maxrregcount if maxrregcount is not None else g.maxrregcount

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

    def compiled(self, module: Module, kernel: Function) -> CompiledKernel:
        key = (id(module), kernel.name)
        ck = self._compiled.get(key)
        if ck is None:
            ck = CompiledKernel(module, kernel, self.module_globals(module), poison=self.poison_dead_registers)
            self._compiled[key] = ck
        return ck

    # ------------------------------------------------------------ launching

    def launch(self, program: Program, kernel_name: str, grid, block, args: Sequence, shared_mem: int = 0,
               stream: "Stream | None" = None, resources: dict | None = None) -> LaunchRecord:
        import time

        kernel = program.kernel(kernel_name)
        ck = self.compiled(program.module, kernel)
        params = pack_params(kernel.params, tuple(args), kernel.name, _address_of)
        t0 = time.perf_counter()
        outcome, cached = None, False
        memoise = self.trace_cache is not None and not self.poison_dead_registers and not ck.has_syscalls
        if memoise:
            key = launch_key(program.module.source, kernel.name, as_dim3(grid, "grid"), as_dim3(block, "block"),
                             int(shared_mem), params, self.memory)
            hit = self.trace_cache.load_with_extra(key)
            if hit is not None:
                apply_diff(self.memory, hit[1])
                outcome, cached = LaunchOutcome(hit[0], hit[0].warp_instructions), True
            else:
                before = self.memory.data[: self.memory.top].copy()
        if outcome is None:
            outcome = run_launch(ck, self.memory, grid, block, params, shared_mem, trace=self.trace,
                                 budget=self.budget, chunk_threads=self.chunk_threads,
                                 value_classes=self.value_classes)
            if memoise and outcome.trace is not None:
                self.trace_cache.store(key, outcome.trace, memory_diff(before, self.memory.data))
        from tlpsim.frontend.names import qualified_name

        rec = LaunchRecord(kernel=qualified_name(kernel.name), mangled=kernel.name, grid=as_dim3(grid, "grid"),
                           block=as_dim3(block, "block"), shared_mem=int(shared_mem),
                           stream=(stream.id if stream is not None else self.current_stream),
                           resources=program.resources.get(kernel.name),
                           warp_instructions=outcome.warp_instructions,
                           thread_instructions=outcome.trace.thread_instructions if outcome.trace else 0,
                           trace=outcome.trace, wall_seconds=time.perf_counter() - t0, from_cache=cached)
        if self._timing is not None and outcome.trace is not None:
            res = program.resources.get(kernel.name)
            over = resources or {}
            regs = over.get("registers", res.registers if res else None)
            smem = over.get("shared_bytes", res.shared_bytes if res else ck.layout.shared_static_bytes)
            if regs is None:
                raise TlpsimError(f"kernel {kernel.name}: no register count (ptxas cannot assemble this PTX's target); "
                                  "pass resources={'registers': N, 'shared_bytes': B} to the launch")
            rec.device = self
            self._pending.append((rec, (ck.fn, ck.oc.space_of_access, outcome.trace, regs, smem + int(shared_mem),
                                        rec.stream)))
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


def _address_of(a) -> int | None:
    if isinstance(a, ndarray):
        return a.ptr
    if isinstance(a, np.ndarray) and a.ndim > 0:
        raise TlpsimError("a NumPy array was passed as a kernel argument; copy it to the device first "
                          "with tlpsim.asarray(...)")
    return None


# ---------------------------------------------------------------- arrays


class ndarray:
    """A C-contiguous array in simulated device memory."""

    def __init__(self, shape, dtype=np.float32, device: Device | None = None, _ptr: int | None = None) -> None:
        self.device = device or Device.current()
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        self.dtype = np.dtype(dtype)
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
    """CUDA source (or PTX) compiled once; kernels are fetched with get_function()."""

    def __init__(self, code: str | None = None, *, path: str | None = None, options: Sequence[str] = (),
                 backend: str = "nvcc", name_expressions=None, arch: str | None = None,
                 maxrregcount: int | None = None) -> None:
        if (code is None) == (path is None):
            raise TlpsimError("RawModule needs exactly one of code= or path=")
        self.options = tuple(o for o in options if o not in ("--std=c++11", "-std=c++11", "--std=c++14",
                                                                "-std=c++14", "--std=c++17", "-std=c++17"))
        from pathlib import Path

        dev = Device.current()
        self.program: Program = load_program(Path(path) if path is not None else code,
                                             arch=arch or dev.arch, maxrregcount=maxrregcount or dev.maxrregcount,
                                             options=self.options)

    def get_function(self, name: str) -> "RawKernel":
        self.program.kernel(name)  # resolve now so a bad name fails here
        return RawKernel(None, name, _program=self.program)

    def get_global(self, name: str) -> ndarray:
        module = self.program.module
        if name not in module.variables:
            raise TlpsimError(f"module has no global variable '{name}'")
        var = module.variables[name]
        addr = Device.current().module_globals(module)[name]
        return ndarray((var.size,), np.uint8, _ptr=addr)


class RawKernel:
    """A kernel callable as `kernel(grid, block, args, shared_mem=0, stream=None)`."""

    def __init__(self, code: str | None, name: str, options: Sequence[str] = (), backend: str = "nvcc", *,
                 _program: Program | None = None, arch: str | None = None, maxrregcount: int | None = None) -> None:
        self.name = name
        self.program = _program if _program is not None else RawModule(
            code, options=options, arch=arch, maxrregcount=maxrregcount).program
        self.kernel = self.program.kernel(name)

    @property
    def attributes(self) -> dict:
        res = self.program.resources.get(self.kernel.name)
        return {"num_regs": res.registers if res else None, "shared_size_bytes": res.shared_bytes if res else None,
                "local_size_bytes": res.local_bytes if res else None, "max_threads_per_block": 1024}

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream: "Stream | None" = None,
                 resources: dict | None = None) -> LaunchRecord:
        """Launch. `resources` (tlpsim extension) overrides ptxas's counts for the timing
        model, e.g. {'registers': 32, 'shared_bytes': 1296} to match another toolchain."""
        if not isinstance(args, (tuple, list)):
            raise TlpsimError("kernel arguments must be a tuple")
        stream = stream or Stream._current()
        return Device.current().launch(self.program, self.kernel.name, grid, block, args, shared_mem, stream,
                                       resources)


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
