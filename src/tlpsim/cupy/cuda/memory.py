"""`cupy.cuda.memory`: allocations in the simulated device's memory. `alloc(n)` gives a
MemoryPointer; the pool classes keep CuPy's interface (the simulator has no real
pool: each allocation is a fresh region of device memory, so `free_all_blocks` has
nothing to return)."""

from __future__ import annotations

from tlpsim.cupy import _device
from tlpsim.cuda_errors import ArgumentValueError
from tlpsim.device_pointer import MemoryPointer

_allocator = None


def _malloc(size: int) -> MemoryPointer:
    size = int(size)
    if size < 0:
        raise ArgumentValueError(f"cannot allocate {size} bytes")
    dev = _device.current()
    return MemoryPointer(dev, dev.memory.alloc(size, "cupy.cuda.memory.alloc"), size)


def alloc(size: int) -> MemoryPointer:
    """`size` bytes of device memory (zeroed) with the current allocator."""
    return (_allocator or _malloc)(size)


malloc_managed = _malloc


class MemoryPool:
    """CuPy's pool interface over the simulated memory: counts what it handed out."""

    def __init__(self, allocator=None) -> None:
        self._used = 0

    def malloc(self, size: int) -> MemoryPointer:
        p = _malloc(size)
        self._used += int(size)
        return p

    def used_bytes(self) -> int:
        return self._used

    def total_bytes(self) -> int:
        return self._used

    def free_bytes(self) -> int:
        return 0

    def free_all_blocks(self, stream=None) -> None:
        """Nothing is cached, so nothing is returned."""

    def n_free_blocks(self) -> int:
        return 0

    def set_limit(self, size=None, fraction=None) -> None:
        self._limit = size

    def get_limit(self) -> int:
        return getattr(self, "_limit", 0) or 0


PinnedMemoryPool = MemoryPool
_default_pool = MemoryPool()


def set_allocator(allocator=None) -> None:
    global _allocator
    _allocator = allocator


def get_allocator():
    return _allocator or _malloc


__all__ = ["MemoryPointer", "MemoryPool", "alloc", "get_allocator", "malloc_managed", "set_allocator"]
