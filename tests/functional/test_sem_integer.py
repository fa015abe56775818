"""Integer, bit, logic, move, compare and select semantics against pure-Python
references: random lanes plus every pairing of edge values (0, ±1, INT_MIN, INT_MAX...)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from tlpsim.errors import UnsupportedPTX

N = 128  # lanes 0..99 hold all pairs of 10 edge values, the rest are random
DECLS = (".reg .b16 %h<16>; .reg .b32 %r<24>; .reg .b64 %rd<16>; .reg .pred %p<8>; "
         ".reg .f32 %f<8>; .reg .f64 %fd<8>;")
UDT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
REG = {16: "%h", 32: "%r", 64: "%rd"}


def U(x, bits):
    return x & ((1 << bits) - 1)


def S(x, bits):
    x = U(x, bits)
    return x - (1 << bits) if x >> (bits - 1) else x


def edges(bits):
    m = 1 << (bits - 1)
    return [U(v, bits) for v in (0, 1, 2, -1, -2, -m, m - 1, -m + 1, m - 2, 0x5A5A5A5A5A5A5A5A)]


def lanes(bits, seed, n=N, which=0):
    """Raw unsigned lane values: the a (which=0) or b (which=1) side of all edge pairs, then random."""
    e = edges(bits)
    pairs = [x for x in e for _ in e] if which == 0 else [y for _ in e for y in e]
    rnd = np.random.default_rng(seed).integers(0, 1 << bits, n - len(pairs), dtype=np.uint64, endpoint=False)
    return [int(v) for v in pairs] + [int(v) for v in rnd]


def arr(vals, bits):
    return np.array([U(v, bits) for v in vals], dtype=UDT[bits])


def out(res, name, bits):
    return [int(v) for v in res.reg(name).astype(np.uint64)[:len(res.reg(name))]]


def go(run_ptx, body, regs, n=N, **kw):
    return run_ptx(body, regs, decls=DECLS, n_threads=n, **kw)


def f32bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


# ---------------------------------------------------------------- add / sub / carry


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_add_sub_all_widths(run_ptx, bits):
    a, b = lanes(bits, 1), lanes(bits, 2, which=1)
    R = REG[bits]
    body = "\n".join(f"{op}.{t}{bits} {R}{k}, {R}1, {R}2;" for k, (op, t) in
                     enumerate([("add", "u"), ("add", "s"), ("sub", "u"), ("sub", "s")], start=3))
    body += f"\nadd.u{bits} {R}7, {R}1, 5;\nsub.s{bits} {R}8, -3, {R}2;"
    res = go(run_ptx, body, {f"{R}1": arr(a, bits), f"{R}2": arr(b, bits)})
    for k, fn in ((3, lambda x, y: x + y), (4, lambda x, y: x + y), (5, lambda x, y: x - y), (6, lambda x, y: x - y)):
        assert out(res, f"{R}{k}", bits) == [U(fn(x, y), bits) for x, y in zip(a, b)]
    assert out(res, f"{R}7", bits) == [U(x + 5, bits) for x in a]
    assert out(res, f"{R}8", bits) == [U(-3 - y, bits) for y in b]


def test_add_sub_sat_s32(run_ptx):
    a, b = lanes(32, 3), lanes(32, 4, which=1)
    res = go(run_ptx, "add.sat.s32 %r3, %r1, %r2;\nsub.sat.s32 %r4, %r1, %r2;", {"%r1": arr(a, 32), "%r2": arr(b, 32)})
    clip = lambda v: min(max(v, -2**31), 2**31 - 1)
    assert out(res, "%r3", 32) == [U(clip(S(x, 32) + S(y, 32)), 32) for x, y in zip(a, b)]
    assert out(res, "%r4", 32) == [U(clip(S(x, 32) - S(y, 32)), 32) for x, y in zip(a, b)]


def _halves(v):
    return v & 0xFFFF, v >> 16


def test_x2_add_sub_min_max_relu(run_ptx):
    a, b = lanes(32, 5), lanes(32, 6, which=1)
    forms = {"add.u16x2": lambda x, y: x + y, "sub.s16x2": lambda x, y: x - y, "min.u16x2": min, "max.u16x2": max,
             "min.s16x2": min, "max.s16x2": max, "max.relu.s16x2": lambda x, y: max(x, y, 0),
             "min.relu.s16x2": lambda x, y: max(min(x, y), 0)}
    body = "\n".join(f"{f} %r{k}, %r1, %r2;" for k, f in enumerate(forms, start=3))
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32)})
    for k, (form, fn) in enumerate(forms.items(), start=3):
        conv = (lambda h: S(h, 16)) if ".s16" in form else (lambda h: h)
        exp = []
        for x, y in zip(a, b):
            lo = U(fn(conv(x & 0xFFFF), conv(y & 0xFFFF)), 16)
            hi = U(fn(conv(x >> 16), conv(y >> 16)), 16)
            exp.append(lo | hi << 16)
        assert out(res, f"%r{k}", 32) == exp, form


def test_carry_chain_64bit_add_sub_from_32bit_parts(run_ptx):
    a, b = lanes(64, 7), lanes(64, 8, which=1)
    regs = {"%r1": arr([x & 0xFFFFFFFF for x in a], 32), "%r2": arr([x >> 32 for x in a], 32),
            "%r3": arr([y & 0xFFFFFFFF for y in b], 32), "%r4": arr([y >> 32 for y in b], 32)}
    body = """add.cc.u32 %r5, %r1, %r3;
addc.u32 %r6, %r2, %r4;
sub.cc.u32 %r7, %r1, %r3;
subc.u32 %r8, %r2, %r4;
add.cc.s32 %r9, %r1, %r3;
addc.cc.s32 %r10, %r2, %r4;
addc.u32 %r11, 0, 0;
sub.cc.u32 %r12, %r1, %r3;
subc.cc.u32 %r13, %r2, %r4;
subc.u32 %r14, 0, 0;"""
    res = go(run_ptx, body, regs)
    lo = lambda name: out(res, name, 32)
    assert [x | y << 32 for x, y in zip(lo("%r5"), lo("%r6"))] == [U(x + y, 64) for x, y in zip(a, b)]
    assert [x | y << 32 for x, y in zip(lo("%r7"), lo("%r8"))] == [U(x - y, 64) for x, y in zip(a, b)]
    assert [x | y << 32 for x, y in zip(lo("%r9"), lo("%r10"))] == [U(x + y, 64) for x, y in zip(a, b)]
    assert lo("%r11") == [(x + y) >> 64 for x, y in zip(a, b)]  # carry out of the 64-bit add
    assert lo("%r14") == [U(-(x < y), 32) for x, y in zip(a, b)]  # 0 - borrow


def test_carry_chain_128bit_with_u64_limbs(run_ptx):
    a = [(x << 64) | y for x, y in zip(lanes(64, 9), lanes(64, 10, which=1))]
    b = [(x << 64) | y for x, y in zip(lanes(64, 11, which=1), lanes(64, 12))]
    m = (1 << 64) - 1
    regs = {"%rd1": arr([x & m for x in a], 64), "%rd2": arr([x >> 64 for x in a], 64),
            "%rd3": arr([y & m for y in b], 64), "%rd4": arr([y >> 64 for y in b], 64)}
    body = """add.cc.u64 %rd5, %rd1, %rd3;
addc.cc.s64 %rd6, %rd2, %rd4;
addc.u64 %rd7, 0, 0;
sub.cc.s64 %rd8, %rd1, %rd3;
subc.u64 %rd9, %rd2, %rd4;"""
    res = go(run_ptx, body, regs)
    r = lambda name: out(res, name, 64)
    assert [x | y << 64 | z << 128 for x, y, z in zip(r("%rd5"), r("%rd6"), r("%rd7"))] == [x + y for x, y in zip(a, b)]
    assert [x | y << 64 for x, y in zip(r("%rd8"), r("%rd9"))] == [U(x - y, 128) for x, y in zip(a, b)]


# ---------------------------------------------------------------- multiply


@pytest.mark.parametrize("bits", [16, 32, 64])
@pytest.mark.parametrize("sign", ["u", "s"])
def test_mul_lo_hi_wide(run_ptx, bits, sign):
    a, b = lanes(bits, 13), lanes(bits, 14, which=1)
    R = REG[bits]
    conv = (lambda v: S(v, bits)) if sign == "s" else (lambda v: v)
    body = f"mul.lo.{sign}{bits} {R}3, {R}1, {R}2;\nmul.hi.{sign}{bits} {R}4, {R}1, {R}2;"
    body += f"\nmad.lo.{sign}{bits} {R}5, {R}1, {R}2, {R}1;\nmad.hi.{sign}{bits} {R}6, {R}1, {R}2, {R}2;"
    if bits < 64:
        W = REG[2 * bits]
        body += f"\nmul.wide.{sign}{bits} {W}7, {R}1, {R}2;\nmad.wide.{sign}{bits} {W}8, {R}1, {R}2, {W}9;"
    c = lanes(2 * bits, 15) if bits < 64 else None
    regs = {f"{R}1": arr(a, bits), f"{R}2": arr(b, bits)}
    if c:
        regs[f"{REG[2 * bits]}9"] = arr(c, 2 * bits)
    res = go(run_ptx, body, regs)
    p = [conv(x) * conv(y) for x, y in zip(a, b)]
    assert out(res, f"{R}3", bits) == [U(v, bits) for v in p]
    assert out(res, f"{R}4", bits) == [U(v >> bits, bits) for v in p]
    assert out(res, f"{R}5", bits) == [U(v + x, bits) for v, x in zip(p, a)]
    assert out(res, f"{R}6", bits) == [U((v >> bits) + y, bits) for v, y in zip(p, b)]
    if bits < 64:
        assert out(res, f"{REG[2 * bits]}7", 2 * bits) == [U(v, 2 * bits) for v in p]
        assert out(res, f"{REG[2 * bits]}8", 2 * bits) == [U(v + z, 2 * bits) for v, z in zip(p, c)]


def test_mad_hi_sat_s32_and_immediates(run_ptx):
    a, b, c = lanes(32, 16), lanes(32, 17, which=1), lanes(32, 18)
    body = "mad.hi.sat.s32 %r4, %r1, %r2, %r3;\nmul.wide.s32 %rd1, %r1, -4;\nmul.hi.u32 %r5, %r1, 0x80000000;"
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32), "%r3": arr(c, 32)})
    exp = [U(min(max(((S(x, 32) * S(y, 32)) >> 32) + S(z, 32), -2**31), 2**31 - 1), 32) for x, y, z in zip(a, b, c)]
    assert out(res, "%r4", 32) == exp
    assert out(res, "%rd1", 64) == [U(S(x, 32) * -4, 64) for x in a]
    assert out(res, "%r5", 32) == [(x * 2**31) >> 32 for x in a]


def test_extended_precision_multiply_with_madc(run_ptx):
    """The PTX manual's [r3,r2,r1,r0] = [r5,r4] * [r7,r6] sequence."""
    x, y = lanes(64, 19), lanes(64, 20, which=1)
    m = 0xFFFFFFFF
    regs = {"%r4": arr([v & m for v in x], 32), "%r5": arr([v >> 32 for v in x], 32),
            "%r6": arr([v & m for v in y], 32), "%r7": arr([v >> 32 for v in y], 32)}
    body = """mul.lo.u32 %r0, %r4, %r6;
mul.hi.u32 %r1, %r4, %r6;
mad.lo.cc.u32 %r1, %r5, %r6, %r1;
madc.hi.u32 %r2, %r5, %r6, 0;
mad.lo.cc.u32 %r1, %r4, %r7, %r1;
madc.hi.cc.u32 %r2, %r4, %r7, %r2;
addc.u32 %r3, 0, 0;
mad.lo.cc.u32 %r2, %r5, %r7, %r2;
madc.hi.u32 %r3, %r5, %r7, %r3;"""
    res = go(run_ptx, body, regs)
    got = [sum(out(res, f"%r{k}", 32)[i] << (32 * k) for k in range(4)) for i in range(N)]
    assert got == [u * v for u, v in zip(x, y)]


def test_mul24_mad24(run_ptx):
    a, b, c = lanes(32, 21), lanes(32, 22, which=1), lanes(32, 23)
    body = """mul24.lo.u32 %r4, %r1, %r2;
mul24.hi.u32 %r5, %r1, %r2;
mul24.lo.s32 %r6, %r1, %r2;
mul24.hi.s32 %r7, %r1, %r2;
mad24.lo.u32 %r8, %r1, %r2, %r3;
mad24.hi.s32 %r9, %r1, %r2, %r3;
mad24.hi.sat.s32 %r10, %r1, %r2, %r3;"""
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32), "%r3": arr(c, 32)})
    pu = [(x & 0xFFFFFF) * (y & 0xFFFFFF) for x, y in zip(a, b)]
    ps = [S(x, 24) * S(y, 24) for x, y in zip(a, b)]
    assert out(res, "%r4", 32) == [U(p, 32) for p in pu]
    assert out(res, "%r5", 32) == [U(p >> 16, 32) for p in pu]
    assert out(res, "%r6", 32) == [U(p, 32) for p in ps]
    assert out(res, "%r7", 32) == [U(p >> 16, 32) for p in ps]
    assert out(res, "%r8", 32) == [U(p + z, 32) for p, z in zip(pu, c)]
    assert out(res, "%r9", 32) == [U((p >> 16) + z, 32) for p, z in zip(ps, c)]
    sat = [U(min(max(S(p >> 16, 32) + S(z, 32), -2**31), 2**31 - 1), 32) for p, z in zip(ps, c)]
    assert out(res, "%r10", 32) == sat


# ---------------------------------------------------------------- sad, div, rem, abs, neg, min, max


def _tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_div_rem_sad(run_ptx, bits):
    a, b, c = lanes(bits, 24), lanes(bits, 25, which=1), lanes(bits, 26)
    R = REG[bits]
    body = "\n".join(f"{op}.{s}{bits} {R}{k}, {R}1, {R}2;" for k, (op, s) in
                     enumerate([("div", "u"), ("div", "s"), ("rem", "u"), ("rem", "s")], start=4))
    body += f"\nsad.u{bits} {R}8, {R}1, {R}2, {R}3;\nsad.s{bits} {R}9, {R}1, {R}2, {R}3;\ndiv.s{bits} {R}10, {R}1, -1;"
    with np.errstate(all="raise"):
        res = go(run_ptx, body, {f"{R}1": arr(a, bits), f"{R}2": arr(b, bits), f"{R}3": arr(c, bits)})
    ones = (1 << bits) - 1
    assert out(res, f"{R}4", bits) == [x // y if y else ones for x, y in zip(a, b)]
    assert out(res, f"{R}5", bits) == [U(_tdiv(S(x, bits), S(y, bits)), bits) if y else ones for x, y in zip(a, b)]
    assert out(res, f"{R}6", bits) == [x % y if y else x for x, y in zip(a, b)]
    srem = [U(S(x, bits) - _tdiv(S(x, bits), S(y, bits)) * S(y, bits), bits) if y else x for x, y in zip(a, b)]
    assert out(res, f"{R}7", bits) == srem
    assert out(res, f"{R}8", bits) == [U(z + abs(x - y), bits) for x, y, z in zip(a, b, c)]
    assert out(res, f"{R}9", bits) == [U(z + abs(S(x, bits) - S(y, bits)), bits) for x, y, z in zip(a, b, c)]
    assert out(res, f"{R}10", bits) == [U(-S(x, bits), bits) for x in a]  # INT_MIN / -1 wraps to INT_MIN


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_abs_neg_min_max(run_ptx, bits):
    a, b = lanes(bits, 27), lanes(bits, 28, which=1)
    R = REG[bits]
    body = f"""abs.s{bits} {R}3, {R}1;
neg.s{bits} {R}4, {R}1;
min.u{bits} {R}5, {R}1, {R}2;
max.u{bits} {R}6, {R}1, {R}2;
min.s{bits} {R}7, {R}1, {R}2;
max.s{bits} {R}8, {R}1, {R}2;"""
    if bits == 32:
        body += "\nmax.relu.s32 %r9, %r1, %r2;\nmin.relu.s32 %r10, %r1, %r2;"
    res = go(run_ptx, body, {f"{R}1": arr(a, bits), f"{R}2": arr(b, bits)})
    s = lambda v: S(v, bits)
    assert out(res, f"{R}3", bits) == [U(abs(s(x)), bits) for x in a]
    assert out(res, f"{R}4", bits) == [U(-s(x), bits) for x in a]
    assert out(res, f"{R}5", bits) == [min(x, y) for x, y in zip(a, b)]
    assert out(res, f"{R}6", bits) == [max(x, y) for x, y in zip(a, b)]
    assert out(res, f"{R}7", bits) == [U(min(s(x), s(y)), bits) for x, y in zip(a, b)]
    assert out(res, f"{R}8", bits) == [U(max(s(x), s(y)), bits) for x, y in zip(a, b)]
    if bits == 32:
        assert out(res, "%r9", 32) == [max(s(x), s(y), 0) for x, y in zip(a, b)]
        assert out(res, "%r10", 32) == [max(min(s(x), s(y)), 0) for x, y in zip(a, b)]


# ---------------------------------------------------------------- logic and shifts


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_bitwise_logic(run_ptx, bits):
    a, b = lanes(bits, 29), lanes(bits, 30, which=1)
    R = REG[bits]
    body = f"""and.b{bits} {R}3, {R}1, {R}2;
or.b{bits} {R}4, {R}1, {R}2;
xor.b{bits} {R}5, {R}1, {R}2;
not.b{bits} {R}6, {R}1;
cnot.b{bits} {R}7, {R}1;
and.b{bits} {R}8, {R}1, 0xF0F0;"""
    res = go(run_ptx, body, {f"{R}1": arr(a, bits), f"{R}2": arr(b, bits)})
    assert out(res, f"{R}3", bits) == [x & y for x, y in zip(a, b)]
    assert out(res, f"{R}4", bits) == [x | y for x, y in zip(a, b)]
    assert out(res, f"{R}5", bits) == [x ^ y for x, y in zip(a, b)]
    assert out(res, f"{R}6", bits) == [U(~x, bits) for x in a]
    assert out(res, f"{R}7", bits) == [int(x == 0) for x in a]
    assert out(res, f"{R}8", bits) == [x & 0xF0F0 for x in a]


def test_predicate_logic(run_ptx):
    p = np.array([i & 1 for i in range(32)], dtype=bool)
    q = np.array([(i >> 1) & 1 for i in range(32)], dtype=bool)
    body = """and.pred %p3, %p1, %p2;
or.pred %p4, %p1, !%p2;
xor.pred %p5, %p1, %p2;
not.pred %p6, %p1;
mov.pred %p7, %p2;"""
    res = run_ptx(body, {"%p1": p, "%p2": q}, decls=DECLS)
    assert (res.reg("%p3") == (p & q)).all() and (res.reg("%p4") == (p | ~q)).all()
    assert (res.reg("%p5") == (p ^ q)).all() and (res.reg("%p6") == ~p).all() and (res.reg("%p7") == q).all()


def _lop3_ref(lut, a, b, c, bits):
    r = 0
    for i in range(bits):
        k = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1)
        r |= ((lut >> k) & 1) << i
    return r


def test_lop3_all_luts_expression():
    from tlpsim.functional.semantics.integer_bits import lop3_function

    rng = np.random.default_rng(31)
    a, b, c = (rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    a[:8] = [0, 0, 0, 0, 0xFFFFFFFF] * 1 + [0xFFFFFFFF] * 3
    b[:8] = [0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF]
    c[:8] = [0, 0xFFFFFFFF] * 4
    for lut in range(256):
        got = np.broadcast_to(lop3_function(lut, np.dtype(np.uint32))(a, b, c), a.shape).astype(np.uint32)
        exp = [_lop3_ref(lut, int(x), int(y), int(z), 32) for x, y, z in zip(a[:12], b[:12], c[:12])]
        assert [int(v) for v in got[:12]] == exp, hex(lut)
        # the canonical identity: F(0xF0, 0xCC, 0xAA) == immLut
        tab = lop3_function(lut, np.dtype(np.uint32))(np.uint32(0xF0), np.uint32(0xCC), np.uint32(0xAA))
        assert int(tab) & 0xFF == lut


def test_lop3_ptx_forms(run_ptx):
    a, b, c = lanes(32, 32), lanes(32, 33, which=1), lanes(32, 34)
    luts = [0x96, 0xE8, 0xCA, 0x80, 0xFE, 0x40, 0x1A, 0x00, 0xFF, 0x3C]
    body = "\n".join(f"lop3.b32 %r{k}, %r1, %r2, %r3, {hex(l)};" for k, l in enumerate(luts, start=4))
    body += "\nlop3.or.b32 %r20|%p1, %r1, %r2, %r3, 0x80, %p2;\nlop3.and.b32 _|%p3, %r1, %r2, %r3, 0x3f, !%p2;"
    p2 = np.array([i % 3 == 0 for i in range(N)])
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32), "%r3": arr(c, 32), "%p2": p2})
    for k, l in enumerate(luts, start=4):
        assert out(res, f"%r{k}", 32) == [_lop3_ref(l, x, y, z, 32) for x, y, z in zip(a, b, c)], hex(l)
    d = [x & y & z for x, y, z in zip(a, b, c)]
    assert out(res, "%r20", 32) == d
    assert list(res.reg("%p1")) == [v != 0 or q for v, q in zip(d, p2)]
    assert list(res.reg("%p3")) == [_lop3_ref(0x3F, x, y, z, 32) != 0 and not q for x, y, z, q in zip(a, b, c, p2)]


SHIFTS = [0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 1000, 2**31, 2**32 - 1]


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_shl_shr_clamping(run_ptx, bits):
    a = lanes(bits, 35)
    amt = [SHIFTS[i % len(SHIFTS)] for i in range(N)]
    R = REG[bits]
    body = f"""shl.b{bits} {R}3, {R}1, %r20;
shr.u{bits} {R}4, {R}1, %r20;
shr.s{bits} {R}5, {R}1, %r20;
shr.b{bits} {R}6, {R}1, %r20;
shl.b{bits} {R}7, {R}1, 3;
shr.s{bits} {R}8, {R}1, 100;
shr.u{bits} {R}9, {R}1, {bits - 1};"""
    regs = {f"{R}1": arr(a, bits), "%r20": arr(amt, 32)}
    if bits == 32:
        body = body.replace("%r20", "%r21")
        regs = {"%r1": arr(a, 32), "%r21": arr(amt, 32)}
    res = go(run_ptx, body, regs)
    k = [min(s, bits) for s in amt]
    assert out(res, f"{R}3", bits) == [U(x << s, bits) for x, s in zip(a, k)]
    assert out(res, f"{R}4", bits) == [x >> s for x, s in zip(a, k)]
    assert out(res, f"{R}5", bits) == [U(S(x, bits) >> s, bits) for x, s in zip(a, k)]
    assert out(res, f"{R}6", bits) == [x >> s for x, s in zip(a, k)]
    assert out(res, f"{R}7", bits) == [U(x << 3, bits) for x in a]
    assert out(res, f"{R}8", bits) == [U(S(x, bits) >> 100, bits) for x in a]
    assert out(res, f"{R}9", bits) == [x >> (bits - 1) for x in a]


def test_shf_funnel_shifts(run_ptx):
    a, b = lanes(32, 36), lanes(32, 37, which=1)
    c = [[0, 1, 5, 31, 32, 33, 40, 63, 64, 2**32 - 1][i % 10] for i in range(N)]
    body = """shf.l.clamp.b32 %r4, %r1, %r2, %r3;
shf.l.wrap.b32 %r5, %r1, %r2, %r3;
shf.r.clamp.b32 %r6, %r1, %r2, %r3;
shf.r.wrap.b32 %r7, %r1, %r2, %r3;
shf.l.wrap.b32 %r8, %r1, %r1, 8;"""
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32), "%r3": arr(c, 32)})
    v = [y << 32 | x for x, y in zip(a, b)]
    assert out(res, "%r4", 32) == [U((w << min(s, 32)) >> 32, 32) for w, s in zip(v, c)]
    assert out(res, "%r5", 32) == [U((w << (s & 31)) >> 32, 32) for w, s in zip(v, c)]
    assert out(res, "%r6", 32) == [U(w >> min(s, 32), 32) for w, s in zip(v, c)]
    assert out(res, "%r7", 32) == [U(w >> (s & 31), 32) for w, s in zip(v, c)]
    assert out(res, "%r8", 32) == [U(x << 8 | x >> 24, 32) for x in a]  # rotate


# ---------------------------------------------------------------- mov


def test_mov_scalar_special_symbol(run_ptx):
    a = lanes(32, 38)
    body = """mov.u32 %r2, %r1;
mov.u32 %r3, %tid.x;
mov.u32 %r4, %laneid;
mov.u32 %r5, %ntid.x;
mov.b32 %r6, -7;
mov.f32 %f1, 0f7FC00123;
mov.b32 %r7, %f1;
mov.f64 %fd1, 0d8000000000000000;
mov.u64 %rd1, gbuf;
mov.u64 %rd2, gbuf+12;
mov.u16 %h1, %r1;
mov.pred %p1, 1;
mov.u32 %r8, WARP_SZ;"""
    res = run_ptx(body, {"%r1": arr(a[:64], 32)}, decls=DECLS, n_threads=64, module_decls=".global .b32 gbuf[8];\n")
    assert out(res, "%r2", 32) == a[:64]
    assert out(res, "%r3", 32) == list(range(64)) and out(res, "%r4", 32) == [i % 32 for i in range(64)]
    assert set(out(res, "%r5", 32)) == {64} and set(out(res, "%r6", 32)) == {U(-7, 32)}
    assert set(out(res, "%r7", 32)) == {0x7FC00123}  # NaN payload kept
    assert set(out(res, "%fd1", 64)) == {1 << 63}
    base = out(res, "%rd1", 64)[0]
    assert base != 0 and set(out(res, "%rd2", 64)) == {base + 12}
    assert out(res, "%h1", 16) == [x & 0xFFFF for x in a[:64]]
    assert res.reg("%p1").all() and set(out(res, "%r8", 32)) == {32}


def test_mov_pack_unpack(run_ptx):
    x, y = lanes(32, 39), lanes(32, 40, which=1)
    w = lanes(64, 41)
    body = """mov.b64 %rd1, {%r1, %r2};
mov.b64 {%r3, %r4}, %rd5;
mov.b32 {%h1, %h2}, %r1;
mov.b32 %r5, {%h3, %h4};
mov.b64 {%h5, _, %h6, %h7}, %rd5;
mov.b64 %rd2, {%h3, %h4, %h3, %h4};
mov.b32 %r6, {%h3, 0x1234};"""
    h3, h4 = [v & 0xFFFF for v in x], [v >> 16 for v in y]
    regs = {"%r1": arr(x, 32), "%r2": arr(y, 32), "%rd5": arr(w, 64), "%h3": arr(h3, 16), "%h4": arr(h4, 16)}
    res = go(run_ptx, body, regs)
    assert out(res, "%rd1", 64) == [lo | hi << 32 for lo, hi in zip(x, y)]
    assert out(res, "%r3", 32) == [v & 0xFFFFFFFF for v in w] and out(res, "%r4", 32) == [v >> 32 for v in w]
    assert out(res, "%h1", 16) == [v & 0xFFFF for v in x] and out(res, "%h2", 16) == [v >> 16 for v in x]
    assert out(res, "%r5", 32) == [lo | hi << 16 for lo, hi in zip(h3, h4)]
    assert out(res, "%h5", 16) == [v & 0xFFFF for v in w]
    assert out(res, "%h6", 16) == [(v >> 32) & 0xFFFF for v in w] and out(res, "%h7", 16) == [v >> 48 for v in w]
    assert out(res, "%rd2", 64) == [(lo | hi << 16) * 0x100000001 for lo, hi in zip(h3, h4)]
    assert out(res, "%r6", 32) == [lo | 0x1234 << 16 for lo in h3]


# ---------------------------------------------------------------- bit manipulation


def _msb(v):
    return v.bit_length() - 1


@pytest.mark.parametrize("bits", [32, 64])
def test_popc_clz_brev_bfind(run_ptx, bits):
    a = lanes(bits, 42)
    a[100:100 + bits] = [1 << i for i in range(bits)][:N - 100]
    R = REG[bits]
    body = f"""popc.b{bits} %r10, {R}1;
clz.b{bits} %r11, {R}1;
brev.b{bits} {R}2, {R}1;
bfind.u{bits} %r12, {R}1;
bfind.s{bits} %r13, {R}1;
bfind.shiftamt.u{bits} %r14, {R}1;
bfind.shiftamt.s{bits} %r15, {R}1;"""
    res = go(run_ptx, body, {f"{R}1": arr(a, bits)})
    assert out(res, "%r10", 32) == [x.bit_count() for x in a]
    assert out(res, "%r11", 32) == [bits - x.bit_length() for x in a]
    assert out(res, f"{R}2", bits) == [int(f"{x:0{bits}b}"[::-1], 2) for x in a]
    none = 0xFFFFFFFF
    assert out(res, "%r12", 32) == [_msb(x) if x else none for x in a]
    sv = [x if S(x, bits) >= 0 else U(~x, bits) for x in a]
    assert out(res, "%r13", 32) == [_msb(v) if v else none for v in sv]
    assert out(res, "%r14", 32) == [bits - 1 - _msb(x) if x else none for x in a]
    assert out(res, "%r15", 32) == [bits - 1 - _msb(v) if v else none for v in sv]


def _bfe_ref(a, pos, ln, bits, signed):
    pos, ln = pos & 0xFF, ln & 0xFF
    sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, bits - 1)) & 1
    return sum(((a >> (pos + i)) & 1 if (i < ln and pos + i < bits) else sbit) << i for i in range(bits))


def _bfi_ref(a, b, pos, ln, bits):
    pos, ln = pos & 0xFF, ln & 0xFF
    f = b
    for i in range(ln):
        if pos + i >= bits:
            break
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
    return f


CONST_FIELDS = [(0, 8), (4, 0), (28, 8), (60, 8), (64, 3), (300, 5), (1, 255), (0, 64)]


@pytest.mark.parametrize("bits", [32, 64])
def test_bfe_bfi(run_ptx, bits):
    a, b = lanes(bits, 43), lanes(bits, 44, which=1)
    grid = [0, 1, 4, 16, 31, 32, 33, 63, 64, 65, 255, 256, 260]
    rng = np.random.default_rng(45)
    pos = [int(v) for v in rng.choice(grid, N)]
    ln = [int(v) for v in rng.choice(grid, N)]
    R = REG[bits]
    body = f"""bfe.u{bits} {R}3, {R}1, %r20, %r21;
bfe.s{bits} {R}4, {R}1, %r20, %r21;
bfi.b{bits} {R}5, {R}1, {R}2, %r20, %r21;
bfe.u{bits} {R}6, {R}1, 8, 4;
""" + "\n".join(f"bfe.s{bits} {R}{7 + i}, {R}1, {p}, {n};" for i, (p, n) in enumerate(CONST_FIELDS))
    regs = {f"{R}1": arr(a, bits), f"{R}2": arr(b, bits), "%r20": arr(pos, 32), "%r21": arr(ln, 32)}
    res = go(run_ptx, body, regs)
    assert out(res, f"{R}3", bits) == [_bfe_ref(x, p, n, bits, False) for x, p, n in zip(a, pos, ln)]
    assert out(res, f"{R}4", bits) == [_bfe_ref(x, p, n, bits, True) for x, p, n in zip(a, pos, ln)]
    assert out(res, f"{R}5", bits) == [_bfi_ref(x, y, p, n, bits) for x, y, p, n in zip(a, b, pos, ln)]
    assert out(res, f"{R}6", bits) == [(x >> 8) & 0xF for x in a]
    for i, (p, n) in enumerate(CONST_FIELDS):
        assert out(res, f"{R}{7 + i}", bits) == [_bfe_ref(x, p, n, bits, True) for x in a], (p, n)


def _fns_ref(mask, base, offset):
    if offset == 0:
        return base if (mask >> base) & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


def test_fns(run_ptx):
    rng = np.random.default_rng(46)
    mask = [0xAAAAAAAA] * 4 + [int(v) for v in rng.integers(0, 2**32, N - 4, dtype=np.uint64)]
    mask[10:14] = [0, 0xFFFFFFFF, 1, 0x80000000]
    base = [3, 3, 2, 2] + [int(v) for v in rng.integers(0, 32, N - 4)]
    off = [1, -1, 1, -1] + [int(v) for v in rng.integers(-34, 35, N - 4)]
    res = go(run_ptx, "fns.b32 %r4, %r1, %r2, %r3;", {"%r1": arr(mask, 32), "%r2": arr(base, 32),
                                                       "%r3": arr(off, 32)})
    got = out(res, "%r4", 32)
    assert got[:4] == [3, 3, 3, 1]
    assert got == [_fns_ref(m, b, o) for m, b, o in zip(mask, base, off)]


def _bmsk_ref(a, b, clamp):
    a1, b1 = a & 31, b & 31
    mask0, s = U(~0 << a1, 32), a1 + b1
    mask1 = U(~0 << s, 32)
    pos_ovf = clamp and a >= 32
    if pos_ovf:
        mask0 = 0
    if s >= 32 or pos_ovf or (clamp and b >= 32):
        mask1 = 0
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    return mask0 & U(~mask1, 32)


def _szext_ref(a, b, clamp, signed):
    b1 = b & 31
    big = b >= 32 and clamp
    mask = 0 if big else U(~0 << b1, 32)
    sbit = 0 if (b1 == 0 or big or not signed) else (a >> ((b1 - 1) & 31)) & 1
    return (a & U(~mask, 32)) | (mask if sbit else 0)


def test_bmsk_szext(run_ptx):
    rng = np.random.default_rng(47)
    a = [int(v) for v in rng.integers(0, 2**32, N, dtype=np.uint64)]
    grid = [0, 1, 2, 5, 16, 31, 32, 33, 40, 64, 2**31]
    x = [grid[i % len(grid)] for i in range(N)]
    y = [grid[(i // len(grid)) % len(grid)] for i in range(N)]
    body = """bmsk.clamp.b32 %r4, %r2, %r3;
bmsk.wrap.b32 %r5, %r2, %r3;
szext.clamp.s32 %r6, %r1, %r3;
szext.wrap.s32 %r7, %r1, %r3;
szext.clamp.u32 %r8, %r1, %r3;
szext.wrap.u32 %r9, %r1, %r3;
bmsk.wrap.b32 %r10, 1, 2;"""
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(x, 32), "%r3": arr(y, 32)})
    assert out(res, "%r4", 32) == [_bmsk_ref(p, q, True) for p, q in zip(x, y)]
    assert out(res, "%r5", 32) == [_bmsk_ref(p, q, False) for p, q in zip(x, y)]
    for k, clamp, signed in ((6, True, True), (7, False, True), (8, True, False), (9, False, False)):
        assert out(res, f"%r{k}", 32) == [_szext_ref(v, q, clamp, signed) for v, q in zip(a, y)], k
    assert set(out(res, "%r10", 32)) == {6}


_PRMT_SEL = {
    "f4e": lambda c, k: c + k, "b4e": lambda c, k: (c + 8 - k) & 7, "rc8": lambda c, k: c,
    "ecl": lambda c, k: max(k, c), "ecr": lambda c, k: min(k, c), "rc16": lambda c, k: (c & 1) * 2 + (k & 1),
}
_PRMT_DOC = {  # the PTX manual's table: d.b3 d.b2 d.b1 d.b0 for c[1:0] = 0..3
    "f4e": ["3210", "4321", "5432", "6543"], "b4e": ["5670", "6701", "7012", "0123"],
    "rc8": ["0000", "1111", "2222", "3333"], "ecl": ["3210", "3211", "3222", "3333"],
    "ecr": ["0000", "1110", "2210", "3210"], "rc16": ["1010", "3232", "1010", "3232"],
}


def _prmt_ref(a, b, c, mode):
    src = b << 32 | a
    r = 0
    for k in range(4):
        sel = (c >> (4 * k)) & 0xF if mode is None else _PRMT_SEL[mode](c & 3, k)
        byte = (src >> (8 * (sel & 7))) & 0xFF
        if mode is None and sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        r |= byte << (8 * k)
    return r


def test_prmt_mode_table_matches_manual():
    for mode, rows in _PRMT_DOC.items():
        for c, row in enumerate(rows):
            assert "".join(str(_PRMT_SEL[mode](c, k)) for k in (3, 2, 1, 0)) == row


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
def test_prmt_all_modes(run_ptx, mode):
    a, b = lanes(32, 48), lanes(32, 49, which=1)
    rng = np.random.default_rng(50)
    c = [int(v) for v in rng.integers(0, 2**32, N, dtype=np.uint64)]
    c[:4] = [0, 1, 2, 3]
    m = "" if mode is None else "." + mode
    imms = [0x3210, 0x5140, 0x7654, 0x89AB, 0xFEDC, 0x8888, 1, 2, 3] if mode is None else [0, 1, 2, 3, 7]
    body = f"prmt.b32{m} %r4, %r1, %r2, %r3;\n"
    body += "\n".join(f"prmt.b32{m} %r{5 + i}, %r1, %r2, {hex(v)};" for i, v in enumerate(imms))
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32), "%r3": arr(c, 32)})
    assert out(res, "%r4", 32) == [_prmt_ref(x, y, z, mode) for x, y, z in zip(a, b, c)]
    for i, v in enumerate(imms):
        assert out(res, f"%r{5 + i}", 32) == [_prmt_ref(x, y, v, mode) for x, y in zip(a, b)], hex(v)


def test_dp4a_dp2a(run_ptx):
    a, b, c = lanes(32, 51), lanes(32, 52, which=1), lanes(32, 53)
    combos = [("u32", "u32"), ("u32", "s32"), ("s32", "u32"), ("s32", "s32")]
    body, k = [], 4
    for at, bt in combos:
        body.append(f"dp4a.{at}.{bt} %r{k}, %r1, %r2, %r3;")
        body.append(f"dp2a.lo.{at}.{bt} %r{k + 1}, %r1, %r2, %r3;")
        body.append(f"dp2a.hi.{at}.{bt} %r{k + 2}, %r1, %r2, %r3;")
        k += 3
    res = go(run_ptx, "\n".join(body), {"%r1": arr(a, 32), "%r2": arr(b, 32), "%r3": arr(c, 32)})

    def el(v, n, signed):
        w = 32 // n
        return [S((v >> (w * i)) & ((1 << w) - 1), w) if signed else (v >> (w * i)) & ((1 << w) - 1)
                for i in range(n)]
    k = 4
    for at, bt in combos:
        sa, sb = at == "s32", bt == "s32"
        cc = (lambda z: z) if not (sa or sb) else (lambda z: S(z, 32))
        d4 = [U(cc(z) + sum(p * q for p, q in zip(el(x, 4, sa), el(y, 4, sb))), 32) for x, y, z in zip(a, b, c)]
        lo = [U(cc(z) + sum(p * q for p, q in zip(el(x, 2, sa), el(y, 4, sb)[:2])), 32) for x, y, z in zip(a, b, c)]
        hi = [U(cc(z) + sum(p * q for p, q in zip(el(x, 2, sa), el(y, 4, sb)[2:])), 32) for x, y, z in zip(a, b, c)]
        assert (out(res, f"%r{k}", 32), out(res, f"%r{k + 1}", 32), out(res, f"%r{k + 2}", 32)) == (d4, lo, hi)
        k += 3


# ---------------------------------------------------------------- compare and select

INT_CMPS = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
            "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
UNS_CMPS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_setp_integer(run_ptx, bits):
    a, b = lanes(bits, 54), lanes(bits, 55, which=1)
    R = REG[bits]
    forms = [(op, s) for op in INT_CMPS for s in "us"] + [(op, "u") for op in UNS_CMPS] + [("eq", "b"), ("ne", "b")]
    for chunk in range(0, len(forms), 7):
        part = forms[chunk:chunk + 7]
        body = "\n".join(f"setp.{op}.{s}{bits} %p{k + 1}, {R}1, {R}2;" for k, (op, s) in enumerate(part))
        res = go(run_ptx, body, {f"{R}1": arr(a, bits), f"{R}2": arr(b, bits)})
        for k, (op, s) in enumerate(part):
            fn = INT_CMPS[UNS_CMPS.get(op, op)]
            conv = (lambda v: S(v, bits)) if s == "s" and op not in UNS_CMPS else (lambda v: v)
            assert list(res.reg(f"%p{k + 1}")) == [fn(conv(x), conv(y)) for x, y in zip(a, b)], (op, s)


FSPECIAL = [0.0, -0.0, 1.0, -1.0, 1.5, float("inf"), float("-inf"), float("nan"), 1e-40, -1e-40, 3.4e38]
FLOAT_CMPS = {
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y and not (math.isnan(x) or math.isnan(y)),
    "lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
    "num": lambda x, y: not (math.isnan(x) or math.isnan(y)), "nan": lambda x, y: math.isnan(x) or math.isnan(y),
}


def _unordered(f):
    return lambda x, y: f(x, y) or math.isnan(x) or math.isnan(y)


for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    FLOAT_CMPS[_op + "u"] = _unordered((lambda x, y: x != y) if _op == "ne" else FLOAT_CMPS[_op])


def _float_pairs():
    xs = [x for x in FSPECIAL for _ in FSPECIAL]
    ys = [y for _ in FSPECIAL for y in FSPECIAL]
    return (xs * 2)[:N], (ys * 2)[:N]


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_setp_float_ordered_unordered(run_ptx, t):
    x, y = _float_pairs()
    n = len(x)
    dt, R = (np.float32, "%f") if t == "f32" else (np.float64, "%fd")
    ops = list(FLOAT_CMPS)
    for chunk in range(0, len(ops), 7):
        part = ops[chunk:chunk + 7]
        body = "\n".join(f"setp.{op}.{t} %p{k + 1}, {R}1, {R}2;" for k, op in enumerate(part))
        res = run_ptx(body, {f"{R}1": np.array(x, dt), f"{R}2": np.array(y, dt)}, decls=DECLS, n_threads=n)
        for k, op in enumerate(part):
            xv, yv = [float(v) for v in np.array(x, dt)], [float(v) for v in np.array(y, dt)]
            assert list(res.reg(f"%p{k + 1}")) == [FLOAT_CMPS[op](p, q) for p, q in zip(xv, yv)], op


def test_setp_combining_and_complement(run_ptx):
    a, b = lanes(32, 56), lanes(32, 57, which=1)
    c = np.array([i % 3 != 0 for i in range(N)])
    body = """setp.lt.and.s32 %p1|%p2, %r1, %r2, %p3;
setp.ge.or.u32 %p4|%p5, %r1, %r2, !%p3;
setp.ne.xor.s32 %p6, %r1, %r2, %p3;
setp.eq.u32 _|%p7, %r1, %r2;"""
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32), "%p3": c})
    t1 = [S(x, 32) < S(y, 32) for x, y in zip(a, b)]
    assert list(res.reg("%p1")) == [t and q for t, q in zip(t1, c)]
    assert list(res.reg("%p2")) == [(not t) and q for t, q in zip(t1, c)]
    t2 = [x >= y for x, y in zip(a, b)]
    assert list(res.reg("%p4")) == [t or not q for t, q in zip(t2, c)]
    assert list(res.reg("%p5")) == [(not t) or not q for t, q in zip(t2, c)]
    assert list(res.reg("%p6")) == [(x != y) != q for x, y, q in zip(a, b, c)]
    assert list(res.reg("%p7")) == [x != y for x, y in zip(a, b)]


def test_setp_ftz_and_half_forms(run_ptx):
    x, y = _float_pairs()
    n = len(x)
    with np.errstate(over="ignore"):  # 3.4e38 becomes inf in f16
        h1 = np.array(x, np.float16).view(np.uint16)
        h2 = np.array(y, np.float16).view(np.uint16)
    packed1 = (h1.astype(np.uint32) | (h2.astype(np.uint32) << 16))
    packed2 = (h2.astype(np.uint32) | (h1.astype(np.uint32) << 16))
    bf1 = (np.array(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    bf2 = (np.array(y, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    body = """setp.eq.ftz.f32 %p1, %f1, %f2;
setp.ltu.f16 %p2, %h1, %h2;
setp.gt.f16x2 %p3|%p4, %r1, %r2;
setp.neu.bf16 %p5, %h3, %h4;
setp.lt.ftz.f32 %p6, %f1, 0f00000000;"""
    regs = {"%f1": np.array(x, np.float32), "%f2": np.array(y, np.float32), "%h1": h1, "%h2": h2,
            "%r1": packed1, "%r2": packed2, "%h3": bf1, "%h4": bf2}
    res = run_ptx(body, regs, decls=DECLS, n_threads=n)
    ftz = lambda v: 0.0 if abs(v) < 2.0 ** -126 else v
    fx, fy = [float(v) for v in np.array(x, np.float32)], [float(v) for v in np.array(y, np.float32)]
    assert list(res.reg("%p1")) == [ftz(p) == ftz(q) for p, q in zip(fx, fy)]
    assert list(res.reg("%p6")) == [ftz(p) < 0 for p in fx]
    hx, hy = [float(v) for v in h1.view(np.float16)], [float(v) for v in h2.view(np.float16)]
    assert list(res.reg("%p2")) == [FLOAT_CMPS["ltu"](p, q) for p, q in zip(hx, hy)]
    assert list(res.reg("%p3")) == [p > q for p, q in zip(hx, hy)]
    assert list(res.reg("%p4")) == [q > p for p, q in zip(hx, hy)]
    bx = [float(v) for v in (bf1.astype(np.uint32) << 16).view(np.float32)]
    by = [float(v) for v in (bf2.astype(np.uint32) << 16).view(np.float32)]
    assert list(res.reg("%p5")) == [FLOAT_CMPS["neu"](p, q) for p, q in zip(bx, by)]


def test_set_results(run_ptx):
    a, b = lanes(32, 58), lanes(32, 59, which=1)
    c = np.array([i % 2 == 0 for i in range(N)])
    body = """set.lt.u32.s32 %r3, %r1, %r2;
set.hi.s32.u32 %r4, %r1, %r2;
set.ne.f32.s32 %f1, %r1, %r2;
set.lt.and.f32.s32 %f2, %r1, %r2, !%p1;
set.gtu.u32.f32 %r5, %f3, %f4;"""
    fx = np.array([FSPECIAL[i % len(FSPECIAL)] for i in range(N)], np.float32)
    fy = np.array([FSPECIAL[(i // 3) % len(FSPECIAL)] for i in range(N)], np.float32)
    res = go(run_ptx, body, {"%r1": arr(a, 32), "%r2": arr(b, 32), "%p1": c, "%f3": fx, "%f4": fy})
    lt = [S(x, 32) < S(y, 32) for x, y in zip(a, b)]
    assert out(res, "%r3", 32) == [0xFFFFFFFF if t else 0 for t in lt]
    assert out(res, "%r4", 32) == [0xFFFFFFFF if x > y else 0 for x, y in zip(a, b)]
    one = f32bits(1.0)
    assert out(res, "%f1", 32) == [one if x != y else 0 for x, y in zip(a, b)]
    assert out(res, "%f2", 32) == [one if t and not q else 0 for t, q in zip(lt, c)]
    gtu = [FLOAT_CMPS["gtu"](float(p), float(q)) for p, q in zip(fx, fy)]
    assert out(res, "%r5", 32) == [0xFFFFFFFF if t else 0 for t in gtu]


def test_selp_slct(run_ptx):
    a, b = lanes(32, 60), lanes(32, 61, which=1)
    w, v = lanes(64, 62), lanes(64, 63, which=1)
    p = np.array([i % 3 == 1 for i in range(N)])
    cf = [FSPECIAL[i % len(FSPECIAL)] for i in range(N)]
    body = """selp.b32 %r3, %r1, %r2, %p1;
selp.s32 %r4, %r1, 7, !%p1;
selp.u64 %rd3, %rd1, %rd2, %p1;
selp.f32 %f2, 0f7FC00001, 0fBF800000, %p1;
slct.u32.s32 %r5, %r1, %r2, %r2;
slct.b64.f32 %rd4, %rd1, %rd2, %f1;
slct.ftz.s32.f32 %r6, %r1, %r2, %f1;
selp.f64 %fd1, %fd2, 0d3FF0000000000000, %p1;"""
    regs = {"%r1": arr(a, 32), "%r2": arr(b, 32), "%rd1": arr(w, 64), "%rd2": arr(v, 64), "%p1": p,
            "%f1": np.array(cf, np.float32), "%fd2": arr(w, 64)}
    res = go(run_ptx, body, regs)
    assert out(res, "%r3", 32) == [x if q else y for x, y, q in zip(a, b, p)]
    assert out(res, "%r4", 32) == [7 if q else x for x, q in zip(a, p)]
    assert out(res, "%rd3", 64) == [x if q else y for x, y, q in zip(w, v, p)]
    assert out(res, "%f2", 32) == [0x7FC00001 if q else 0xBF800000 for q in p]
    assert out(res, "%r5", 32) == [x if S(y, 32) >= 0 else y for x, y in zip(a, b)]
    fc = [float(z) for z in np.array(cf, np.float32)]
    assert out(res, "%rd4", 64) == [x if z >= 0 else y for x, y, z in zip(w, v, fc)]
    ftz = [0.0 if abs(z) < 2.0 ** -126 else z for z in fc]
    assert out(res, "%r6", 32) == [x if z >= 0 else y for x, y, z in zip(a, b, ftz)]
    assert out(res, "%fd1", 64) == [x if q else f64bits(1.0) for x, q in zip(w, p)]


def test_testp_copysign(run_ptx):
    vals = FSPECIAL + [1.2e-38, 2.0 ** -126, -(2.0 ** -149), 5e-324, 2.2250738585072014e-308]
    vals = (vals * 3)[:32]
    n = len(vals)
    props = ["finite", "infinite", "number", "notanumber", "normal", "subnormal"]
    for t, dt, R, tiny in (("f32", np.float32, "%f", 2.0 ** -126), ("f64", np.float64, "%fd", 2.0 ** -1022)):
        body = "\n".join(f"testp.{p}.{t} %p{k + 1}, {R}1;" for k, p in enumerate(props))
        body += f"\ncopysign.{t} {R}3, {R}1, {R}2;"
        x = np.array(vals, dt)
        y = np.array(vals[::-1], dt)
        res = run_ptx(body, {f"{R}1": x, f"{R}2": y}, decls=DECLS, n_threads=n)
        xv = [float(v) for v in x]
        ref = {"finite": math.isfinite, "infinite": math.isinf, "number": lambda v: not math.isnan(v),
               "notanumber": math.isnan, "normal": lambda v, tiny=tiny: math.isfinite(v) and (abs(v) >= tiny or v == 0),
               "subnormal": lambda v, tiny=tiny: v != 0 and abs(v) < tiny}
        for k, prop in enumerate(props):
            assert list(res.reg(f"%p{k + 1}")) == [ref[prop](v) for v in xv], (t, prop)
        bits = 32 if t == "f32" else 64
        sign = 1 << (bits - 1)
        xb, yb = [int(v) for v in x.view(UDT[bits])], [int(v) for v in y.view(UDT[bits])]
        assert out(res, f"{R}3", bits) == [(q & ~sign) | (p & sign) for p, q in zip(xb, yb)]


# ---------------------------------------------------------------- partial execution and unsupported forms


def test_partial_idx_leaves_other_lanes_untouched(run_ptx):
    a, b = lanes(32, 64), lanes(32, 65, which=1)
    even = np.arange(0, N, 2)
    body = """add.u32 %r3, %r1, %r2;
add.cc.u32 %r4, %r1, %r2;
addc.u32 %r5, 0, 0;
setp.lt.u32 %p1|%p2, %r1, %r2;
mov.b64 %rd1, {%r1, %r2};
mov.b32 {%h1, %h2}, %r1;
prmt.b32 %r6, %r1, %r2, 0x0123;
selp.b32 %r7, 1, 2, %p1;
bfe.s32 %r8, %r1, 4, 8;
div.u32 %r9, %r1, %r2;
lop3.b32 %r10, %r1, %r2, %r1, 0x96;"""
    init = {f"%r{k}": np.full(N, 0xDEADBEEF, np.uint32) for k in range(3, 11)}
    init.update({"%r1": arr(a, 32), "%r2": arr(b, 32), "%rd1": np.full(N, 7, np.uint64),
                 "%h1": np.full(N, 9, np.uint16), "%p2": np.ones(N, bool)})
    res = go(run_ptx, body, init, idx=even)
    odd = np.arange(1, N, 2)
    for k in range(3, 11):
        assert (res.reg(f"%r{k}")[odd] == 0xDEADBEEF).all(), k
    assert (res.reg("%rd1")[odd] == 7).all() and (res.reg("%h1")[odd] == 9).all() and res.reg("%p2")[odd].all()
    assert (res.state.carry[odd] == 0).all()
    ev = list(even)
    assert out(res, "%r3", 32)[::2] == [U(a[i] + b[i], 32) for i in ev]
    assert out(res, "%r5", 32)[::2] == [(a[i] + b[i]) >> 32 for i in ev]
    assert list(res.reg("%p2")[even]) == [a[i] >= b[i] for i in ev]
    assert out(res, "%r9", 32)[::2] == [a[i] // b[i] if b[i] else 0xFFFFFFFF for i in ev]


@pytest.mark.parametrize("line", [
    "mul.wide.u64 %rd1, %rd2, %rd3;",
    "add.sat.u32 %r1, %r2, %r3;",
    "setp.ltu.s32 %p1, %r1, %r2;",
    "setp.lo.f32 %p1, %f1, %f2;",
    "max.relu.u32 %r1, %r2, %r3;",
    "mad.hi.sat.u32 %r1, %r2, %r3, %r4;",
    "lop3.b32 %r1, %r2, %r3, %r4, %r5;",
    "mov.b64 {%r1, %r2}, {%r3, %r4};",
    "shf.l.b32 %r1, %r2, %r3, %r4;",
    "bmsk.b32 %r1, %r2, %r3;",
])
def test_unsupported_forms_raise(run_ptx, line):
    with pytest.raises(UnsupportedPTX):
        run_ptx(line, {}, decls=DECLS)


def test_scalar_only_operands_do_not_warn(run_ptx):
    body = """add.u32 %r1, 0xFFFFFFFF, 1;
sub.u32 %r2, 0, 1;
mul.hi.u64 %rd1, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF;
div.s32 %r3, 0x80000000, -1;
rem.u32 %r4, 5, 0;
bfe.s32 %r5, 0x80, 0, 8;
mad.lo.cc.u32 %r6, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF;
addc.u32 %r7, 0, 0;"""
    with np.errstate(all="raise"):
        res = run_ptx(body, {}, decls=DECLS)
    assert set(out(res, "%r1", 32)) == {0} and set(out(res, "%r2", 32)) == {0xFFFFFFFF}
    assert set(out(res, "%rd1", 64)) == {((2**64 - 1) ** 2) >> 64}
    assert set(out(res, "%r3", 32)) == {0x80000000} and set(out(res, "%r4", 32)) == {5}
    assert set(out(res, "%r5", 32)) == {0xFFFFFF80}
    assert set(out(res, "%r6", 32)) == {U(0xFFFFFFFF * 0xFFFFFFFF + 0xFFFFFFFF, 32)}
    assert set(out(res, "%r7", 32)) == {(U(0xFFFFFFFF * 0xFFFFFFFF, 32) + 0xFFFFFFFF) >> 32}


def test_float_forms_of_shared_opcodes_are_dispatched(run_ptx, monkeypatch):
    from tlpsim.functional.semantics import integer

    calls = []

    def fake(ins, oc):
        calls.append(ins.opcode)
        return lambda st, idx: None
    for base in ("add", "mul", "max", "neg"):
        monkeypatch.setitem(integer.FLOAT_BUILDERS, base, fake)
    body = "add.f32 %f1, %f2, %f3;\nmul.rn.f64 %fd1, %fd2, %fd3;\nmax.f16x2 %r1, %r2, %r3;\nneg.f32 %f4, %f5;"
    body += "\nadd.s32 %r4, %r5, %r6;\nmax.s16x2 %r7, %r8, %r9;"
    run_ptx(body, {}, decls=DECLS)
    assert calls == ["add.f32", "mul.rn.f64", "max.f16x2", "neg.f32"]


def test_empty_lane_set(run_ptx):
    body = """add.cc.u32 %r1, %r2, %r3;
madc.hi.cc.u32 %r1, %r2, %r3, %r4;
mul.hi.s64 %rd1, %rd2, %rd3;
div.s32 %r1, %r2, %r3;
add.s16x2 %r1, %r2, 1;
prmt.b32 %r1, %r2, %r3, %r4;
prmt.b32.ecl %r1, %r2, %r3, 1;
brev.b64 %rd1, %rd2;
clz.b64 %r1, %rd2;
bfind.s64 %r1, %rd2;
bfe.s64 %rd1, %rd2, %r3, %r4;
fns.b32 %r1, %r2, %r3, %r4;
dp4a.s32.u32 %r1, %r2, %r3, %r4;
setp.gt.f16x2 %p1|%p2, %r1, %r2;
mov.b64 {%r1, %r2}, %rd1;
mov.b64 %rd1, {%r1, %r2};
selp.f32 %f1, %f2, 0f3F800000, %p1;
testp.subnormal.f64 %p1, %fd1;"""
    res = go(run_ptx, body, {"%r2": np.full(N, 5, np.uint32)}, idx=np.array([], dtype=np.int64))
    assert (res.reg("%r1") == 0).all() and (res.reg("%rd1") == 0).all()
