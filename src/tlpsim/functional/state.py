"""Architectural state of one chunk of CTAs in the functional model.

Registers are NumPy arrays over the chunk's threads (thread t of the chunk is
lane t % 32 of warp t // 32), stored as raw unsigned bits of their declared width
(bool for predicates) and viewed as the instruction's type when read. Shared,
local and call-parameter memory are flat byte buffers indexed through the CTA or
thread of each lane.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tlpsim.functional.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE, DeviceMemory, MemoryFault

# storage dtype of a register by declared type
STORAGE = {
    "pred": np.dtype(np.bool_),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.uint8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.uint16),
    "f16": np.dtype(np.uint16), "bf16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.uint32),
    "f32": np.dtype(np.uint32), "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.uint64),
    "f64": np.dtype(np.uint64),
}

# the NumPy dtype an instruction type operates on (f16 is IEEE half; bf16 is kept as bits)
VALUE = {
    "pred": np.dtype(np.bool_),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32),
    "f32": np.dtype(np.float32), "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32),
    "tf32": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64),
    "f64": np.dtype(np.float64), "f32x2": np.dtype(np.uint64),
}

UNSIGNED_OF_SIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
SIGNED_OF_SIZE = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


@dataclass
class Geometry:
    """Launch shape shared by every chunk."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]

    @property
    def threads_per_cta(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_cta(self) -> int:
        return -(-self.threads_per_cta // 32)

    @property
    def n_ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


class ChunkState:
    """Registers, special registers and on-chip memories of CTAs [cta_begin, cta_end)."""

    def __init__(self, geom: Geometry, cta_begin: int, cta_end: int, reg_types: dict[str, str],
                 memory: DeviceMemory, kernel_params: np.ndarray, shared_bytes: int, local_bytes: int,
                 param_frame_bytes: int, n_sms: int = 1) -> None:
        self.geom = geom
        self.cta_begin = cta_begin
        self.n_ctas = cta_end - cta_begin
        wpc = geom.warps_per_cta
        self.n_warps = self.n_ctas * wpc
        n = self.n_threads = self.n_warps * 32
        self.memory = memory
        self.kernel_params = kernel_params
        self.regs: dict[str, np.ndarray] = {name: np.zeros(n, dtype=STORAGE[t]) for name, t in reg_types.items()}
        self.carry = np.zeros(n, dtype=np.uint64)  # CC.CF for add.cc/addc chains
        # geometry of every thread (padding threads of a partial last warp get tid beyond the block)
        t = np.arange(n, dtype=np.int64)
        self.thread_cta = t // (wpc * 32)  # chunk-local CTA index
        in_cta = t - self.thread_cta * wpc * 32
        bx, by, _ = geom.block
        self.in_cta = in_cta
        self.valid = in_cta < geom.threads_per_cta  # real (not padding) threads
        cta = self.thread_cta + cta_begin
        gx, gy, _ = geom.grid
        self.sreg: dict[str, np.ndarray] = {
            "tid.x": (in_cta % bx).astype(np.uint32),
            "tid.y": ((in_cta // bx) % by).astype(np.uint32),
            "tid.z": (in_cta // (bx * by)).astype(np.uint32),
            "ctaid.x": (cta % gx).astype(np.uint32),
            "ctaid.y": ((cta // gx) % gy).astype(np.uint32),
            "ctaid.z": (cta // (gx * gy)).astype(np.uint32),
            "laneid": (t % 32).astype(np.uint32),
            "warpid": (in_cta // 32).astype(np.uint32),
            "smid": (cta % max(n_sms, 1)).astype(np.uint32),
        }
        lane = t % 32
        self.sreg["lanemask_eq"] = (np.uint32(1) << lane.astype(np.uint32)).astype(np.uint32)
        self.sreg["lanemask_lt"] = (self.sreg["lanemask_eq"] - np.uint32(1)).astype(np.uint32)
        self.sreg["lanemask_le"] = (self.sreg["lanemask_lt"] | self.sreg["lanemask_eq"]).astype(np.uint32)
        self.sreg["lanemask_gt"] = (~self.sreg["lanemask_le"]).astype(np.uint32)
        self.sreg["lanemask_ge"] = (~self.sreg["lanemask_lt"]).astype(np.uint32)
        self.constants = {
            "ntid.x": bx, "ntid.y": by, "ntid.z": geom.block[2],
            "nctaid.x": gx, "nctaid.y": gy, "nctaid.z": geom.grid[2],
            "nwarpid": 64, "nsmid": max(n_sms, 1), "gridid": 0,
            "dynamic_smem_size": 0, "total_smem_size": shared_bytes,
        }
        # sizes bound the accesses; strides are padded so every CTA's/thread's window
        # starts 16-byte aligned and typed views of the buffers stay aligned
        self.shared_bytes = shared_bytes
        self.local_bytes = local_bytes
        self.param_frame_bytes = param_frame_bytes
        self.shared_stride = _pad16(shared_bytes)
        self.local_stride = _pad16(local_bytes)
        self.param_stride = _pad16(param_frame_bytes)
        self.shared = np.zeros(self.n_ctas * self.shared_stride, dtype=np.uint8)
        self.local = np.zeros(n * self.local_stride, dtype=np.uint8)
        self.param_frame = np.zeros(n * self.param_stride, dtype=np.uint8)
        self.clock = 0  # advanced by the engine; read by %clock/%clock64
        # Device(oob_reads="zero"): global loads outside every allocation read 0 and are counted
        self.oob_zero = False
        self.oob_reads = 0

    # ---------------------------------------------------------- memory

    def resolve(self, space: str, addrs: np.ndarray, idx: np.ndarray, size: int) -> list:
        """Locate `size`-byte accesses at `addrs` (one per lane in `idx`).

        Returns segments `(sel, buf, offs)`: `sel` selects the lanes of the segment
        (None = all lanes), `buf` is a uint8 buffer and `offs` the checked byte
        offsets into it. Only a generic access can produce several segments.
        Raises MemoryFault (lane = position in `addrs`) on a bad access.
        """
        if space in ("global", "const"):
            return [(None, self.memory.data, self.memory.offsets(addrs, size, space))]
        if space == "shared":
            return [(None, self.shared, self._window_offsets(addrs, size, idx, "shared"))]
        if space == "local":
            return [(None, self.local, self._window_offsets(addrs, size, idx, "local"))]
        if space == "param":  # call-sequence parameters: a per-thread frame
            return [(None, self.param_frame, self._window_offsets(addrs, size, idx, "param"))]
        if space == "kparam":
            off = addrs.astype(np.int64)
            if off.size and (off.min() < 0 or off.max() + size > self.kernel_params.size):
                lane = int(np.argmax((off < 0) | (off + size > self.kernel_params.size)))
                raise MemoryFault(lane, int(addrs[lane]), "out-of-bounds kernel parameter access", "param")
            return [(None, self.kernel_params, off)]
        if space == "generic":
            return self._resolve_generic(addrs, idx, size)
        raise ValueError(f"unknown state space {space!r}")

    def oob_load(self, space: str, addrs: np.ndarray, idx: np.ndarray, size: int, fault: MemoryFault) -> list:
        """Segments of a load whose resolve() raised `fault`: with `oob_zero`, lanes
        whose global address lies outside every allocation read from a zero page
        (and are counted in `oob_reads`); anything else raises the fault as before."""
        if not self.oob_zero or space not in ("global", "const", "generic"):
            raise fault
        a = addrs.astype(np.uint64, copy=False)
        outside = ~self.memory.inside(a, size)
        if space == "generic":  # shared/local window addresses keep their checks
            outside &= ~(((a >= SHARED_WINDOW) & (a < SHARED_WINDOW + WINDOW_SIZE))
                         | ((a >= LOCAL_WINDOW) & (a < LOCAL_WINDOW + WINDOW_SIZE)))
        if not outside.any():
            raise fault  # e.g. misaligned inside an allocation
        bad = np.flatnonzero(outside)
        good = np.flatnonzero(~outside)
        segs = []
        if good.size:
            try:
                for sel, buf, offs in self.resolve(space, addrs[good], idx[good], size):
                    segs.append((good if sel is None else good[sel], buf, offs))
            except MemoryFault as inner:
                raise MemoryFault(int(good[inner.lane]), inner.address, inner.reason, inner.space) from None
        self.oob_reads += int(bad.size)
        segs.append((bad, _ZERO_PAGE, np.zeros(bad.size, dtype=np.int64)))
        return segs

    def _window_offsets(self, addrs: np.ndarray, size: int, idx: np.ndarray, space: str) -> np.ndarray:
        a = addrs.astype(np.int64, copy=False)
        if space == "shared":
            limit, base = self.shared_bytes, self.thread_cta[idx] * self.shared_stride
        elif space == "local":
            limit, base = self.local_bytes, idx.astype(np.int64) * self.local_stride
        else:
            limit, base = self.param_frame_bytes, idx.astype(np.int64) * self.param_stride
        bad = (a < 0) | (a + size > limit)
        if bad.any():
            lane = int(np.argmax(bad))
            raise MemoryFault(lane, int(addrs[lane]), f"out-of-bounds access (the {space} window holds {limit} bytes)",
                              space)
        if size > 1:
            mis = (a & (size - 1)) != 0
            if mis.any():
                lane = int(np.argmax(mis))
                raise MemoryFault(lane, int(addrs[lane]), f"misaligned {size}-byte access", space)
        return base + a

    def _resolve_generic(self, addrs: np.ndarray, idx: np.ndarray, size: int) -> list:
        a = addrs.astype(np.uint64, copy=False)
        in_shared = (a >= SHARED_WINDOW) & (a < SHARED_WINDOW + WINDOW_SIZE)
        in_local = (a >= LOCAL_WINDOW) & (a < LOCAL_WINDOW + WINDOW_SIZE)
        if not in_shared.any() and not in_local.any():
            return [(None, self.memory.data, self.memory.offsets(addrs, size, "generic"))]
        segs = []
        for sel_mask, space, base in ((in_shared, "shared", SHARED_WINDOW), (in_local, "local", LOCAL_WINDOW),
                                      (~(in_shared | in_local), "global", 0)):
            sel = np.nonzero(sel_mask)[0]
            if sel.size == 0:
                continue
            sub = a[sel] - np.uint64(base)
            try:
                if space == "global":
                    segs.append((sel, self.memory.data, self.memory.offsets(sub, size, "generic")))
                else:
                    buf = self.shared if space == "shared" else self.local
                    segs.append((sel, buf, self._window_offsets(sub, size, idx[sel], space)))
            except MemoryFault as fault:
                raise MemoryFault(int(sel[fault.lane]), int(a[sel[fault.lane]]), fault.reason, "generic") from None
        return segs

    def load(self, space: str, addrs: np.ndarray, idx: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """Gather one value of `dtype` per lane."""
        dtype = np.dtype(dtype)
        size = dtype.itemsize
        segs = self.resolve(space, addrs, idx, size)
        if len(segs) == 1 and segs[0][0] is None:
            _, buf, offs = segs[0]
            return _typed(buf, dtype)[offs // size]
        out = np.empty(len(addrs), dtype=dtype)
        for sel, buf, offs in segs:
            out[sel] = _typed(buf, dtype)[offs // size]
        return out

    def store(self, space: str, addrs: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
        """Scatter one value per lane; with duplicate addresses the highest lane wins."""
        values = np.asarray(values)
        size = values.dtype.itemsize
        segs = self.resolve(space, addrs, idx, size)
        for sel, buf, offs in segs:
            v = values if sel is None else values[sel]
            _typed(buf, values.dtype)[offs // size] = v


_ZERO_PAGE = np.zeros(64, dtype=np.uint8)  # what out-of-bounds loads read (at most a 32-byte vector)


def _typed(buf: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """View a byte buffer as `dtype` (buffers are kept a multiple of 16 bytes long)."""
    return buf.view(dtype)


def _pad16(n: int) -> int:
    return max(16, -(-n // 16) * 16)
