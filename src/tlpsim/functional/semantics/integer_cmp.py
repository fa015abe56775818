"""Compare and select instructions of the integer family: setp, set, selp, slct for
integer and floating-point operands, testp and copysign.

Float comparisons follow PTX: eq/ne/lt/le/gt/ge are ordered (false when either
operand is NaN), equ/neu/ltu/leu/gtu/geu unordered (true when either is NaN);
num/nan test for NaNs. Registered on import; `integer` imports this module.
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Imm
from tlpsim.functional.semantics import semantic
from tlpsim.functional.semantics.integer import (
    FLOAT_TYPES,
    INT_TYPES,
    bits_reader,
    btype,
    full_reader,
    need,
    need_type,
    quiet,
    utype,
    width,
)
from tlpsim.functional.state import VALUE

_ALL32 = np.uint32(0xFFFFFFFF)
_UINT = {16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}

# ---------------------------------------------------------------- comparisons

_INT_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
_FLOAT_CMP = {  # ordered: false if either is NaN; *u: true if either is NaN
    "eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "ne": lambda a, b: (a < b) | (a > b),
    "equ": lambda a, b: ~((a < b) | (a > b)), "neu": np.not_equal,
    "ltu": lambda a, b: ~(a >= b), "leu": lambda a, b: ~(a > b),
    "gtu": lambda a, b: ~(a <= b), "geu": lambda a, b: ~(a < b),
    "num": lambda a, b: ~(np.isnan(a) | np.isnan(b)), "nan": lambda a, b: np.isnan(a) | np.isnan(b),
}
_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
_TINY = {np.dtype(np.float16): np.float16(2.0 ** -14), np.dtype(np.float32): np.float32(2.0 ** -126),
         np.dtype(np.float64): np.float64(2.0 ** -1022)}


def _ftz(x):
    return np.where(np.abs(x) < _TINY[x.dtype], x.dtype.type(0), x)


def _bf16_reader(oc, op, t):
    """bf16/bf16x2 operands as float32 values (bf16 is the high half of an f32)."""
    if isinstance(op, Imm) and op.is_float and t == "bf16":  # round the literal to bf16 (RNE)
        u = int(np.float32(op.value).view(np.uint32))
        bits = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 if not np.isnan(op.value) else u >> 16
        val = np.uint32((bits & 0xFFFF) << 16).view(np.float32)
        return lambda st, idx: val
    r = full_reader(oc, op, btype(t))  # bf16x2: both halves, low half first
    s16 = np.uint32(16)

    def read(st, idx):
        return (r(st, idx).view(np.uint16).astype(np.uint32) << s16).view(np.float32)
    return read


def compare(ins, oc, t: str, a, b):
    """(readers for a and b, cmp(a, b) -> bool array, n_lanes_per_operand) for setp/set."""
    ops = [m for m in ins.mods if m in _FLOAT_CMP or m in _INT_CMP]
    if len(ops) != 1:
        raise oc.unsupported(ins, "missing or conflicting comparison")
    op = ops[0]
    if t in INT_TYPES:
        if op not in _INT_CMP:
            raise oc.unsupported(ins, f"comparison .{op} on integers")
        rt = utype(t) if op in ("lo", "ls", "hi", "hs") else t
        return oc.reader(a, rt), oc.reader(b, rt), _INT_CMP[op], 1
    if t not in ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"):
        raise oc.unsupported(ins, f"type .{t}")
    if op not in _FLOAT_CMP:
        raise oc.unsupported(ins, f"comparison .{op} on floating point")
    fn = _FLOAT_CMP[op]
    if ins.has("ftz") and t in ("f32", "f16", "f16x2"):
        raw = fn

        def fn(x, y):
            return raw(_ftz(x), _ftz(y))
    if t.startswith("bf16"):
        return _bf16_reader(oc, a, t), _bf16_reader(oc, b, t), fn, 2 if t == "bf16x2" else 1
    if t == "f16x2":
        fa, fb = full_reader(oc, a, "b32"), full_reader(oc, b, "b32")
        return ((lambda st, idx: fa(st, idx).view(np.float16)), (lambda st, idx: fb(st, idx).view(np.float16)),
                fn, 2)
    return oc.reader(a, t), oc.reader(b, t), fn, 1


def _boolop(ins, oc, srcs_expected: int):
    ops = [m for m in ins.mods if m in _BOOL]
    if len(ops) > 1:
        raise oc.unsupported(ins, "conflicting boolean operations")
    if ops and len(ins.srcs) != srcs_expected + 1 or not ops and len(ins.srcs) != srcs_expected:
        raise oc.unsupported(ins, "operand count")
    if not ops:
        return None, None
    return _BOOL[ops[0]], oc.reader(ins.srcs[srcs_expected], "pred")


@semantic("setp")
def build_setp(ins, oc):
    if len(ins.dsts) not in (1, 2):
        raise oc.unsupported(ins, "operand count")
    t = ins.type
    ra, rb, cmp, lanes = compare(ins, oc, t, ins.srcs[0], ins.srcs[1]) if len(ins.srcs) >= 2 else (None,) * 4
    if ra is None:
        raise oc.unsupported(ins, "operand count")
    comb, rc = _boolop(ins, oc, 2)
    wp = oc.writer(ins.dsts[0], "pred")
    wq = oc.writer(ins.dsts[1], "pred") if len(ins.dsts) == 2 else None

    if lanes == 2:  # f16x2/bf16x2: p gets the low half, q the high half
        def run_x2(st, idx):
            r = cmp(ra(st, idx), rb(st, idx)).reshape(-1, 2)
            p, q = r[:, 0], r[:, 1]
            if comb is not None:
                c = rc(st, idx)
                p, q = comb(p, c), comb(q, c)
            wp(st, idx, p)
            if wq is not None:
                wq(st, idx, q)
        return quiet(run_x2, ins)

    if comb is None and wq is None:
        def run_simple(st, idx):
            wp(st, idx, cmp(ra(st, idx), rb(st, idx)))
        return quiet(run_simple, ins)

    def run(st, idx):
        r = cmp(ra(st, idx), rb(st, idx))
        nr = ~r
        if comb is not None:
            c = rc(st, idx)
            r, nr = comb(r, c), comb(nr, c)
        wp(st, idx, r)
        if wq is not None:
            wq(st, idx, nr)
    return quiet(run, ins)


@semantic("set")
def build_set(ins, oc):
    if len(ins.dsts) != 1 or len(ins.types) != 2:
        raise oc.unsupported(ins, "form (need set.CmpOp.dtype.stype d, a, b)")
    dtype, st_ = ins.types
    if dtype not in ("u32", "s32", "f32"):
        raise oc.unsupported(ins, f"destination type .{dtype}")
    ra, rb, cmp, lanes = compare(ins, oc, st_, ins.srcs[0], ins.srcs[1])
    if lanes != 1:
        raise oc.unsupported(ins, f"source type .{st_}")
    comb, rc = _boolop(ins, oc, 2)
    if dtype == "f32":
        wr, yes, no = oc.writer(ins.dsts[0], "f32"), np.float32(1.0), np.float32(0.0)
    else:
        wr, yes, no = oc.writer(ins.dsts[0], "u32"), _ALL32, np.uint32(0)

    def run(st, idx):
        r = cmp(ra(st, idx), rb(st, idx))
        if comb is not None:
            r = comb(r, rc(st, idx))
        wr(st, idx, np.where(r, yes, no))
    return quiet(run, ins)


# ---------------------------------------------------------------- selection and float tests

_SEL_TYPES = INT_TYPES | {"f32", "f64", "f16", "bf16", "f16x2", "bf16x2"}


def _value_io(oc, ins, t, ops):
    """Readers of the selected operands and the destination writer, moving raw bits
    for float types and typed integers otherwise (so narrower types extend as PTX does)."""
    if t in FLOAT_TYPES:
        return [bits_reader(oc, o, t) for o in ops], oc.writer(ins.dsts[0], btype(t))
    return [oc.reader(o, t) for o in ops], oc.writer(ins.dsts[0], t)


@semantic("selp")
def build_selp(ins, oc):
    need(ins, oc, 1, 3)
    t = need_type(ins, oc, _SEL_TYPES)
    (ra, rb), wr = _value_io(oc, ins, t, ins.srcs[:2])
    rc = oc.reader(ins.srcs[2], "pred")

    def run(st, idx):
        wr(st, idx, np.where(rc(st, idx), ra(st, idx), rb(st, idx)))
    return quiet(run, ins)


@semantic("slct")
def build_slct(ins, oc):
    need(ins, oc, 1, 3)
    if len(ins.types) != 2 or ins.types[0] not in _SEL_TYPES or ins.types[1] not in ("s32", "f32"):
        raise oc.unsupported(ins, "types (need slct.dtype.s32 or slct.dtype.f32)")
    t, ct = ins.types
    (ra, rb), wr = _value_io(oc, ins, t, ins.srcs[:2])
    rc = oc.reader(ins.srcs[2], ct)
    zero = VALUE[ct].type(0)
    ftz = ins.has("ftz") and ct == "f32"

    def run(st, idx):
        c = rc(st, idx)
        if ftz:
            c = _ftz(np.asarray(c))
        wr(st, idx, np.where(c >= zero, ra(st, idx), rb(st, idx)))
    return quiet(run, ins)


_TESTP = {
    "finite": lambda x, tiny: np.isfinite(x),
    "infinite": lambda x, tiny: np.isinf(x),
    "number": lambda x, tiny: ~np.isnan(x),
    "notanumber": lambda x, tiny: np.isnan(x),
    "normal": lambda x, tiny: np.isfinite(x) & ((np.abs(x) >= tiny) | (x == 0)),  # PTX counts zeros as normal
    "subnormal": lambda x, tiny: (np.abs(x) < tiny) & (x != 0),
}


@semantic("testp")
def build_testp(ins, oc):
    need(ins, oc, 1, 1)
    t = need_type(ins, oc, ("f32", "f64"))
    ops = [m for m in ins.mods if m in _TESTP]
    if len(ops) != 1:
        raise oc.unsupported(ins, "missing or conflicting property")
    fn, tiny = _TESTP[ops[0]], _TINY[VALUE[t]]
    ra = oc.reader(ins.srcs[0], t)
    wr = oc.writer(ins.dsts[0], "pred")

    def run(st, idx):
        wr(st, idx, fn(ra(st, idx), tiny))
    return quiet(run, ins)


@semantic("copysign")
def build_copysign(ins, oc):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, ("f32", "f64"))
    bits = width(t)
    sign = _UINT[bits].type(1 << (bits - 1))
    ra, rb = bits_reader(oc, ins.srcs[0], t), bits_reader(oc, ins.srcs[1], t)
    wr = oc.writer(ins.dsts[0], btype(t))

    def run(st, idx):  # sign of a, magnitude (and payload) of b
        wr(st, idx, (rb(st, idx) & ~sign) | (ra(st, idx) & sign))
    return quiet(run, ins)
