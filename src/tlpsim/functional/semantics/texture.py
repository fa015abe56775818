"""Texture fetches: `tex.1d` / `tex.2d` on texture objects (unified mode).

    tex.1d.v4.f32.s32  {d0, d1, d2, d3}, [handle, {x}];      tex1Dfetch<float>(t, i)
    tex.2d.v4.f32.f32  {d0, d1, d2, d3}, [handle, {x, y}];   tex2D<float4>(t, u, v)

The handle is a 64-bit cudaTextureObject_t naming a texture the runtime
registered in `DeviceMemory.textures`; sampling is functional/textures.py. A
handle that names no live texture object is a kernel fault (as using a
destroyed object is undefined on a GPU). Forms tlpsim does not implement
(3D, layered and cube textures, independent samplers, `.texref` names of the
legacy texture references CUDA 12 removed, sparse-residency predicates, f16
results, explicit LOD/gradients) are rejected with UnsupportedPTX. Each lane's
returned address is that of its first texel, so the timing model sees the fetch
as a global load (through L1).
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Reg, Sink, Symbol, Vec
from tlpsim.functional.memory import MemoryFault
from tlpsim.functional.semantics import semantic
from tlpsim.functional.textures import TextureError, sample

_GEOMETRY = {"1d": 1, "2d": 2}
_RESULTS = ("f32", "s32", "u32")


@semantic("tex")
def build_tex(ins, oc):
    geo = [m for m in ins.mods if m in ("1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms")]
    if len(geo) != 1 or geo[0] not in _GEOMETRY:
        raise oc.unsupported(ins, f"the .{geo[0] if geo else '?'} geometry (tlpsim samples 1D and 2D textures)")
    extra = [m for m in ins.mods if m in ("level", "grad", "base")]
    if extra:
        raise oc.unsupported(ins, f"the .{extra[0]} (mipmap level) form")
    dims = _GEOMETRY[geo[0]]
    if len(ins.types) != 2 or ins.types[0] not in _RESULTS or ins.types[1] not in ("s32", "f32"):
        raise oc.unsupported(ins, f"result/coordinate types {'.'.join(ins.types)} (tlpsim: .f32/.s32/.u32 "
                                  "results, .s32/.f32 coordinates)")
    results, ctype = ins.types
    if ins.vec != 4 or len(ins.dsts) != 1 or not isinstance(ins.dsts[0], Vec) or len(ins.dsts[0].elems) != 4:
        raise oc.unsupported(ins, "a destination other than one 4-vector (sparse-residency predicate?)")
    src = ins.srcs[0] if ins.srcs else None
    elems = src.elems if isinstance(src, Vec) else ()
    if len(elems) != 1 + dims or len(ins.srcs) != 1:
        raise oc.unsupported(ins, "operands other than [texture, {coordinates}] (independent samplers, "
                                  "depth compare or offsets)")
    if isinstance(elems[0], Symbol) or not isinstance(elems[0], Reg):
        raise oc.unsupported(ins, f"texture operand {elems[0]}: a .texref name (legacy texture references, removed "
                                  "in CUDA 12; tlpsim samples texture objects passed as 64-bit handles)")
    handle = oc.reader(elems[0], "u64")
    coords = [oc.reader(e, ctype) for e in elems[1:]]
    writers = [None if isinstance(e, Sink) else oc.writer(e, results) for e in ins.dsts[0].elems]
    integer = ctype == "s32"
    out_dt = {"f32": np.float32, "s32": np.int32, "u32": np.uint32}[results]

    def exec_tex(st, idx):
        h = np.asarray(handle(st, idx)).astype(np.uint64)
        xs = [np.asarray(c(st, idx)) for c in coords]
        textures = st.memory.textures
        vals = np.zeros((len(idx), 4), dtype=np.float32 if results == "f32" else np.int64)
        addrs = np.zeros(len(idx), dtype=np.uint64)
        for hv in np.unique(h):
            sel = h == hv
            tex = textures.get(int(hv))
            if tex is None:
                lane = int(np.argmax(sel))
                raise MemoryFault(lane, int(hv), "tex: the handle is not a live texture object "
                                                 "(never created, or destroyed)", "texture")
            try:
                v, a = sample(tex, st.memory.data, [x[sel] for x in xs], integer, results)
            except TextureError as exc:
                raise MemoryFault(int(np.argmax(sel)), int(hv), f"tex: {exc}", "texture") from None
            vals[sel] = v
            addrs[sel] = a
        for k, w in enumerate(writers):
            if w is not None:
                col = vals[:, k]
                w(st, idx, col if results == "f32" else col.astype(np.int64).astype(out_dt))
        return addrs

    return exec_tex
