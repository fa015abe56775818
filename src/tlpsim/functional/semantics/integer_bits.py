"""Logic (and or xor not cnot lop3), shifts (shl shr shf) and bit manipulation
(popc clz brev bfind bfe bfi fns bmsk szext prmt dp4a dp2a) of the integer family.

Registered on import; `integer` imports this module. Byte-level tricks (prmt, brev,
dp4a) view registers as bytes and assume a little-endian host, as NumPy on x86/ARM is.
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Imm
from tlpsim.functional.semantics import semantic
from tlpsim.functional.semantics.integer import (
    INT_TYPES,
    U64,
    all_ones,
    btype,
    full_reader,
    is_signed,
    need,
    need_type,
    quiet,
    utype,
    width,
)
from tlpsim.functional.state import VALUE

_B3264 = ("b32", "b64", "u32", "u64", "s32", "s64")
_ALL32 = np.uint32(0xFFFFFFFF)


# ---------------------------------------------------------------- logic


_LOGIC = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


@semantic("and", "or", "xor")
def build_logic(ins, oc):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, INT_TYPES | {"pred"})
    rt = t if t == "pred" else btype(t)
    ufunc = _LOGIC[ins.base]
    ra, rb = oc.reader(ins.srcs[0], rt), oc.reader(ins.srcs[1], rt)
    wr = oc.writer(ins.dsts[0], rt)

    def run(st, idx):
        wr(st, idx, ufunc(ra(st, idx), rb(st, idx)))
    return quiet(run, ins)


@semantic("not", "cnot")
def build_not(ins, oc):
    need(ins, oc, 1, 1)
    t = need_type(ins, oc, INT_TYPES | {"pred"})
    rt = t if t == "pred" else btype(t)
    ra = oc.reader(ins.srcs[0], rt)
    wr = oc.writer(ins.dsts[0], rt)
    if ins.base == "cnot":
        if t == "pred":
            raise oc.unsupported(ins, "type .pred")
        dt = VALUE[rt]
        zero = dt.type(0)

        def run_cnot(st, idx):
            wr(st, idx, (ra(st, idx) == zero).astype(dt))
        return quiet(run_cnot, ins)

    def run(st, idx):
        wr(st, idx, ~ra(st, idx))
    return quiet(run, ins)


# lop3: F(a, b, c) from the 8-bit truth table (ta=0xF0, tb=0xCC, tc=0xAA), split on a
# into two functions of (b, c) given as 4-bit tables (bit 2*b+c).
_G2 = {
    0x0: "Z", 0x1: "~(b | c)", 0x2: "(c & ~b)", 0x3: "~b", 0x4: "(b & ~c)", 0x5: "~c", 0x6: "(b ^ c)",
    0x7: "~(b & c)", 0x8: "(b & c)", 0x9: "~(b ^ c)", 0xA: "c", 0xB: "(c | ~b)", 0xC: "b", 0xD: "(b | ~c)",
    0xE: "(b | c)", 0xF: "O",
}


def lop3_expr(lut: int) -> str:
    """A NumPy expression in a, b, c (and the constants Z=0, O=all ones) for immLut."""
    lut &= 0xFF
    f1, f0 = lut >> 4, lut & 0xF
    g1, g0 = _G2[f1], _G2[f0]
    if f1 == f0:
        return g0
    if f0 == 0:
        return "a" if f1 == 0xF else f"(a & {g1})"
    if f1 == 0:
        return "~a" if f0 == 0xF else f"(~a & {g0})"
    if f1 == 0xF:
        return f"(a | {g0})"
    if f0 == 0xF:
        return f"(~a | {g1})"
    if f1 == f0 ^ 0xF:
        return f"(a ^ {g0})"
    return f"({g0} ^ (a & ({g1} ^ {g0})))"


def lop3_function(lut: int, dt: np.dtype):
    env = {"Z": dt.type(0), "O": dt.type(all_ones(dt.itemsize * 8))}
    return eval(f"lambda a, b, c: {lop3_expr(lut)}", env)  # expression built from the table above


@semantic("lop3")
def build_lop3(ins, oc):
    boolop = next((m for m in ("and", "or") if ins.has(m)), None)
    need(ins, oc, 2 if boolop else 1, 5 if boolop else 4)
    t = need_type(ins, oc, ("b32", "b64", "u32", "s32", "u64", "s64"))
    bt = btype(t)
    lut = ins.srcs[3]
    if not isinstance(lut, Imm) or lut.is_float:
        raise oc.unsupported(ins, "non-immediate immLut")
    dt = VALUE[bt]
    fn = lop3_function(int(lut.value), dt)
    ra, rb, rc = (oc.reader(s, bt) for s in ins.srcs[:3])
    wr = oc.writer(ins.dsts[0], bt)
    if boolop:
        rq = oc.reader(ins.srcs[4], "pred")
        wp = oc.writer(ins.dsts[1], "pred")
        comb = np.logical_and if boolop == "and" else np.logical_or
        zero = dt.type(0)

        def run_bool(st, idx):
            d = fn(ra(st, idx), rb(st, idx), rc(st, idx))
            wr(st, idx, d)
            wp(st, idx, comb(d != zero, rq(st, idx)))
        return quiet(run_bool, ins)

    def run(st, idx):
        wr(st, idx, fn(ra(st, idx), rb(st, idx), rc(st, idx)))
    return quiet(run, ins)


# ---------------------------------------------------------------- shifts


@semantic("shl", "shr")
def build_shift(ins, oc):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, INT_TYPES)
    bits = width(t)
    # shl and unsigned/untyped shr work on bits; shr.s fills with the sign (NumPy's >>
    # of a signed dtype, which also gives the sign fill for amounts >= width)
    vt = t if (ins.base == "shr" and is_signed(t)) else utype(t)
    dt = VALUE[vt]
    ufunc = np.left_shift if ins.base == "shl" else np.right_shift
    ra = oc.reader(ins.srcs[0], vt)
    wr = oc.writer(ins.dsts[0], vt)
    amt = ins.srcs[1]
    if isinstance(amt, Imm):  # the common case: a constant shift, clamped to the width
        k = dt.type(min(int(amt.value) & 0xFFFFFFFF, bits))

        def run_const(st, idx):
            wr(st, idx, ufunc(ra(st, idx), k))
        return quiet(run_const, ins)
    rb = oc.reader(amt, "u32")
    limit = np.uint32(bits)

    def run(st, idx):
        wr(st, idx, ufunc(ra(st, idx), np.minimum(rb(st, idx), limit).astype(dt)))
    return quiet(run, ins)


@semantic("shf")
def build_shf(ins, oc):
    need(ins, oc, 1, 3)
    need_type(ins, oc, ("b32", "u32", "s32"))
    left = ins.has("l")
    if left == ins.has("r"):
        raise oc.unsupported(ins, "missing .l/.r")
    clamp = ins.has("clamp")
    if clamp == ins.has("wrap"):
        raise oc.unsupported(ins, "missing .clamp/.wrap")
    ra, rb, rc = (oc.reader(s, "u32") for s in ins.srcs)
    wr = oc.writer(ins.dsts[0], "b32")
    s32, m31, c32 = U64(32), np.uint32(31), np.uint32(32)

    def run(st, idx):
        v = (rb(st, idx).astype(U64) << s32) | ra(st, idx)
        c = rc(st, idx)
        n = (np.minimum(c, c32) if clamp else c & m31).astype(U64)
        wr(st, idx, ((v << n) >> s32 if left else v >> n).astype(np.uint32))
    return quiet(run, ins)


# ---------------------------------------------------------------- counting and bit order


def msb(x, bits: int):
    """Index of the most significant set bit of unsigned `x` (int32; -1 where x == 0).
    frexp is exact for values below 2^53, so 64-bit values are split in halves."""
    if bits <= 32:
        return np.frexp(np.asarray(x, dtype=np.float64))[1] - np.int32(1)
    eh = np.frexp((x >> U64(32)).astype(np.float64))[1]
    el = np.frexp((x & U64(0xFFFFFFFF)).astype(np.float64))[1]
    return np.where(eh > 0, eh + np.int32(31), el - np.int32(1))


@semantic("popc", "clz")
def build_popc_clz(ins, oc):
    need(ins, oc, 1, 1)
    t = need_type(ins, oc, _B3264)
    bits = width(t)
    ra = oc.reader(ins.srcs[0], utype(t))
    wr = oc.writer(ins.dsts[0], "u32")
    if ins.base == "popc":
        def run(st, idx):
            wr(st, idx, np.bitwise_count(ra(st, idx)).astype(np.uint32))
    else:
        top = np.int32(bits - 1)

        def run(st, idx):
            wr(st, idx, (top - msb(ra(st, idx), bits)).astype(np.uint32))
    return quiet(run, ins)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


@semantic("brev")
def build_brev(ins, oc):
    need(ins, oc, 1, 1)
    t = need_type(ins, oc, _B3264)
    u = utype(t)
    dt, nbytes = VALUE[u], width(t) // 8
    ra = full_reader(oc, ins.srcs[0], u)
    wr = oc.writer(ins.dsts[0], u)

    def run(st, idx):
        b = ra(st, idx).view(np.uint8).reshape(-1, nbytes)
        wr(st, idx, _REV8[b[:, ::-1]].view(dt).reshape(-1))
    return run


@semantic("bfind")
def build_bfind(ins, oc):
    need(ins, oc, 1, 1)
    t = need_type(ins, oc, ("u32", "u64", "s32", "s64"))
    bits, u = width(t), utype(t)
    udt = VALUE[u]
    ra = oc.reader(ins.srcs[0], t)
    wr = oc.writer(ins.dsts[0], "u32")
    signed, shiftamt = is_signed(t), ins.has("shiftamt")
    top = np.int32(bits - 1)

    def run(st, idx):
        a = ra(st, idx)
        if signed:
            a = np.where(a < 0, ~a, a)
        m = msb(a.astype(udt), bits)
        if shiftamt:
            m = top - m
        wr(st, idx, np.where(m < 0 if not shiftamt else m > top, _ALL32, m.astype(np.uint32)))
    return quiet(run, ins, risky=True)


# ---------------------------------------------------------------- bit fields


@semantic("bfe")
def build_bfe(ins, oc):
    need(ins, oc, 1, 3)
    t = need_type(ins, oc, ("u32", "u64", "s32", "s64", "b32", "b64"))
    bits, u = width(t), utype(t)
    udt = VALUE[u]
    ra = oc.reader(ins.srcs[0], u)
    rb, rc = oc.reader(ins.srcs[1], "u32"), oc.reader(ins.srcs[2], "u32")
    wr = oc.writer(ins.dsts[0], t)
    signed = is_signed(t)
    w, ff, one, zero = np.uint32(bits), np.uint32(0xFF), udt.type(1), udt.type(0)
    if isinstance(ins.srcs[1], Imm) and isinstance(ins.srcs[2], Imm):  # constant field: a shift and masks
        cpos, cln = int(ins.srcs[1].value) & 0xFF, int(ins.srcs[2].value) & 0xFF
        ck = min(cln, max(bits - cpos, 0))
        sh, cmask, fill = udt.type(min(cpos, bits)), udt.type(all_ones(ck)), udt.type(all_ones(bits) ^ all_ones(ck))
        sidx, sfill = udt.type(min(cpos + cln - 1, bits - 1)), signed and cln > 0

        def run_const(st, idx):
            a = ra(st, idx)
            d = (a >> sh) & cmask
            if sfill:
                d = d | np.where((a >> sidx) & one, fill, zero)
            wr(st, idx, d)
        return quiet(run_const, ins)

    def run(st, idx):
        a = ra(st, idx)
        pos, ln = rb(st, idx) & ff, rc(st, idx) & ff
        posc = np.minimum(pos, w)
        k = np.minimum(ln, w - posc)  # number of bits actually taken from a
        mask = (one << k.astype(udt)) - one
        d = (a >> posc.astype(udt)) & mask
        if signed:
            sidx = np.minimum(pos + ln - np.uint32(1), w - np.uint32(1)).astype(udt)
            sbit = ((a >> sidx) & one) != zero
            d = d | np.where(sbit & (ln != 0), ~mask, zero)
        wr(st, idx, d)
    return quiet(run, ins, risky=True)


@semantic("bfi")
def build_bfi(ins, oc):
    need(ins, oc, 1, 4)
    t = need_type(ins, oc, _B3264)
    bits, u = width(t), utype(t)
    udt = VALUE[u]
    ra, rb = oc.reader(ins.srcs[0], u), oc.reader(ins.srcs[1], u)
    rc, rd = oc.reader(ins.srcs[2], "u32"), oc.reader(ins.srcs[3], "u32")
    wr = oc.writer(ins.dsts[0], u)
    w, ff, one = np.uint32(bits), np.uint32(0xFF), udt.type(1)

    def run(st, idx):
        pos = np.minimum(rc(st, idx) & ff, w).astype(udt)
        k = np.minimum(rd(st, idx) & ff, w).astype(udt)
        mask = ((one << k) - one) << pos
        wr(st, idx, (rb(st, idx) & ~mask) | ((ra(st, idx) << pos) & mask))
    return quiet(run, ins, risky=True)


@semantic("fns")
def build_fns(ins, oc):
    need(ins, oc, 1, 3)
    need_type(ins, oc, ("b32", "u32", "s32"))
    rm, rbase, roff = oc.reader(ins.srcs[0], "u32"), oc.reader(ins.srcs[1], "u32"), oc.reader(ins.srcs[2], "s32")
    wr = oc.writer(ins.dsts[0], "b32")
    one, c31 = np.uint32(1), np.uint32(31)

    def run(st, idx):
        mask, base, off = rm(st, idx), rbase(st, idx), roff(st, idx).astype(np.int64)
        b = base & c31
        up = mask & (_ALL32 << b)  # bits at or above base
        down = mask & (_ALL32 >> (c31 - b))  # bits at or below base
        m = np.where(off > 0, up, down)
        total = np.bitwise_count(m).astype(np.int64)
        k = np.abs(off)
        kk = np.where(off > 0, k, total - k + 1)  # rank counted from bit 0
        lo = np.zeros(np.shape(m), dtype=np.uint32)
        for step in (16, 8, 4, 2, 1):  # largest p with popc(m & (2^p - 1)) < kk
            cand = lo + np.uint32(step)
            cnt = np.bitwise_count(m & ((one << cand) - one))
            lo = np.where(cnt < kk, cand, lo)
        res = np.where((off != 0) & (k <= total), lo, _ALL32)
        res = np.where(off == 0, np.where((mask >> b) & one, b, _ALL32), res)
        wr(st, idx, np.where(base > c31, _ALL32, res))
    return quiet(run, ins, risky=True)


def _clamp_mode(ins, oc) -> bool:
    clamp = ins.has("clamp")
    if clamp == ins.has("wrap"):
        raise oc.unsupported(ins, "missing .clamp/.wrap")
    return clamp


@semantic("bmsk")
def build_bmsk(ins, oc):
    need(ins, oc, 1, 2)
    need_type(ins, oc, ("b32",))
    clamp = _clamp_mode(ins, oc)
    ra, rb = oc.reader(ins.srcs[0], "u32"), oc.reader(ins.srcs[1], "u32")
    wr = oc.writer(ins.dsts[0], "b32")
    m31, c32, zero = np.uint32(31), np.uint32(32), np.uint32(0)

    def run(st, idx):
        a, b = ra(st, idx), rb(st, idx)
        a1, b1 = a & m31, b & m31
        s = a1 + b1
        mask0 = _ALL32 << a1
        kill1 = s >= c32
        if clamp:
            mask0 = np.where(a >= c32, zero, mask0)
            kill1 = kill1 | (a >= c32) | (b >= c32)
        mask1 = np.where(kill1, zero, np.where(b1 == zero, _ALL32, _ALL32 << s))
        wr(st, idx, mask0 & ~mask1)
    return quiet(run, ins, risky=True)


@semantic("szext")
def build_szext(ins, oc):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, ("u32", "s32"))
    clamp = _clamp_mode(ins, oc)
    ra, rb = oc.reader(ins.srcs[0], "u32"), oc.reader(ins.srcs[1], "u32")
    wr = oc.writer(ins.dsts[0], t)
    signed = t == "s32"
    m31, c32, zero, one = np.uint32(31), np.uint32(32), np.uint32(0), np.uint32(1)

    def run(st, idx):
        a, b = ra(st, idx), rb(st, idx)
        b1 = b & m31
        big = (b >= c32) if clamp else np.zeros(np.shape(b), dtype=bool)
        mask = np.where(big, zero, _ALL32 << b1)
        d = a & ~mask
        if signed:
            sbit = ((a >> ((b1 - one) & m31)) & one).astype(bool) & (b1 != zero) & ~big
            d = d | np.where(sbit, mask, zero)
        wr(st, idx, d)
    return quiet(run, ins, risky=True)


# ---------------------------------------------------------------- prmt, dp4a, dp2a

_PRMT_MODES = {  # source byte for destination byte k given c[1:0]
    "f4e": lambda c, k: c + k,
    "b4e": lambda c, k: (c + 8 - k) & 7,
    "rc8": lambda c, k: c,
    "ecl": lambda c, k: max(k, c),
    "ecr": lambda c, k: min(k, c),
    "rc16": lambda c, k: (c & 1) * 2 + (k & 1),
}
_PRMT_TABLES = {m: np.array([[f(c, k) for k in range(4)] for c in range(4)], dtype=np.intp)
                for m, f in _PRMT_MODES.items()}
_NIBBLES = np.array([0, 4, 8, 12], dtype=np.uint32)


@semantic("prmt")
def build_prmt(ins, oc):
    need(ins, oc, 1, 3)
    need_type(ins, oc, ("b32",))
    modes = [m for m in _PRMT_MODES if ins.has(m)]
    if len(modes) > 1:
        raise oc.unsupported(ins, "conflicting modes")
    mode = modes[0] if modes else None
    ra, rb = full_reader(oc, ins.srcs[0], "b32"), full_reader(oc, ins.srcs[1], "b32")
    wr = oc.writer(ins.dsts[0], "b32")
    csrc = ins.srcs[2]

    def source(st, idx):  # (n, 8) bytes of {b, a}
        return np.stack((ra(st, idx), rb(st, idx)), axis=1).view(np.uint8)

    if isinstance(csrc, Imm):
        c = int(csrc.value)
        if mode is None:
            sels = [(c >> (4 * k)) & 0xF for k in range(4)]
        else:
            sels = [int(s) for s in _PRMT_TABLES[mode][c & 3]]
        pick = np.array([s & 7 for s in sels], dtype=np.intp)
        sign = [k for k, s in enumerate(sels) if s & 8]

        def run_const(st, idx):
            out = np.take(source(st, idx), pick, axis=1)
            if sign:
                o8 = out.view(np.int8)
                o8[:, sign] = o8[:, sign] >> np.int8(7)
            wr(st, idx, out.view(np.uint32).reshape(-1))
        return run_const

    rc = oc.reader(csrc, "u32")

    def run(st, idx):
        c = np.broadcast_to(rc(st, idx), idx.shape)
        if mode is None:
            sel = (c[:, None] >> _NIBBLES) & np.uint32(0xF)
            out = np.take_along_axis(source(st, idx), (sel & np.uint32(7)).astype(np.intp), axis=1)
            out = np.where(sel >= np.uint32(8), (out.view(np.int8) >> np.int8(7)).view(np.uint8), out)
        else:
            out = np.take_along_axis(source(st, idx), _PRMT_TABLES[mode][c & np.uint32(3)], axis=1)
        wr(st, idx, np.ascontiguousarray(out).view(np.uint32).reshape(-1))
    return run


@semantic("dp4a", "dp2a")
def build_dp(ins, oc):
    need(ins, oc, 1, 3)
    if len(ins.types) != 2 or any(t not in ("u32", "s32") for t in ins.types):
        raise oc.unsupported(ins, "types (need .atype.btype from .u32/.s32)")
    at, bt = ins.types
    ct = "u32" if at == bt == "u32" else "s32"
    ra, rb = full_reader(oc, ins.srcs[0], "b32"), full_reader(oc, ins.srcs[1], "b32")
    rc = oc.reader(ins.srcs[2], ct)
    wr = oc.writer(ins.dsts[0], ct)
    b8 = np.int8 if bt == "s32" else np.uint8
    if ins.base == "dp4a":
        a_el, a_n, b_sel = (np.int8 if at == "s32" else np.uint8), 4, slice(0, 4)
    else:
        if ins.has("lo") == ins.has("hi"):
            raise oc.unsupported(ins, "missing .lo/.hi")
        a_el, a_n = (np.int16 if at == "s32" else np.uint16), 2
        b_sel = slice(0, 2) if ins.has("lo") else slice(2, 4)

    def run(st, idx):
        va = ra(st, idx).view(a_el).reshape(-1, a_n).astype(np.int64)
        vb = rb(st, idx).view(b8).reshape(-1, 4)[:, b_sel].astype(np.int64)
        s = (va * vb).sum(axis=1) + rc(st, idx)
        wr(st, idx, s.astype(np.uint32))
    return quiet(run, ins, risky=True)
