"""Atomic semantics: atom and red.

The result of an atomic instruction executed by many lanes equals executing the
lanes one at a time in lane order (the order of `idx`): every lane's returned old
value and the final memory contents are those of that serial order, also when
several lanes hit the same location. Lanes are sorted (stably) by the location
they access and handled per location segment, vectorised:

* add/min/max/and/or/xor: a segmented inclusive scan (`ufunc.accumulate` over a
  padded (segment x rank) matrix whose first column holds the memory value, so
  float additions round exactly as serial additions do);
* exch: a lane's old value is the previous lane's operand;
* inc/dec: a closed form when every lane of a segment has the same bound, or
  rounds (one lane per location per round) otherwise;
* cas: rounds that jump from one state-changing lane to the next.

Locations accessed by only one lane take a fast path. `red` (and `atom` with a
`_` destination) uses unbuffered `ufunc.at`, which applies lanes in order.
Memory-ordering and scope qualifiers are ignored (the model is sequentially
consistent); `atom.add.f32` does not flush subnormals. `atom` returns the
uint64 addresses accessed, like every memory instruction.
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Address, Instruction, Sink
from tlpsim.functional.semantics import semantic
from tlpsim.functional.state import UNSIGNED_OF_SIZE, VALUE

_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")
_INT = frozenset("u32 s32 u64 s64".split())
_BITS = frozenset("b32 b64 u32 s32 u64 s64".split())
_UFUNCS = {"add": np.add, "min": np.minimum, "max": np.maximum,
           "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


# ------------------------------------------------------------------ half-precision adds


def _bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _f32_to_bf16(f: np.ndarray) -> np.ndarray:
    u = np.ascontiguousarray(f, dtype=np.float32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet = (u >> np.uint32(16)) | np.uint32(0x40)
    return np.where(np.isnan(f), quiet, rounded).astype(np.uint16)


def _bf16_add(a, b):
    # the exact f32 sum rounded once more to bf16 (24 >= 2*8+2: double rounding is harmless)
    with np.errstate(over="ignore", invalid="ignore"):
        return _f32_to_bf16(_bf16_to_f32(a) + _bf16_to_f32(b))


def _halves(a, b, dtype):
    a = np.ascontiguousarray(a, dtype=np.uint32)
    b = np.ascontiguousarray(np.broadcast_to(b, a.shape), dtype=np.uint32)
    return a.view(dtype), b.view(dtype)


def _f16x2_add(a, b):
    x, y = _halves(a, b, np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        return (x + y).view(np.uint32)


def _bf16x2_add(a, b):
    x, y = _halves(a, b, np.uint16)
    return _bf16_add(x, y).view(np.uint32)


_CALLABLE_ADDS = {"bf16": (np.uint16, _bf16_add), "f16x2": (np.uint32, _f16x2_add),
                  "bf16x2": (np.uint32, _bf16x2_add)}


# ------------------------------------------------------------------ segmented helpers


def _ranks(starts: np.ndarray, sid: np.ndarray) -> np.ndarray:
    return np.arange(sid.size, dtype=np.int64) - starts[sid]


def _seg_scan(ufunc, wd, mem, bs, starts, lens, sid):
    """Serial application of `ufunc` within each segment: (old per element, final per segment)."""
    n, g = bs.size, lens.size
    rank = _ranks(starts, sid)
    old = np.empty(n, dtype=wd)
    final = np.empty(g, dtype=wd)
    if g * (int(lens.max()) + 1) <= 2 * n + 64:
        groups = [None]
    else:  # bucket segments by length so that padding stays within 2x
        bucket = np.ceil(np.log2(lens)).astype(np.int64)
        groups = [np.flatnonzero(bucket == k) for k in np.unique(bucket)]
    for gs in groups:
        if gs is None:
            e, row, rows, glens, gmem = slice(None), sid, g, lens, mem
        else:
            rowmap = np.full(g, -1, dtype=np.int64)
            rowmap[gs] = np.arange(gs.size)
            e = np.flatnonzero(rowmap[sid] >= 0)
            row, rows, glens, gmem = rowmap[sid[e]], gs.size, lens[gs], mem[gs]
        er = rank[e]
        mat = np.zeros((rows, int(glens.max()) + 1), dtype=wd)
        mat[:, 0] = gmem
        mat[row, er + 1] = bs[e]
        acc = ufunc.accumulate(mat, axis=1, dtype=wd)
        old[e] = acc[row, er]
        final[slice(None) if gs is None else gs] = acc[np.arange(rows), glens]
    return old, final


def _seg_rounds(step, wd, mem, bs, cs, starts, lens, sid):
    """Serial application of an arbitrary step, one lane per segment per round."""
    rank = _ranks(starts, sid)
    order = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[order], np.arange(int(lens.max()) + 1))
    cur = np.array(mem, dtype=wd)
    old = np.empty(bs.size, dtype=wd)
    for r in range(bounds.size - 1):
        e = order[bounds[r]:bounds[r + 1]]
        s = sid[e]
        o = cur[s]
        old[e] = o
        cur[s] = step(o, bs[e], None if cs is None else cs[e])
    return old, cur


def _seg_exch(wd, mem, bs, cs, starts, lens, sid):
    old = np.empty(bs.size, dtype=wd)
    old[1:] = bs[:-1]
    old[starts] = mem
    return old, bs[starts + lens - 1].astype(wd)


def _seg_cas(wd, mem, bs, cs, starts, lens, sid):
    """Exact serial compare-and-swap; each round jumps to the next lane of each
    segment that changes the location (a lane that swaps in the same value or
    whose comparison fails leaves it as is)."""
    n = bs.size
    cur = np.array(mem, dtype=wd)
    old = np.empty(n, dtype=wd)
    cand = np.arange(n, dtype=np.int64)
    while cand.size:
        s = sid[cand]
        cc = cur[s]
        hit = (bs[cand] == cc) & (cs[cand] != cc)
        lim = np.full(lens.size, n, dtype=np.int64)
        if hit.any():
            hc, hs = cand[hit], s[hit]
            first = np.empty(hs.size, dtype=np.bool_)
            first[0] = True
            first[1:] = hs[1:] != hs[:-1]
            hc, hs = hc[first], hs[first]
            lim[hs] = hc
        done = cand <= lim[s]
        old[cand[done]] = cc[done]
        if hit.any():
            cur[hs] = cs[hc]
        cand = cand[~done]
    return old, cur


def _inc_dec_closed(is_inc: bool):
    def seg(wd, mem, bs, cs, starts, lens, sid):
        bound = bs[starts]
        if not (bs == bound[sid]).all():  # different bounds on one location: go serial
            return _seg_rounds(_STEPS["inc" if is_inc else "dec"], wd, mem, bs, cs, starts, lens, sid)
        s = bound.astype(np.int64)
        r0 = np.asarray(mem).astype(np.int64)
        period = s + 1

        def value(seg, j):  # the location after j serial steps
            ss, rr, pp = s[seg], r0[seg], period[seg]
            if is_inc:
                inside, outside = (rr + j) % pp, (j - 1) % pp
            else:
                inside, outside = (rr - j) % pp, (ss - (j - 1)) % pp
            return np.where(rr <= ss, inside, np.where(j == 0, rr, outside)).astype(wd)

        allseg = np.arange(lens.size)
        return value(sid, _ranks(starts, sid)), value(allseg, lens.astype(np.int64))
    return seg


def _step_inc(o, b, c):
    return np.where(o >= b, o.dtype.type(0), o + o.dtype.type(1))


def _step_dec(o, b, c):
    return np.where((o == 0) | (o > b), b, o - o.dtype.type(1))


def _step_cas(o, b, c):
    return np.where(o == b, c, o)


_STEPS = {"inc": _step_inc, "dec": _step_dec, "cas": _step_cas, "exch": lambda o, b, c: b}
_SEGMENTED = {"inc": _inc_dec_closed(True), "dec": _inc_dec_closed(False), "cas": _seg_cas, "exch": _seg_exch}


# ------------------------------------------------------------------ per-location application


def _make_apply(step, seg_fn, wd, float_kind: bool):
    """apply(typed, pos, b, c) -> old values: serial semantics in lane order."""

    def apply(typed, pos, b, c):
        n = pos.size
        if n <= 1 or (pos[1:] > pos[:-1]).all():
            old = typed[pos]
            typed[pos] = step(old, b, c)
            return old
        order = np.argsort(pos, kind="stable")
        ps = pos[order]
        new_seg = np.empty(n, dtype=np.bool_)
        new_seg[0] = True
        np.not_equal(ps[1:], ps[:-1], out=new_seg[1:])
        if new_seg.all():  # no location is shared
            old = typed[pos]
            typed[pos] = step(old, b, c)
            return old
        starts = np.flatnonzero(new_seg)
        lens = np.diff(np.append(starts, n))
        sid = np.cumsum(new_seg) - 1
        where = ps[starts]
        bs = np.asarray(b)[order]
        cs = None if c is None else np.asarray(c)[order]
        olds, final = seg_fn(wd, typed[where], bs, cs, starts, lens, sid)
        typed[where] = final
        old = np.empty(n, dtype=wd)
        old[order] = olds
        return old

    if not float_kind:
        return apply

    def apply_quiet(typed, pos, b, c):  # inf/NaN results are values, not errors
        with np.errstate(over="ignore", invalid="ignore"):
            return apply(typed, pos, b, c)
    return apply_quiet


def _scan_seg(uf):
    return lambda wd, mem, bs, cs, starts, lens, sid: _seg_scan(uf, wd, mem, bs, starts, lens, sid)


def _rounds_seg(step):
    return lambda wd, mem, bs, cs, starts, lens, sid: _seg_rounds(step, wd, mem, bs, cs, starts, lens, sid)


def _resolve_kind(ins: Instruction, oc, op: str, t: str):
    """(working dtype, step, segmented fn, ufunc or None) for an op and type."""
    if op == "add" and t in _CALLABLE_ADDS:
        wd, fn = _CALLABLE_ADDS[t]

        def step(o, b, c):
            return fn(o, b)
        return np.dtype(wd), step, _rounds_seg(step), None
    if op in _UFUNCS:
        uf = _UFUNCS[op]
        if op == "add" and t in ("f16", "f32", "f64"):
            wd = VALUE[t]
        elif op == "add" and t in _INT:
            wd = UNSIGNED_OF_SIZE[VALUE[t].itemsize]
        elif op in ("min", "max") and t in _INT:
            wd = VALUE[t]
        elif op in ("and", "or", "xor") and t in _BITS:
            wd = UNSIGNED_OF_SIZE[VALUE[t].itemsize]
        else:
            raise oc.unsupported(ins, f"atomic .{op} on .{t}")

        def ustep(o, b, c):
            return uf(o, b)
        return wd, ustep, _scan_seg(uf), uf
    if op in ("inc", "dec"):
        if t != "u32":
            raise oc.unsupported(ins, f"atomic .{op} on .{t}")
        return np.dtype(np.uint32), _STEPS[op], _SEGMENTED[op], None
    if op in ("exch", "cas"):
        if t not in ("b16", "b32", "b64", "u32", "s32", "u64", "s64", "f32", "f64") or (op == "exch" and t == "b16"):
            raise oc.unsupported(ins, f"atomic .{op} on .{t}")
        return UNSIGNED_OF_SIZE[VALUE[t].itemsize], _STEPS[op], _SEGMENTED[op], None
    raise oc.unsupported(ins, f"atomic .{op}")


@semantic("atom", "red")
def build_atomic(ins: Instruction, oc):
    if ins.vec != 1:
        raise oc.unsupported(ins, "vector atomics")
    ops = [m for m in ins.mods if m in _OPS]
    if len(ops) != 1:
        raise oc.unsupported(ins, "the atomic operation")
    op = ops[0]
    if "b128" in ins.mods:
        raise oc.unsupported(ins, "128-bit atomics")
    t = ins.type
    if t not in VALUE:
        raise oc.unsupported(ins, f"type .{t}" if t else "a missing type")
    if ins.base == "red" and op in ("exch", "cas"):
        raise oc.unsupported(ins, f"red.{op}")
    space = oc.space_of_access(ins)
    if space not in ("global", "shared", "generic"):
        raise oc.unsupported(ins, f"an atomic on the .{space} state space")
    dst = None if ins.base == "red" else (ins.dsts[0] if ins.dsts else None)
    if isinstance(dst, Sink):
        dst = None
    nsrc = 3 if op == "cas" else 2
    srcs = ins.srcs
    if len(srcs) < nsrc or not isinstance(srcs[0], Address) or any(isinstance(s, Address) for s in srcs[1:nsrc]):
        raise oc.unsupported(ins, "an operand form")
    if ins.base == "atom" and not ins.dsts:
        raise oc.unsupported(ins, "a missing destination")

    wd, step, seg_fn, uf = _resolve_kind(ins, oc, op, t)
    vdt = VALUE[t]
    size = vdt.itemsize
    shift = size.bit_length() - 1  # aligned byte offsets >> shift index buf.view(wd)
    addr = oc.address(srcs[0], space)
    rb = oc.reader(srcs[1], t)
    rc = oc.reader(srcs[2], t) if op == "cas" else None
    w = oc.writer(dst, t) if dst is not None else None
    float_kind = wd.kind == "f"
    if uf is not None and w is None:  # a reduction: ufunc.at applies lanes in order
        if float_kind:
            def apply(typed, pos, b, c):
                with np.errstate(over="ignore", invalid="ignore"):
                    uf.at(typed, pos, b)
        else:
            def apply(typed, pos, b, c):
                uf.at(typed, pos, b)
    else:
        apply = _make_apply(step, seg_fn, wd, float_kind)

    def operand(rd, st, idx):
        v = np.asarray(rd(st, idx), dtype=vdt).view(wd)
        return np.full(idx.size, v, dtype=wd) if v.ndim == 0 else v

    def exec_atomic(st, idx):
        a = addr(st, idx)
        b = operand(rb, st, idx)
        c = operand(rc, st, idx) if rc is not None else None
        segs = st.resolve(space, a, idx, size)
        if len(segs) == 1 and segs[0][0] is None:
            _, buf, offs = segs[0]
            old = apply(buf.view(wd), offs >> shift, b, c)
        else:
            old = np.empty(idx.size, dtype=wd) if w is not None else None
            for sel, buf, offs in segs:
                o = apply(buf.view(wd), offs >> shift, b[sel], None if c is None else c[sel])
                if old is not None:
                    old[sel] = o
        if w is not None:
            w(st, idx, old.view(vdt))
        return a
    return exec_atomic
