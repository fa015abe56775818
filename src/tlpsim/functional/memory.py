"""Device memory and the generic address map of the functional model.

Global and constant data share one flat byte buffer addressed from GLOBAL_BASE
(so `cvta.global`/`cvta.const` are identities); shared and local memory are
per-CTA and per-thread buffers reached through their own windows in the generic
space. Every access is bounds- and alignment-checked against the allocations,
like CUDA's illegal-address check, and a bad one raises MemoryFault naming the
first offending lane.
"""

from __future__ import annotations

import numpy as np

GLOBAL_BASE = 0x1_0000_0000
SHARED_WINDOW = 0x7F00_0000_0000
LOCAL_WINDOW = 0x7E00_0000_0000
WINDOW_SIZE = 1 << 32
ALLOC_ALIGN = 256


class MemoryFault(Exception):
    """An illegal access; `lane` is the position in the access arrays of the first bad lane."""

    def __init__(self, lane: int, address: int, reason: str, space: str) -> None:
        super().__init__(f"{reason} ({space} address {address:#x})")
        self.lane = lane
        self.address = address
        self.reason = reason
        self.space = space


class DeviceMemory:
    """The device's global/constant memory: an allocator over a growable byte buffer."""

    def __init__(self, capacity: int = 1 << 20, window=None) -> None:
        # `window(nbytes)`, when given, returns the first nbytes of one fixed, zeroed host
        # mapping at GLOBAL_BASE, so device addresses are valid host addresses as well
        # (tlpsim exec's unified addressing); growing never moves the data then
        self._window = window
        self.data = window(capacity) if window is not None else np.zeros(capacity, dtype=np.uint8)
        self.top = 0  # bytes used (offset of the next allocation)
        self._starts: list[int] = []  # offsets of live allocations, sorted
        self._ends: list[int] = []
        self._labels: dict[int, str] = {}
        self._starts_np = np.zeros(0, dtype=np.int64)
        self._ends_np = np.zeros(0, dtype=np.int64)
        self.host_write_hooks: list = []  # callables (address, nbytes) told about host copies
        self.textures: dict = {}  # live texture objects: handle -> textures.Texture (read by `tex`)

    # ---------------------------------------------------------- allocation

    def alloc(self, nbytes: int, label: str = "", align: int = ALLOC_ALIGN) -> int:
        """Reserve `nbytes` (zeroed) and return its device address."""
        off = -(-self.top // align) * align
        end = off + max(int(nbytes), 1)
        if end > len(self.data):
            cap = len(self.data)
            while cap < end:
                cap *= 2
            if self._window is not None:
                self.data = self._window(cap)
            else:
                grown = np.zeros(cap, dtype=np.uint8)
                grown[: self.top] = self.data[: self.top]
                self.data = grown
        self.top = -(-end // 16) * 16
        self._starts.append(off)
        self._ends.append(off + int(nbytes))
        self._labels[off] = label
        self._refresh()
        return GLOBAL_BASE + off

    def free(self, address: int) -> None:
        off = address - GLOBAL_BASE
        try:
            k = self._starts.index(off)
        except ValueError:
            raise ValueError(f"free of {address:#x}, which is not the start of an allocation") from None
        del self._starts[k], self._ends[k]
        self._labels.pop(off, None)
        self._refresh()

    def _refresh(self) -> None:
        order = np.argsort(self._starts, kind="stable")
        self._starts_np = np.asarray(self._starts, dtype=np.int64)[order]
        self._ends_np = np.asarray(self._ends, dtype=np.int64)[order]

    def allocation_of(self, address: int) -> tuple[int, int, str] | None:
        """(start address, size, label) of the allocation holding `address`."""
        off = address - GLOBAL_BASE
        k = int(np.searchsorted(self._starts_np, off, side="right")) - 1
        if k < 0 or off >= self._ends_np[k]:
            return None
        start = int(self._starts_np[k])
        return GLOBAL_BASE + start, int(self._ends_np[k] - start), self._labels.get(start, "")

    # ---------------------------------------------------------- host copies

    def write(self, address: int, payload: bytes | np.ndarray) -> None:
        raw = np.frombuffer(bytes(payload), dtype=np.uint8) if isinstance(payload, (bytes, bytearray)) \
            else np.ascontiguousarray(payload).view(np.uint8).reshape(-1)
        self._check_host(address, raw.size)
        off = address - GLOBAL_BASE
        self.data[off: off + raw.size] = raw
        for hook in self.host_write_hooks:
            hook(address, int(raw.size))

    def read(self, address: int, nbytes: int) -> np.ndarray:
        self._check_host(address, nbytes)
        off = address - GLOBAL_BASE
        return self.data[off: off + nbytes].copy()

    def _check_host(self, address: int, nbytes: int) -> None:
        hit = self.allocation_of(address)
        if hit is None or address + nbytes > hit[0] + hit[1]:
            raise ValueError(f"host copy of {nbytes} bytes at {address:#x} is outside every allocation")

    # ---------------------------------------------------------- device accesses

    def inside(self, addresses: np.ndarray, size: int) -> np.ndarray:
        """Per lane: whether the `size`-byte access lies inside one allocation."""
        off = addresses.astype(np.int64, copy=False) - GLOBAL_BASE
        if not self._ends_np.size:
            return np.zeros(off.shape, dtype=np.bool_)
        k = np.searchsorted(self._starts_np, off, side="right") - 1
        return (k >= 0) & (off >= 0) & (off + size <= self._ends_np[np.maximum(k, 0)])

    def offsets(self, addresses: np.ndarray, size: int, space: str = "global") -> np.ndarray:
        """Checked byte offsets into `data` for accesses of `size` bytes."""
        off = addresses.astype(np.int64, copy=False) - GLOBAL_BASE
        if off.size == 0:
            return off
        # fast path: every lane inside the allocation holding the lowest address
        lo, hi = int(off.min()), int(off.max())
        k0 = int(np.searchsorted(self._starts_np, lo, side="right")) - 1
        if k0 >= 0 and lo >= 0 and hi + size <= self._ends_np[k0]:
            if size > 1 and ((off & (size - 1)) != 0).any():
                lane = int(np.argmax((off & (size - 1)) != 0))
                raise MemoryFault(lane, int(addresses[lane]), f"misaligned {size}-byte access", space)
            return off
        k = np.searchsorted(self._starts_np, off, side="right") - 1
        ok = (k >= 0) & (off >= 0)
        kk = np.maximum(k, 0)
        if self._ends_np.size:
            ok &= off + size <= self._ends_np[kk]
        else:
            ok &= False
        if not ok.all():
            lane = int(np.argmin(ok))
            raise MemoryFault(lane, int(addresses[lane]), "out-of-bounds access", space)
        if size > 1:
            bad = (off & (size - 1)) != 0
            if bad.any():
                lane = int(np.argmax(bad))
                raise MemoryFault(lane, int(addresses[lane]), f"misaligned {size}-byte access", space)
        return off
