"""`cupy.cuda` for the simulated GPU: `Device` (one device, ID 0: the simulated GPU
that `tlpsim cupy --config` or `tlpsim.Device(...)` chose), `Stream`, the
`runtime`/`driver`/`compiler`/`memory` modules and the compiler's location."""

from __future__ import annotations

from tlpsim.cupy import _device
from tlpsim.cupy.cuda import _compiler_cache, compiler, device, driver, memory, nvrtc, runtime  # noqa: F401
from tlpsim.cupy.cuda.device import Device, get_device_id  # noqa: F401
from tlpsim.cupy.cuda.memory import MemoryPool, PinnedMemoryPool, alloc, get_allocator, set_allocator  # noqa: F401
from tlpsim.cupy.cuda.runtime import CUDARuntimeError
from tlpsim.device_pointer import MemoryPointer  # noqa: F401
from tlpsim.host import Stream

ExternalStream = Stream


def get_current_stream(device_id=None) -> Stream:
    return Stream._current() or Stream.null


def is_available() -> bool:
    return True


def get_nvcc_path() -> str:
    """The pinned nvcc (CUDA 13.5) tlpsim compiles with."""
    from tlpsim.frontend.toolkit import find_toolkit

    return str(find_toolkit().nvcc)


def get_cuda_path() -> str:
    from tlpsim.frontend.toolkit import find_toolkit

    return str(find_toolkit().root)


class Event:
    """CUDA events: launches complete synchronously here, so an event is done when recorded."""

    def __init__(self, block=False, disable_timing=False, interprocess=False) -> None:
        import time

        self._clock = time.perf_counter
        self._t: float | None = None

    def record(self, stream=None) -> None:
        _device.current().synchronize()
        self._t = self._clock()

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return True


def get_elapsed_time(start: Event, end: Event) -> float:
    """Host wall-clock milliseconds between two recorded events (not simulated GPU time)."""
    if start._t is None or end._t is None:
        raise CUDARuntimeError(400, "an event was not recorded")
    return (end._t - start._t) * 1000.0


__all__ = ["Device", "Event", "MemoryPointer", "Stream", "alloc", "compiler", "driver", "get_current_stream",
           "get_elapsed_time", "get_nvcc_path", "is_available", "memory", "runtime"]
