"""Unified addressing for `tlpsim exec`: device memory lives at its device address
in the program's own address space.

The functional model addresses global memory from GLOBAL_BASE (0x1_0000_0000).
Inside a program, tlpsim reserves that range with mmap (PROT_NONE, nothing
committed) and makes pages readable and writable as device memory grows, so a
device pointer is also a valid host pointer: managed memory (`cudaMallocManaged`,
`__managed__` variables) and mapped pinned memory (`cudaMallocHost`) work the
way they do under CUDA's unified addressing, and copies are one memmove.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

import numpy as np

from tlpsim.functional.memory import GLOBAL_BASE

PROT_NONE, PROT_READ, PROT_WRITE = 0, 1, 2
MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE = 0x02, 0x20, 0x4000
MAP_FIXED_NOREPLACE = 0x100000
_PAGE = os.sysconf("SC_PAGE_SIZE")


class WindowError(Exception):
    pass


class DeviceWindow:
    """A fixed reservation at GLOBAL_BASE; `view(n)` commits and returns its first n bytes."""

    def __init__(self, size: int) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long)
        libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        self._libc = libc
        self.size = size
        addr = libc.mmap(GLOBAL_BASE, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                         -1, 0)
        if addr in (None, ctypes.c_void_p(-1).value) or addr != GLOBAL_BASE:
            err = ctypes.get_errno()
            if addr not in (None, ctypes.c_void_p(-1).value):
                libc.munmap(addr, size)  # an old kernel treated the address as a hint
            raise WindowError(f"cannot reserve {size >> 20} MiB of device memory at {GLOBAL_BASE:#x} in the "
                              f"program's address space ({os.strerror(err) if err else 'address in use'})")
        self.committed = 0

    def view(self, nbytes: int) -> np.ndarray:
        if nbytes > self.size:
            raise MemoryError(f"device memory exhausted: {nbytes} bytes requested, the simulated device has "
                              f"{self.size} (tlpsim exec --device-memory)")
        if nbytes > self.committed:
            need = -(-nbytes // _PAGE) * _PAGE
            if self._libc.mprotect(GLOBAL_BASE, need, PROT_READ | PROT_WRITE) != 0:
                err = ctypes.get_errno()
                raise MemoryError(f"cannot commit {need} bytes of device memory: {os.strerror(err)}")
            self.committed = need
        return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(GLOBAL_BASE))

    def contains(self, address: int, nbytes: int = 1) -> bool:
        return GLOBAL_BASE <= address and address + nbytes <= GLOBAL_BASE + self.committed
