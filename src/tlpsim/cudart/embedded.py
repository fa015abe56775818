"""Start-up of the runtime inside a CUDA program (called by libcudart.c).

`bootstrap` builds the Runtime from $TLPSIM_EXEC, hands libcudart.c the dispatch
callback (a ctypes function the C entry points call with the API name and their
arguments), and routes the interpreter's stdout (where device printf writes)
into a buffer that the runtime prints through the program's own `stdout` FILE at
CUDA's flush points. If the runtime cannot start, it says why and leaves the
dispatch unset; libcudart.c then exits the program with status 86.
"""

from __future__ import annotations

import ctypes
import sys
import traceback

DISPATCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_int)
WRITE = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
SET_DISPATCH = ctypes.CFUNCTYPE(None, DISPATCH)

_alive: list = []  # the callbacks must outlive bootstrap()
EXIT_STARTUP_FAILED = 86


class KernelOutput:
    """sys.stdout of the embedded interpreter: device printf output, held until a flush point."""

    def __init__(self, rt) -> None:
        self.rt = rt

    def write(self, text: str) -> int:
        self.rt.kernel_output.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def bootstrap(set_dispatch_address: int, write_address: int) -> None:
    from tlpsim.cudart import api_device, api_kernels, api_memory, mempools, streams  # noqa: F401 - they register handlers
    from tlpsim.cudart import api_texture, api_graph, api_capture  # noqa: F401 - issue 28; capture wraps the others: last
    from tlpsim.cudart.runtime import Runtime, Settings
    from tlpsim.errors import TlpsimError

    write = WRITE(write_address)

    def write_stream(fd: int, text: str) -> None:
        data = text.encode("utf-8", "replace")
        write(fd, data, len(data))

    try:
        rt = Runtime(Settings.from_env(), write_stream)
    except (TlpsimError, OSError, MemoryError, ValueError) as exc:
        sys.stderr.write(f"tlpsim: {exc}\n")
        return
    except Exception:  # noqa: BLE001 - report and let the C side exit cleanly
        traceback.print_exc()
        return
    sys.stdout = KernelOutput(rt)

    def dispatch(name, argv, n):
        try:
            return rt.dispatch(name, argv[:n])
        except BaseException:  # noqa: BLE001 - nothing may unwind into C
            traceback.print_exc()
            return 999

    callback = DISPATCH(dispatch)
    _alive.extend([rt, callback, write])
    SET_DISPATCH(set_dispatch_address)(callback)
