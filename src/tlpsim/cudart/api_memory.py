"""Allocation and copies.

All device memory (cudaMalloc, cudaMallocHost, cudaMallocManaged, module
variables) lives in the unified-address window (window.py), so a copy is a
checked memmove between the program's host memory and the window: the device
side must lie inside one allocation, or the call fails with the CUDA error and a
message naming the address. Host-to-device writes go through DeviceMemory.write,
which tells the timing model (l2.memcpy_fills). Copies take no simulated time.
"""

from __future__ import annotations

import ctypes

import numpy as np

from tlpsim.cudart import errors as E
from tlpsim.cudart.mempools import pools_of
from tlpsim.cudart.runtime import api, put, view
from tlpsim.cudart.streams import stream_of, synchronize

H2H, H2D, D2H, D2D, DEFAULT = range(5)
_KINDS = ("cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost", "cudaMemcpyDeviceToDevice",
          "cudaMemcpyDefault")
_ALLOC_KINDS = ("cudaMalloc", "cudaMallocHost", "cudaMallocManaged")


def _device_range(rt, address: int, nbytes: int, what: str) -> None:
    hit = rt.device.memory.allocation_of(address) if address else None
    if hit is None or address + nbytes > hit[0] + hit[1]:
        where = (f"runs {address + nbytes - hit[0] - hit[1]} byte(s) past the end of the {hit[1]}-byte allocation "
                 f"at {hit[0]:#x}") if hit else "is not in any device allocation"
        code = E.INVALID_VALUE if hit else E.INVALID_DEVICE_POINTER if address else E.INVALID_VALUE
        raise E.CudaError(code, f"{what} of {nbytes} bytes at {address:#x} {where}")


def _on_device(rt, address: int) -> bool:
    return rt.device.memory.allocation_of(address) is not None


def copy(rt, dst: int, src: int, nbytes: int, kind: int) -> None:
    """One checked copy of `nbytes` (the direction as CUDA names it)."""
    if kind not in range(5):
        raise E.CudaError(E.INVALID_MEMCPY_DIRECTION, f"copy kind {kind} is not a cudaMemcpyKind")
    if nbytes == 0:
        return
    if dst == 0 or src == 0:
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer was passed to a copy")
    if kind == DEFAULT:
        kind = (2 if _on_device(rt, src) else 0) + (1 if _on_device(rt, dst) else 0)
        kind = {0: H2H, 1: H2D, 2: D2H, 3: D2D}[kind]
    dst_dev, src_dev = kind in (H2D, D2D), kind in (D2H, D2D)
    if src_dev:
        _device_range(rt, src, nbytes, f"{_KINDS[kind]}: the source")
    if dst_dev:
        _device_range(rt, dst, nbytes, f"{_KINDS[kind]}: the destination")
        rt.device.memory.write(dst, view(src, nbytes))  # one copy, and the timing model hears of it
    else:
        ctypes.memmove(dst, src, nbytes)
    if rt.copy_log is not None and src_dev != dst_dev:  # tlpsim exec --save-copies
        device = dst if dst_dev else src
        start = rt.device.memory.allocation_of(device)[0]
        rt.copy_log.record("H2D" if dst_dev else "D2H", start, device - start, bytes(view(dst, nbytes)))


@api("cudaMalloc")
def malloc(rt, a):
    out, size, kind = a[0], a[1], a[2]
    if out == 0:
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer was passed for the result")
    if len(a) > 4:
        stream_of(rt, a[4])
    mem = rt.device.memory
    if mem.top + size > rt.window.size:
        raise E.CudaError(E.MEMORY_ALLOCATION, f"{_ALLOC_KINDS[kind]} of {size} bytes: the simulated device has "
                                               f"{rt.window.size} bytes, {mem.top} in use "
                                               "(tlpsim exec --device-memory)")
    try:
        address = mem.alloc(size, _ALLOC_KINDS[kind])
    except MemoryError as exc:
        raise E.CudaError(E.MEMORY_ALLOCATION, str(exc)) from None
    rt.allocs[address] = kind
    if len(a) > 4:  # stream-ordered (cudaMallocAsync; cudaMallocFromPoolAsync names the pool): a pool's memory
        pools_of(rt).allocated(address, size, a[5] if len(a) > 5 else None)
    put(out, ctypes.c_uint64, address)


@api("cudaMallocPitch")
def malloc_pitch(rt, a):
    pitch = -(-a[2] // 512) * 512 if a[2] else 0  # rows aligned as CUDA's texture pitch
    put(a[1], ctypes.c_size_t, pitch)
    malloc(rt, [a[0], pitch * a[3], 0])


@api("cudaFree")
def free(rt, a):
    address, host = a[0], a[1]
    if len(a) > 2:
        stream_of(rt, a[2])
    if address == 0:
        return
    kind = rt.allocs.get(address)
    if kind is None or (kind == 1) != bool(host):
        call = "cudaFreeHost" if host else "cudaFree"
        raise E.CudaError(E.INVALID_VALUE, f"{call}({address:#x}): not the start of a live "
                                           f"{'cudaMallocHost' if host else 'device'} allocation")
    del rt.allocs[address]
    pools_of(rt).freed(address)
    rt.device.memory.free(address)


@api("cudaHostRegister")
def host_register(rt, a):
    # kernels cannot reach host memory outside the window; registering only pins, which changes nothing here
    if a[0] == 0:
        raise E.CudaError(E.INVALID_VALUE, "cudaHostRegister of a NULL pointer")


@api("cudaHostGetDevicePointer")
def host_get_device_pointer(rt, a):
    if rt.allocs.get(a[1]) not in (1, 2):
        raise E.CudaError(E.INVALID_VALUE, f"{a[1]:#x} is not memory from cudaMallocHost/cudaHostAlloc (memory "
                                           "registered with cudaHostRegister is not mapped into the simulated GPU)")
    put(a[0], ctypes.c_uint64, a[1])  # unified addressing: the same pointer


@api("cudaHostGetFlags")
def host_get_flags(rt, a):
    if rt.allocs.get(a[1]) != 1:
        raise E.CudaError(E.INVALID_VALUE, f"{a[1]:#x} is not memory from cudaMallocHost/cudaHostAlloc")
    put(a[0], ctypes.c_uint32, 0x2)  # cudaHostAllocMapped


@api("cudaPointerGetAttributes")
def pointer_get_attributes(rt, a):
    hit = rt.device.memory.allocation_of(a[1]) if a[1] else None
    kind = rt.allocs.get(hit[0]) if hit else None
    put(a[0], ctypes.c_int32, 0 if hit is None else {0: 2, 1: 1, 2: 3}.get(kind, 2))


@api("cudaMemcpy")
def memcpy(rt, a):
    dst, src, nbytes, kind, stream, blocking = a
    stream_of(rt, stream)
    if blocking:
        synchronize(rt)
    copy(rt, dst, src, nbytes, kind)


@api("cudaMemcpy2D")
def memcpy_2d(rt, a):
    dst, dpitch, src, spitch, width, height, kind, stream, blocking = a
    stream_of(rt, stream)
    if width > dpitch or width > spitch:
        raise E.CudaError(E.CODES["cudaErrorInvalidPitchValue"], f"width {width} exceeds a pitch "
                                                                 f"({dpitch}, {spitch})")
    if blocking:
        synchronize(rt)
    for row in range(height):
        copy(rt, dst + row * dpitch, src + row * spitch, width, kind)


@api("cudaMemset", "cudaMemsetAsync", "cudaMemset2D", "cudaMemset2DAsync")  # each stub passes its own name
def memset_2d(rt, a):
    dst, pitch, value, width, height, stream, blocking = a
    stream_of(rt, stream)
    if width > pitch:
        raise E.CudaError(E.CODES["cudaErrorInvalidPitchValue"], f"width {width} exceeds the pitch {pitch}")
    if blocking:
        synchronize(rt)
    if width == 0 or height == 0:
        return
    _device_range(rt, dst, pitch * (height - 1) + width, "the destination")
    row = np.full(width, value & 0xFF, dtype=np.uint8)
    for r in range(height):
        rt.device.memory.write(dst + r * pitch, row)


@api("cudaMemcpySymbol")
def memcpy_symbol(rt, a):
    symbol, other, nbytes, offset, kind, stream, blocking, to_symbol = a
    stream_of(rt, stream)
    entry = rt.var(symbol)
    if offset + nbytes > entry.size:
        raise E.CudaError(E.INVALID_VALUE, f"{nbytes} bytes at offset {offset} do not fit variable {entry.name} "
                                           f"({entry.size} bytes)")
    if blocking:
        synchronize(rt)
    address = rt.var_address(entry) + offset
    if kind == DEFAULT:
        kind = H2D if to_symbol else D2H
        if _on_device(rt, other):
            kind = D2D
    if to_symbol and kind not in (H2D, D2D) or not to_symbol and kind not in (D2H, D2D):
        raise E.CudaError(E.INVALID_MEMCPY_DIRECTION, f"{_KINDS[kind] if kind < 5 else kind} cannot copy "
                                                      f"{'to' if to_symbol else 'from'} a symbol")
    if to_symbol:
        copy(rt, address, other, nbytes, kind)
    else:
        copy(rt, other, address, nbytes, kind)


@api("cudaGetSymbolAddress")
def get_symbol_address(rt, a):
    entry = rt.var(a[1])
    if a[2]:
        put(a[0], ctypes.c_size_t, entry.size)
    else:
        put(a[0], ctypes.c_uint64, rt.var_address(entry))
