"""Memory access semantics: ld, ldu, st, cvta, isspacep, prefetch/prefetchu, discard,
applypriority, membar and fence.

Loads and stores move raw bits: the value read by `ld.type` is handed to the
destination writer as `type`, so a destination register wider than the type is
sign-extended for .s types and zero-extended for .u/.b/.f types (PTX ISA, ld
notes); `st` stores the low bits of a wider source register. Vector accesses
(.v2/.v4/.v8) are checked as one access of the whole vector size (bounds and
alignment), and `_` sinks in a vector destination (or source) skip that element.
Cache, eviction, ordering and scope qualifiers have no functional effect and are
ignored. Every memory instruction returns the uint64 addresses it accessed (for
vectors, the address of the first element) in its own state space.
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Address, Instruction, Reg, Sink, Symbol, Vec
from tlpsim.functional.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE, MemoryFault
from tlpsim.functional.semantics import semantic
from tlpsim.functional.state import UNSIGNED_OF_SIZE, VALUE

# load/store types; .b128 needs 128-bit registers, which the register file does not have
_LDST_TYPES = frozenset("b8 b16 b32 b64 u8 u16 u32 u64 s8 s16 s32 s64 f16 f16x2 bf16 bf16x2 f32 f64".split())
# qualifiers that would change what an access means (everything else is a hint)
_MEANINGFUL = frozenset({"b128"})

_WINDOWS = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}


def _access_type(ins: Instruction, oc) -> str:
    t = ins.type
    bad = _MEANINGFUL.intersection(ins.mods)
    if bad:
        raise oc.unsupported(ins, f"the .{min(bad)} type")
    if t not in _LDST_TYPES:
        raise oc.unsupported(ins, f"type .{t}" if t else "a missing type")
    return t


def _address_operand(ins: Instruction, oc, ops) -> Address:
    addr = next((o for o in ops if isinstance(o, Address)), None)
    if addr is None:
        raise oc.unsupported(ins, "a missing [address] operand")
    return addr


def _elements(op, n: int, ins: Instruction, oc) -> tuple:
    elems = op.elems if isinstance(op, Vec) else (op,)
    if len(elems) != n:
        raise oc.unsupported(ins, f"a {len(elems)}-element operand for .v{n}")
    return elems


# ------------------------------------------------------------------ ld / ldu


@semantic("ld", "ldu")
def build_ld(ins: Instruction, oc):
    t = _access_type(ins, oc)
    space = oc.space_of_access(ins)
    n = ins.vec
    if not ins.dsts:
        raise oc.unsupported(ins, "a missing destination")
    addr_op = _address_operand(ins, oc, ins.srcs)
    addr = oc.address(addr_op, space)
    dt = VALUE[t]
    size = dt.itemsize
    elems = _elements(ins.dsts[0], n, ins, oc)
    live = [k for k, e in enumerate(elems) if not isinstance(e, Sink)]
    writers = [oc.writer(elems[k], t) for k in live]

    if space == "kparam":  # the kernel parameter buffer: byte gathers (no alignment guarantee)
        return _kparam_loader(addr, addr_op, dt, n, live, writers)

    shift = size.bit_length() - 1  # offsets are size-aligned: offs >> shift indexes buf.view(dt)
    if n == 1:
        w = writers[0] if writers else None

        def exec_ld(st, idx):
            a = addr(st, idx)
            try:
                segs = st.resolve(space, a, idx, size)
            except MemoryFault as fault:
                segs = st.oob_load(space, a, idx, size, fault)  # re-raises unless such reads return 0
            if len(segs) == 1 and segs[0][0] is None:
                _, buf, offs = segs[0]
                vals = buf.view(dt)[offs >> shift]
            else:
                vals = np.empty(len(idx), dtype=dt)
                for sel, buf, offs in segs:
                    vals[sel] = buf.view(dt)[offs >> shift]
            if w is not None:
                w(st, idx, vals)
            return a
        return exec_ld

    total = size * n

    def exec_ldv(st, idx):
        a = addr(st, idx)
        try:
            segs = st.resolve(space, a, idx, total)
        except MemoryFault as fault:
            segs = st.oob_load(space, a, idx, total, fault)
        if len(segs) == 1 and segs[0][0] is None:
            _, buf, offs = segs[0]
            typed, pos = buf.view(dt), offs >> shift
            for k, w in zip(live, writers):
                w(st, idx, typed[pos + k])
            return a
        vals = np.empty((len(live), len(idx)), dtype=dt)
        for sel, buf, offs in segs:
            typed, pos = buf.view(dt), offs >> shift
            for j, k in enumerate(live):
                vals[j, sel] = typed[pos + k]
        for j, w in enumerate(writers):
            w(st, idx, vals[j])
        return a
    return exec_ldv


def _kparam_loader(addr, addr_op: Address, dt: np.dtype, n: int, live: list, writers: list):
    """ld.param of kernel parameters; a symbol's address is the same for every lane,
    so the value is read once and broadcast."""
    size = dt.itemsize
    total = size * n
    uniform = not isinstance(addr_op.base, Reg)
    span = np.arange(total, dtype=np.int64)

    def exec_kparam(st, idx):
        a = addr(st, idx)
        if uniform and idx.size:
            ((_, buf, offs),) = st.resolve("kparam", a[:1], idx[:1], total)
            o = int(offs[0])
            vals = buf[o:o + total].copy().view(dt)  # (n,)
            for k, w in zip(live, writers):
                w(st, idx, vals[k])
            return a
        ((_, buf, offs),) = st.resolve("kparam", a, idx, total)
        vals = np.ascontiguousarray(buf[offs[:, None] + span]).view(dt)  # (L, n)
        for k, w in zip(live, writers):
            w(st, idx, vals[:, k])
        return a
    return exec_kparam


# ------------------------------------------------------------------ st


@semantic("st")
def build_st(ins: Instruction, oc):
    t = _access_type(ins, oc)
    space = oc.space_of_access(ins)
    if space == "kparam":
        raise oc.unsupported(ins, "a store to a kernel parameter")
    n = ins.vec
    addr_op = _address_operand(ins, oc, ins.srcs)
    if len(ins.srcs) < 2 or ins.srcs[0] is not addr_op:
        raise oc.unsupported(ins, "an operand form")
    addr = oc.address(addr_op, space)
    dt = VALUE[t]
    size = dt.itemsize
    ut = UNSIGNED_OF_SIZE[size]
    elems = _elements(ins.srcs[1], n, ins, oc)
    live = [k for k, e in enumerate(elems) if not isinstance(e, Sink)]
    readers = [oc.reader(elems[k], t) for k in live]

    shift = size.bit_length() - 1
    if n == 1:
        rd = readers[0] if readers else None

        def exec_st(st, idx):
            a = addr(st, idx)
            if rd is None:
                return a
            v = np.asarray(rd(st, idx), dtype=dt).view(ut)
            segs = st.resolve(space, a, idx, size)
            for sel, buf, offs in segs:
                buf.view(ut)[offs >> shift] = v if (sel is None or v.ndim == 0) else v[sel]
            return a
        return exec_st

    total = size * n

    def exec_stv(st, idx):
        a = addr(st, idx)
        vals = [np.asarray(rd(st, idx), dtype=dt).view(ut) for rd in readers]
        segs = st.resolve(space, a, idx, total)
        for sel, buf, offs in segs:
            typed, pos = buf.view(ut), offs >> shift
            for k, v in zip(live, vals):
                typed[pos + k] = v if (sel is None or v.ndim == 0) else v[sel]
        return a
    return exec_stv


# ------------------------------------------------------------------ cvta / isspacep


@semantic("cvta")
def build_cvta(ins: Instruction, oc):
    space = ins.space
    t = ins.type
    if t not in ("u32", "u64"):
        raise oc.unsupported(ins, f"size .{t}" if t else "a missing size")
    if space not in ("global", "const", "shared", "local"):
        raise oc.unsupported(ins, f"the .{space} state space" if space else "a missing state space")
    if len(ins.dsts) != 1 or len(ins.srcs) != 1 or isinstance(ins.srcs[0], (Address, Vec, Sink)):
        raise oc.unsupported(ins, "an operand form")
    src = ins.srcs[0]
    if isinstance(src, Symbol):
        sym_space = oc.symbol_space(src)
        if sym_space is not None and sym_space != space and not (sym_space == "global" and space == "const"):
            raise oc.unsupported(ins, f"the address of a .{sym_space} variable")
    rd = oc.reader(src, t)
    w = oc.writer(ins.dsts[0], t)
    vdt = VALUE[t]
    window = _WINDOWS.get(space, 0)
    if window == 0:  # global and const share the generic window: an identity
        def exec_ident(st, idx):
            w(st, idx, rd(st, idx))
        return exec_ident
    # the windows are 2^32-aligned, so .u32 forms also work modulo 2^32
    delta = np.uint64(window)
    to_space = ins.has("to")

    def exec_cvta(st, idx):
        v = np.asarray(rd(st, idx)).astype(np.uint64)
        out = v - delta if to_space else v + delta
        w(st, idx, out.astype(vdt))
    return exec_cvta


@semantic("isspacep")
def build_isspacep(ins: Instruction, oc):
    space = ins.space
    if space not in ("global", "const", "shared", "local", "param"):
        raise oc.unsupported(ins, f"the .{space} state space" if space else "a missing state space")
    if len(ins.dsts) != 1 or len(ins.srcs) != 1:
        raise oc.unsupported(ins, "an operand form")
    rd = oc.reader(ins.srcs[0], "u64")
    w = oc.writer(ins.dsts[0], "pred")
    lo_s, lo_l, ws = np.uint64(SHARED_WINDOW), np.uint64(LOCAL_WINDOW), np.uint64(WINDOW_SIZE)

    def in_window(v, lo):
        return (v >= lo) & (v - lo < ws)

    if space == "shared":
        def test(v):
            return in_window(v, lo_s)
    elif space == "local":
        def test(v):
            return in_window(v, lo_l)
    elif space == "param":  # kernel parameters have no generic addresses in this model
        def test(v):
            return np.zeros(np.shape(v), dtype=np.bool_)
    else:  # global and constant data share the global window
        def test(v):
            return ~(in_window(v, lo_s) | in_window(v, lo_l))

    def exec_isspacep(st, idx):
        v = np.broadcast_to(np.asarray(rd(st, idx), dtype=np.uint64), (len(idx),))
        w(st, idx, test(v))
    return exec_isspacep


# ------------------------------------------------------------------ hints and fences


@semantic("prefetch", "prefetchu", "discard", "applypriority")
def build_hint(ins: Instruction, oc):
    """Cache hints: no functional effect; they report the addresses they name."""
    addr_op = next((o for o in ins.srcs if isinstance(o, Address)), None)
    if addr_op is None:
        return lambda st, idx: None
    space = oc.space_of_access(ins)
    addr = oc.address(addr_op, space)

    def exec_hint(st, idx):
        return addr(st, idx)
    return exec_hint


@semantic("membar", "fence")
def build_fence(ins: Instruction, oc):
    """Memory ordering: every access of the functional model is already sequentially consistent."""
    return lambda st, idx: None
