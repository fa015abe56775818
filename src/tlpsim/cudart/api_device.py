"""Device management, device properties, limits and error queries."""

from __future__ import annotations

import ctypes

from tlpsim.cudart import errors as E
from tlpsim.cudart.props import attributes, device_name
from tlpsim.cudart.runtime import api, cstr, put
from tlpsim.cudart.streams import synchronize

# cudaLimit values (driver_types.h) and CUDA's defaults
_LIMITS = {0: ("cudaLimitStackSize", 1024), 1: ("cudaLimitPrintfFifoSize", 1 << 20),
           2: ("cudaLimitMallocHeapSize", 8 << 20), 3: ("cudaLimitDevRuntimeSyncDepth", 2),
           4: ("cudaLimitDevRuntimePendingLaunchCount", 2048), 5: ("cudaLimitMaxL2FetchGranularity", 32),
           6: ("cudaLimitPersistingL2CacheSize", 0)}


def _check_device(device: int) -> None:
    if device != 0:
        raise E.CudaError(E.INVALID_DEVICE, f"device {device} does not exist: tlpsim simulates one GPU (device 0)")


@api("cudaGetDeviceCount")
def get_device_count(rt, a):
    put(a[0], ctypes.c_int32, 1)


@api("cudaGetDevice")
def get_device(rt, a):
    put(a[0], ctypes.c_int32, 0)


@api("cudaSetDevice")
def set_device(rt, a):
    _check_device(ctypes.c_int32(a[0]).value)


@api("cudaChooseDevice")
def choose_device(rt, a):
    put(a[0], ctypes.c_int32, 0)


@api("cudaSetDeviceFlags", "tlpsim_accept")
def accept(rt, a):
    """Calls that change nothing the simulator models (cache preferences, profiler, hints)."""


@api("cudaGetDeviceFlags")
def get_device_flags(rt, a):
    put(a[0], ctypes.c_uint32, 0)


@api("cudaDeviceReset", sticky=False)
def device_reset(rt, a):
    """Ends the context: pending work is simulated, output printed, the sticky error cleared.
    Memory stays allocated (the simulator has one context per process)."""
    synchronize(rt)
    rt.sticky = rt.pending_fault = 0
    rt.last_error = 0


@api("cudaDeviceGetAttribute")
def device_get_attribute(rt, a):
    name = cstr(a[1])
    _check_device(ctypes.c_int32(a[2]).value)
    table = attributes(rt.config)
    if name not in table:
        what = f"cudaDevAttr{name}" if name else f"attribute {a[3]}"
        raise E.CudaError(E.INVALID_VALUE, f"{what} is not reported by tlpsim's runtime")
    put(a[0], ctypes.c_int32, table[name])


@api("tlpsim_device_identity")
def device_identity(rt, a):
    """Name and memory size for cudaGetDeviceProperties (the rest are attributes)."""
    _check_device(ctypes.c_int32(a[2]).value)
    name = device_name(rt.config, rt.settings.preset).encode()[: a[1] - 1]
    ctypes.memmove(a[0], name + b"\0", len(name) + 1)
    put(a[3], ctypes.c_size_t, rt.window.size)


@api("cudaDeviceCanAccessPeer")
def can_access_peer(rt, a):
    put(a[0], ctypes.c_int32, 0)


@api("cudaDeviceSetLimit")
def set_limit(rt, a):
    if a[0] not in _LIMITS:
        raise E.CudaError(E.CODES["cudaErrorUnsupportedLimit"], f"limit {a[0]} is not known")
    rt.limits[a[0]] = int(a[1])


@api("cudaDeviceGetLimit")
def get_limit(rt, a):
    if a[1] not in _LIMITS:
        raise E.CudaError(E.CODES["cudaErrorUnsupportedLimit"], f"limit {a[1]} is not known")
    put(a[0], ctypes.c_size_t, rt.limits.get(a[1], _LIMITS[a[1]][1]))


@api("cudaMemGetInfo")
def mem_get_info(rt, a):
    used = rt.device.memory.top
    put(a[0], ctypes.c_size_t, max(rt.window.size - used, 0))
    put(a[1], ctypes.c_size_t, rt.window.size)


# ------------------------------------------------------------------ errors


@api("cudaGetLastError", sticky=False, sets_last=False)
def get_last_error(rt, a):
    code = rt.sticky or rt.last_error
    if not rt.sticky:
        rt.last_error = 0
    return code


@api("cudaPeekAtLastError", sticky=False, sets_last=False)
def peek_at_last_error(rt, a):
    return rt.sticky or rt.last_error


_TEXTS: dict[tuple[int, int], ctypes.Array] = {}  # kept alive: the program holds the pointers


@api("tlpsim_error_text", sticky=False, sets_last=False)
def error_text(rt, a):
    code = ctypes.c_int32(a[0]).value
    key = (code, int(a[2]))
    buf = _TEXTS.get(key)
    if buf is None:
        text = E.name_of(code) if a[2] else E.text_of(code)
        buf = _TEXTS[key] = ctypes.create_string_buffer(text.encode())
    put(a[1], ctypes.c_void_p, ctypes.addressof(buf))


@api("tlpsim_unsupported", sticky=False, sets_last=False)
def unsupported(rt, a):
    return rt.unsupported_call(cstr(a[0]))


@api("tlpsim_exit", sticky=False, sets_last=False)
def at_exit(rt, a):
    rt.finish()
