"""CUDA arrays and texture objects (C side: libcudart_texture.c).

A CUDA array is a device allocation holding its texels row after row without
padding; its cudaArray_t is that allocation's address. Copies to and from arrays
are checked row copies (api_memory.copy), synchronous like the other copies. A
texture object is a functional.textures.Texture registered in the device
memory's table under a small integer handle, which the kernels' `tex`
instructions read (functional/semantics/texture.py).
"""

from __future__ import annotations

import ctypes
import itertools
import struct
from dataclasses import dataclass

from tlpsim.cudart import errors as E
from tlpsim.cudart.api_memory import copy
from tlpsim.cudart.runtime import api, put
from tlpsim.cudart.streams import stream_of, synchronize
from tlpsim.functional.textures import ChannelFormat, Texture, TextureError

INVALID_CHANNEL = E.CODES["cudaErrorInvalidChannelDescriptor"]
_HANDLES = itertools.count(1)
_RES_ARRAY, _RES_MIPMAP, _RES_LINEAR, _RES_PITCH2D = range(4)


@dataclass
class CudaArray:
    address: int
    fmt: ChannelFormat
    width: int
    height: int          # as allocated (0 for a 1D array)
    flags: int

    @property
    def rows(self) -> int:
        return max(self.height, 1)

    @property
    def row_bytes(self) -> int:
        return self.width * self.fmt.texel_bytes


def _arrays(rt) -> dict[int, CudaArray]:
    return rt.__dict__.setdefault("arrays", {})


def _array(rt, handle: int) -> CudaArray:
    arr = _arrays(rt).get(handle)
    if arr is None:
        raise E.CudaError(E.INVALID_HANDLE if handle else E.INVALID_VALUE,
                          f"{handle:#x} is not a CUDA array from cudaMallocArray (or it was freed)")
    return arr


def _format(words) -> ChannelFormat:
    x, y, z, w, kind = (ctypes.c_int64(v).value for v in words)
    try:
        return ChannelFormat((int(x), int(y), int(z), int(w)), int(kind))
    except TextureError as exc:
        raise E.CudaError(INVALID_CHANNEL, str(exc)) from None


@api("cudaMallocArray")
def malloc_array(rt, a):
    from tlpsim.cudart.api_memory import malloc

    out, *desc, width, height, flags, no_desc = a
    if no_desc:
        raise E.CudaError(E.INVALID_VALUE, "a NULL channel descriptor")
    fmt = _format(desc)
    if width < 1:
        raise E.CudaError(E.INVALID_VALUE, f"width {width} must be at least 1")
    if flags & ~0x1:  # only cudaArrayDefault / cudaArraySurfaceLoadStore (surfaces are not read by tlpsim)
        raise E.CudaError(E.NOT_SUPPORTED, f"flags {flags:#x} (layered, cubemap, texture-gather "
                                           "and sparse arrays are not supported by tlpsim)")
    nbytes = width * max(height, 1) * fmt.texel_bytes
    slot = ctypes.c_uint64(0)
    malloc(rt, [ctypes.addressof(slot), nbytes, 0])
    _arrays(rt)[slot.value] = CudaArray(slot.value, fmt, int(width), int(height), int(flags))
    put(out, ctypes.c_uint64, slot.value)


@api("cudaFreeArray")
def free_array(rt, a):
    if a[0] == 0:
        return
    _array(rt, a[0])
    synchronize(rt)  # as CUDA: freeing waits for the work that may use it
    del _arrays(rt)[a[0]]
    rt.allocs.pop(a[0], None)
    rt.device.memory.free(a[0])


@api("cudaArrayGetInfo")
def array_get_info(rt, a):
    arr = _array(rt, a[0])
    bits = arr.fmt.bits
    values = (*bits, arr.fmt.kind, arr.width, arr.height, 0, arr.flags)
    (ctypes.c_int64 * 9).from_address(a[1])[:] = values


def _side(rt, handle: int, is_array: int, x: int, y: int, pitch: int, width: int, rows: int, what: str):
    """(address of the first byte, pitch) of one side of an array copy, checked."""
    if not is_array:
        return handle, pitch
    arr = _array(rt, handle)
    if rows == 0:  # a 1D copy: `width` bytes from (x, y) on, running on through the rows
        if y * arr.row_bytes + x + width > arr.row_bytes * arr.rows:
            raise E.CudaError(E.INVALID_VALUE, f"{what}: {width} bytes at offset ({x}, {y}) run past the end of the "
                                               f"{arr.width} x {arr.rows} array ({arr.row_bytes * arr.rows} bytes)")
    elif x + width > arr.row_bytes or y + rows > arr.rows:
        raise E.CudaError(E.INVALID_VALUE, f"{what}: {width} bytes x {rows} rows at ({x} bytes, row {y}) exceed "
                                           f"the {arr.width} x {arr.rows} array ({arr.row_bytes} bytes a row)")
    return arr.address + y * arr.row_bytes + x, arr.row_bytes


ARRAY_COPIES = ("cudaMemcpyToArray", "cudaMemcpyToArrayAsync", "cudaMemcpyFromArray", "cudaMemcpyFromArrayAsync",
                "cudaMemcpy2DToArray", "cudaMemcpy2DToArrayAsync", "cudaMemcpy2DFromArray", "cudaMemcpy2DFromArrayAsync",
                "cudaMemcpy2DArrayToArray")


@api(*ARRAY_COPIES)
def array_copy(rt, a):
    dst, dst_arr, dx, dy, dpitch, src, src_arr, sx, sy, spitch, width, rows, kind, stream, blocking = a
    stream_of(rt, stream)
    if rows and ((not dst_arr and width > dpitch) or (not src_arr and width > spitch)):
        raise E.CudaError(E.CODES["cudaErrorInvalidPitchValue"], f"width {width} exceeds a pitch ({dpitch}, {spitch})")
    d, dp = _side(rt, dst, dst_arr, dx, dy, dpitch, width, rows, "the destination array")
    s, sp = _side(rt, src, src_arr, sx, sy, spitch, width, rows, "the source array")
    if blocking:
        synchronize(rt)
    if rows == 0:
        copy(rt, d, s, width, kind)
    for r in range(rows):
        copy(rt, d + r * dp, s + r * sp, width, kind)


# ------------------------------------------------------------------ texture objects


@api("cudaCreateTextureObject")
def create_texture_object(rt, a):
    out = a[0]
    if a[1] == 99 and len(a) == 2:
        raise E.CudaError(E.INVALID_VALUE, "a NULL resource or texture descriptor")
    res_type, base = a[1], a[2]
    desc = a[3:8]
    size, width, height, pitch, am0, am1, _am2, filt, read_mode, norm, srgb = a[8:19]
    border, view = a[19:23], a[23]
    if out == 0:
        raise E.CudaError(E.INVALID_VALUE, "a NULL pointer for the result")
    if view:
        rt.problem("cudaCreateTextureObject with a resource view descriptor")
        raise E.CudaError(E.NOT_SUPPORTED, "resource views are not supported by tlpsim")
    if srgb:
        rt.problem("cudaCreateTextureObject with sRGB")
        raise E.CudaError(E.NOT_SUPPORTED, "sRGB conversion is not supported by tlpsim")
    for v, what in ((am0, "address mode"), (am1, "address mode"), (filt, "filter mode"), (read_mode, "read mode")):
        if v > (3 if what == "address mode" else 1):
            raise E.CudaError(E.INVALID_VALUE, f"{what} {v} is not one CUDA defines")
    colour = tuple(struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0] for b in border)
    common = dict(address_mode=(int(am0), int(am1)), filter_mode=int(filt), normalized_float=bool(read_mode),
                  normalized_coords=bool(norm), border=colour)
    try:
        if res_type == _RES_ARRAY:
            arr = _array(rt, base)
            tex = Texture(arr.address, arr.fmt, arr.width, arr.rows, what=f"CUDA array {base:#x}", **common)
        elif res_type == _RES_LINEAR:
            fmt = _format(desc)
            if size % fmt.texel_bytes or size == 0:
                raise E.CudaError(E.INVALID_VALUE, f"linear memory of {size} bytes is not "
                                                   f"a whole number of {fmt.texel_bytes}-byte texels")
            tex = Texture(base, fmt, size // fmt.texel_bytes, 1, what=f"linear memory at {base:#x}", **common)
        elif res_type == _RES_PITCH2D:
            tex = Texture(base, _format(desc), int(width), int(height), int(pitch),
                          what=f"pitched memory at {base:#x}", **common)
        else:
            rt.problem("cudaCreateTextureObject of a mipmapped array")
            raise E.CudaError(E.NOT_SUPPORTED if res_type == _RES_MIPMAP else E.INVALID_VALUE,
                              f"resource type {res_type} (tlpsim: arrays, linear and "
                              "pitched 2D memory)")
    except TextureError as exc:
        raise E.CudaError(E.INVALID_VALUE, f"{exc}") from None
    hit = rt.device.memory.allocation_of(tex.address)
    if hit is None or tex.address + tex.nbytes > hit[0] + hit[1]:
        raise E.CudaError(E.INVALID_VALUE, f"the {tex.nbytes} bytes of {tex.what} are not "
                                           "inside one device allocation")
    handle = next(_HANDLES)
    rt.device.memory.textures[handle] = tex
    put(out, ctypes.c_uint64, handle)


@api("cudaDestroyTextureObject")
def destroy_texture_object(rt, a):
    if a[0] not in rt.device.memory.textures:
        raise E.CudaError(E.INVALID_VALUE, f"{a[0]:#x} is not a live texture object")
    synchronize(rt)  # pending launches on other streams still read it
    del rt.device.memory.textures[a[0]]


# ------------------------------------------------------------------ cudaMemcpy3D parameters (also graph memcpy nodes)


def copy3d_plan(rt, w) -> list[list[int]]:
    """The array-copy words (less stream and blocking) of each depth slice a cudaMemcpy3DParms asks for.
    Arrays are 1D/2D here (no cudaMalloc3DArray); pitched pointers may have depth."""
    sa, sx, sy, sz, sp, spitch, sys_, da, dx, dy, dz, dp, dpitch, dys, ew, eh, ed, kind = w
    if sa and sp or da and dp or not (sa or sp) or not (da or dp):
        raise E.CudaError(E.INVALID_VALUE, "cudaMemcpy3DParms: give exactly one of srcArray/srcPtr and one of "
                                           "dstArray/dstPtr")
    arrays = [_array(rt, h) for h in (sa, da) if h]
    tb = arrays[0].fmt.texel_bytes if arrays else 1
    if len(arrays) == 2 and arrays[1].fmt.texel_bytes != tb:
        raise E.CudaError(E.INVALID_VALUE, "cudaMemcpy3DParms: the two arrays' elements differ in size")
    depth = max(ed, 1)
    if arrays and (depth > 1 or sz or dz):
        raise E.CudaError(E.NOT_SUPPORTED, "cudaMemcpy3DParms: 3D arrays are not supported by tlpsim")

    def side(arr, ptr, x, y, z, pitch, ysize, k):
        if arr:
            return [arr, 1, x * tb, y, 0]
        return [ptr + ((z + k) * ysize + y) * pitch + x, 0, 0, 0, pitch]

    plan = []
    for k in range(depth):
        d = side(da, dp, dx, dy, dz, dpitch, dys, k)
        s = side(sa, sp, sx, sy, sz, spitch, sys_, k)
        plan.append([*d, *s, ew * tb, max(eh, 1), kind])
    return plan


@api("cudaMemcpy3D", "cudaMemcpy3DAsync")
def memcpy3d(rt, a):
    if len(a) == 4:
        raise E.CudaError(E.INVALID_VALUE, "a NULL parameter structure")
    plan = copy3d_plan(rt, a[:18])
    stream, blocking = a[18], a[19]
    stream_of(rt, stream)
    if blocking:
        synchronize(rt)
    for words in plan:
        array_copy(rt, [*words, stream, 0])


def copy3d_node(rt, w):
    """A graph memcpy node from a cudaMemcpy3DParms (checked now, copied when it runs)."""
    from tlpsim.cudart.api_graph import MEMCPY, Node, original

    plan = copy3d_plan(rt, w)
    run_copy = original("cudaMemcpy2DToArrayAsync")

    def run(rt, stream):
        for words in plan:
            run_copy(rt, [*words, stream, 0])

    return Node(MEMCPY, run, f"memcpy of {w[14]} x {max(w[15], 1)} x {max(w[16], 1)}")
