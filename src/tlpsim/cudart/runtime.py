"""The Python side of tlpsim's CUDA runtime: one `Runtime` per program process.

Every CUDA call the program makes arrives here as `dispatch(name, args)` (from
libcudart.c through embedded.py) and is served by the handler registered for that
name with `@api` (api_*.py modules). Handlers return a cudaError_t or raise
CudaError; the dispatcher keeps CUDA's error state:

* the last error (cudaGetLastError returns and clears it, cudaPeekAtLastError
  only returns it);
* the sticky error of a kernel fault: after an illegal address, an assert or a
  trap, every call returns it (cudaGetLastError too, without clearing it) until
  cudaDeviceReset, as on a real GPU whose context is lost. As there, the launch
  itself succeeds and the fault surfaces at the next call that waits for the
  device (anything but cudaGetLastError/PeekAtLastError and error strings), so
  `k<<<...>>>(); cudaGetLastError()` still sees success. tlpsim prints its
  diagnostic (kernel, CTA, thread, PTX line, address) on stderr at the fault.

A handler failing unexpectedly returns cudaErrorUnknown with the traceback on
stderr; nothing escapes into the program as a crash.

Calls from several host threads are served one at a time (the runtime's state and
the simulator are not thread-safe; a real driver serialises its context too). Host
functions enqueued on a stream (cudaLaunchHostFunc, cudaStreamAddCallback) run
after the call that enqueued them has left the runtime, so a callback that starts
a host thread which calls CUDA (NVIDIA's simpleCallback) does not wait on it.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from tlpsim.cudart import errors as E
from tlpsim.cudart.modules import FatModule, KernelEntry, VarEntry
from tlpsim.cudart.saved_copies import CopyLog

ENV_SETTINGS = "TLPSIM_EXEC"


@dataclass
class Handler:
    fn: Callable
    sticky: bool          # returns the sticky fault error instead of running
    sets_last: bool       # a failure becomes the last error


HANDLERS: dict[bytes, Handler] = {}


def api(*names: str, sticky: bool = True, sets_last: bool = True):
    """Register a handler `fn(rt, args) -> int | None` for runtime calls `names`."""

    def register(fn):
        for n in names:
            HANDLERS[n.encode()] = Handler(fn, sticky, sets_last)
        return fn

    return register


@dataclass
class Settings:
    """How the program is simulated (set by `tlpsim exec` in $TLPSIM_EXEC as JSON)."""

    mode: str = "functional"
    preset: str = "gtx480"
    overrides: dict = field(default_factory=dict)
    plugins: list = field(default_factory=list)
    out_dir: str | None = None        # launches.jsonl, summary.json, ptx/
    device_memory: int = 4 << 30
    budget: int | None = None
    oob_reads: str = "error"          # "zero": global loads outside every allocation read 0 (counted)
    save_copies: str | None = None    # a folder: every host<->device copy's bytes (saved_copies.py)

    @classmethod
    def from_env(cls) -> "Settings":
        raw = os.environ.get(ENV_SETTINGS, "").strip()
        return cls(**json.loads(raw)) if raw else cls()

    def to_env(self) -> str:
        return json.dumps(self.__dict__)


# ------------------------------------------------------------------ program memory


def read(address: int, nbytes: int) -> bytes:
    return ctypes.string_at(address, nbytes) if nbytes else b""


def view(address: int, nbytes: int) -> np.ndarray:
    """The program's memory [address, address + nbytes) as a uint8 array, in place."""
    if nbytes == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))


def u64(address: int) -> int:
    return ctypes.c_uint64.from_address(address).value


def put(address: int, ctype, value) -> None:
    if address == 0:
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer was passed for a result")
    ctype.from_address(address).value = value


def cstr(address: int) -> str:
    return ctypes.string_at(address).decode("utf-8", "replace") if address else ""


def dim3(address: int) -> tuple[int, int, int]:
    x, y, z = (ctypes.c_uint32 * 3).from_address(address)
    return int(x), int(y), int(z)


# ------------------------------------------------------------------ the runtime


class Runtime:
    def __init__(self, settings: Settings, write_stream: Callable[[int, str], None]) -> None:
        import tlpsim
        from tlpsim.config.loader import load_config
        from tlpsim.cudart.streams import GpuClock
        from tlpsim.cudart.window import DeviceWindow
        from tlpsim.functional.memory import DeviceMemory

        self.settings = settings
        self.write_stream = write_stream
        # TLPSIM_TRACE_API=1: every call the Python runtime handles, its argument words and result, on stderr
        self.trace_api = os.environ.get("TLPSIM_TRACE_API", "").strip() not in ("", "0")
        from tlpsim.policies.external import activate

        activate(settings.plugins)  # before the config names them
        self.config = load_config(settings.preset, settings.overrides)
        timing = settings.mode == "timing"
        kwargs = {"budget": settings.budget} if settings.budget is not None else {}
        self.device = tlpsim.Device(mode=settings.mode, config=self.config if timing else None, trace=timing,
                                    arch=self.config.gpu.arch, maxrregcount=self.config.gpu.maxrregcount,
                                    toolchain="cuda13", oob_reads=settings.oob_reads, **kwargs)  # whole programs: nvcc 13.5 (gpu.arch)
        self.window = DeviceWindow(settings.device_memory)
        memory = DeviceMemory(window=self.window.view)
        memory.host_write_hooks = self.device.memory.host_write_hooks  # e.g. the timing model's L2 fills
        self.device.memory = memory
        self.out_dir = Path(settings.out_dir) if settings.out_dir else None
        self.ptx_dir = (self.out_dir / "ptx") if self.out_dir else _shared_ptx_dir()
        self.modules: dict[int, FatModule] = {}      # fat binary handle -> module
        self.kernels: dict[int, KernelEntry] = {}    # host stub address -> kernel
        self.vars: dict[int, VarEntry] = {}          # host shadow address -> variable
        self.allocs: dict[int, int] = {}             # device address -> kind (0 device, 1 host, 2 managed)
        self.copy_log = CopyLog(settings.save_copies) if settings.save_copies else None
        self.last_error = 0
        self.sticky = 0
        self.pending_fault = 0  # a kernel fault not yet seen by the program
        self.clock = GpuClock(self)
        self.streams: dict = {}                      # cudaStream_t -> tlpsim Stream
        self.stream_flags: dict[int, int] = {}
        self.events: dict = {}                       # cudaEvent_t -> streams.Event
        self.kernel_output: list[str] = []
        self.unsupported: Counter = Counter()
        self.call_errors: Counter = Counter()        # message of a failed call -> times (printed once)
        self.problems: list[str] = []                # missing PTX, unsupported PTX: the run is not faithful
        self.faults: list[str] = []
        self.n_launches = 0
        self.current_device = 0
        self.limits: dict[int, int] = {}
        self.names: dict[str, ctypes.Array] = {}     # cudaFuncGetName results (the program keeps the pointers)
        from tlpsim.cudart.failed_calls import FailedCalls

        self.failed_calls = FailedCalls(self.out_dir)  # every call that returned an error, by name
        self._records = None
        self._lock = threading.RLock()               # one call at a time, whichever host thread makes it
        self._depth = 0                              # calls in progress on the lock-holding thread
        self.host_calls: list[Callable[[], None]] = []  # stream callbacks to run once the call has left

    # ---------------------------------------------------------- calls

    def dispatch(self, name: bytes, args: list[int]) -> int:
        with self._lock:
            self._depth += 1
            try:
                code = self._dispatch(name, args)
            finally:
                self._depth -= 1
            calls: list[Callable[[], None]] = []
            if self._depth == 0:
                calls, self.host_calls = self.host_calls, []
        for call in calls:
            call()
        return code

    def _dispatch(self, name: bytes, args: list[int]) -> int:
        handler = HANDLERS.get(name)
        if handler is None:
            return self.unsupported_call(name.decode())
        if handler.sticky and self.pending_fault:
            self.sticky, self.pending_fault = self.pending_fault, 0
        if handler.sticky and self.sticky:  # refused: the context is lost (a kernel fault)
            return self.finished(name, args, self.sticky)
        try:
            code = handler.fn(self, args) or 0
        except E.CudaError as exc:
            code = exc.code
            if exc.message:
                self.call_error(f"{name.decode()}: {exc.message}")
        except Exception as exc:  # noqa: BLE001 - never let a runtime bug crash the program
            code = E.UNKNOWN
            self.diag(f"internal error in {name.decode()}: {type(exc).__name__}: {exc}\n"
                      + "".join(traceback.format_exc(limit=-4)) + "(please report it)")
        if code and handler.sets_last and not self.sticky:
            self.last_error = code
        return self.finished(name, args, code)

    def finished(self, name: bytes, args: list[int], code: int) -> int:
        """Every call's end: a failure is counted under the call's name (failed_calls.py), and
        TLPSIM_TRACE_API=1 prints the call."""
        if code:
            self.failed_calls.add(name.decode(), code)
        if self.trace_api:
            shown = ", ".join(hex(a) for a in args)
            self.diag(f"api {name.decode()}({shown}) -> {E.name_of(code) if code else 'cudaSuccess'}")
        return code

    def unsupported_call(self, name: str) -> int:
        self.unsupported[name] += 1
        if self.unsupported[name] == 1:
            self.diag(f"{name} is not supported by tlpsim's CUDA runtime; it returns cudaErrorNotSupported "
                      "(docs/exec.md lists what is supported)")
        if not self.sticky:
            self.last_error = E.NOT_SUPPORTED
        return self.finished(name.encode(), [], E.NOT_SUPPORTED)

    def problem(self, message: str) -> None:
        """Something that makes the run unfaithful to the program (reported at exit)."""
        if message not in self.problems:
            self.problems.append(message)

    def call_error(self, message: str) -> None:
        """A failed call's diagnostic: printed the first time; a program that repeats the
        call (a benchmark loop of launches) gets a count at exit instead of a flood."""
        self.call_errors[message] += 1
        if self.call_errors[message] == 1:
            self.diag(message)

    def diag(self, message: str) -> None:
        sys.stderr.write(f"tlpsim: {message}\n")
        sys.stderr.flush()

    def fault(self, exc) -> None:
        """A kernel fault: the sticky error CUDA would report, and tlpsim's diagnostic."""
        code = E.fault_code(exc)
        self.pending_fault = code
        self.faults.append({"error": E.name_of(code), "detail": str(exc)})
        self.diag(f"kernel fault ({E.name_of(code)}): {exc}")

    # ---------------------------------------------------------- kernel printf

    def flush_output(self) -> None:
        """Hand buffered device printf output to the program's stdout (CUDA does this
        at a kernel launch, a synchronisation, a blocking copy and at exit)."""
        if self.kernel_output:
            text, self.kernel_output = "".join(self.kernel_output), []
            self.write_stream(1, text)

    # ---------------------------------------------------------- lookups

    def kernel(self, func: int) -> KernelEntry:
        entry = self.kernels.get(func)
        if entry is None:
            raise E.CudaError(E.INVALID_DEVICE_FUNCTION, f"{func:#x} is not a registered kernel (__global__ function)")
        return entry

    def var(self, symbol: int) -> VarEntry:
        entry = self.vars.get(symbol)
        if entry is None:
            raise E.CudaError(E.INVALID_SYMBOL, f"{symbol:#x} is not a registered __device__/__constant__ variable")
        return entry

    def program(self, module: FatModule, resources: bool | None = None, what: str = ""):
        """The module's parsed PTX (with ptxas resources in timing mode or when asked);
        `what` (e.g. "kernel k") starts the error message."""
        from tlpsim.cudart.modules import ModuleError
        from tlpsim.errors import TlpsimError

        want = self.settings.mode == "timing" if resources is None else resources
        prefix = f"{what}: " if what else ""
        try:
            return module.program(self.ptx_dir, self.config.gpu.maxrregcount, want)
        except ModuleError as exc:
            self.problem(prefix + str(exc))
            raise E.CudaError(E.NO_KERNEL_IMAGE, prefix + str(exc)) from None
        except TlpsimError as exc:
            self.problem(prefix + str(exc))
            raise E.CudaError(E.INVALID_PTX, f"{prefix}the program's PTX cannot be simulated: {exc}") from None

    def var_address(self, entry: VarEntry) -> int:
        program = self.program(entry.module, resources=False, what=f"variable {entry.name}")
        addrs = self.device.module_globals(program.module)
        if entry.name not in addrs:
            raise E.CudaError(E.INVALID_SYMBOL, f"variable {entry.name} is not in the module's PTX")
        return addrs[entry.name]

    # ---------------------------------------------------------- records

    def record(self, row: dict) -> None:
        """Append one launch's record (launches.jsonl) as soon as it is complete."""
        if self.out_dir is None:
            return
        if self._records is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._records = open(self.out_dir / "launches.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self._records.write(json.dumps(row, default=float) + "\n")
        self._records.flush()

    def finish(self) -> None:
        """At exit: simulate what is pending, print buffered output, write the summary."""
        try:
            self.clock.flush()
        except Exception as exc:  # noqa: BLE001 - the summary must still be written
            self.diag(f"simulating the pending launches failed: {exc}")
        self.flush_output()
        for message, n in self.call_errors.items():
            if n > 1:
                self.diag(f"{message} (repeated {n} times in all)")
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            summary = {"launches": self.n_launches, "unsupported": dict(self.unsupported), "problems": self.problems,
                       "faults": self.faults, "call_errors": dict(self.call_errors),
                       "failed_calls": self.failed_calls.counts()}
            (self.out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        if self._records is not None:
            self._records.close()
            self._records = None


def _shared_ptx_dir() -> Path:
    from tlpsim.cudart.modules import exec_cache

    return exec_cache() / "ptx"
