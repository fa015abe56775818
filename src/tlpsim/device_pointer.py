"""`cupy.cuda.MemoryPointer`: an address in a simulated device's memory, with the
copy and memset methods CuPy scripts call (`memory.alloc(n).copy_from(a.data, n)`).
Passed to a kernel it is that address; `ndarray(shape, dtype, memptr)` puts an
array over it."""

from __future__ import annotations

import numpy as np

from tlpsim.cuda_errors import ArgumentTypeError, ArgumentValueError


class MemoryPointer:
    def __init__(self, device, ptr: int, size: int | None = None) -> None:
        self.device = device
        self.ptr = int(ptr)
        self.size = size  # bytes from ptr to the end of its allocation (None: unknown)

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.device, self.ptr + int(offset),
                             None if self.size is None else self.size - int(offset))

    def __sub__(self, offset: int) -> "MemoryPointer":
        return self + (-int(offset))

    def __repr__(self) -> str:
        return f"MemoryPointer(ptr={self.ptr:#x}, device={self.device.name})"

    def _check(self, size: int, what: str) -> int:
        size = int(size)
        if size < 0:
            raise ArgumentValueError(f"MemoryPointer.{what}: size {size} is negative")
        if self.size is not None and size > self.size:
            raise ArgumentValueError(f"MemoryPointer.{what}: {size} bytes from {self.ptr:#x} run past the end of "
                                     f"its allocation ({self.size} bytes)")
        return size

    def copy_from_device(self, src, size: int, stream=None) -> None:
        size = self._check(size, "copy_from_device")
        src_ptr = _device_address(src, "copy_from_device")
        mem = self.device.memory
        mem.write(self.ptr, mem.read(src_ptr, size).copy())

    def copy_from_host(self, mem, size: int, stream=None) -> None:
        size = self._check(size, "copy_from_host")
        self.device.memory.write(self.ptr, _host_bytes(mem, size))

    def copy_from(self, mem, size: int, stream=None) -> None:
        """From device memory (a MemoryPointer or an array) or from host memory (a NumPy
        array, bytes or a ctypes pointer)."""
        if hasattr(mem, "ptr") and hasattr(mem, "device"):
            self.copy_from_device(mem, size, stream)
        else:
            self.copy_from_host(mem, size, stream)

    def copy_to_host(self, mem, size: int, stream=None) -> None:
        size = self._check(size, "copy_to_host")
        data = self.device.memory.read(self.ptr, size)
        if isinstance(mem, np.ndarray):
            mem.reshape(-1).view(np.uint8)[:size] = data
            return
        import ctypes

        ctypes.memmove(int(getattr(mem, "value", mem)), data.tobytes(), size)

    def memset(self, value: int, size: int, stream=None) -> None:
        size = self._check(size, "memset")
        self.device.memory.write(self.ptr, np.full(size, int(value) & 0xFF, np.uint8))

    memset_async = memset
    copy_from_device_async = copy_from_device
    copy_from_host_async = copy_from_host
    copy_from_async = copy_from
    copy_to_host_async = copy_to_host


def _device_address(src, what: str) -> int:
    if hasattr(src, "ptr"):
        return int(src.ptr)
    raise ArgumentTypeError(f"MemoryPointer.{what}: the source must be a MemoryPointer or a device array, "
                            f"not {type(src).__name__}")


def _host_bytes(mem, size: int) -> np.ndarray:
    if isinstance(mem, np.ndarray):
        raw = np.ascontiguousarray(mem).reshape(-1).view(np.uint8)
    elif isinstance(mem, (bytes, bytearray, memoryview)):
        raw = np.frombuffer(bytes(mem), np.uint8)
    else:  # a ctypes pointer or an address
        import ctypes

        raw = np.frombuffer(ctypes.string_at(int(getattr(mem, "value", mem)), size), np.uint8)
    if raw.size < size:
        raise ArgumentValueError(f"copy_from_host: the host buffer has {raw.size} bytes, fewer than {size}")
    return raw[:size].copy()


__all__ = ["MemoryPointer"]
