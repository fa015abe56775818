"""cvt / cvt.pack semantics against exact Python references (int arithmetic and Fraction)."""

from __future__ import annotations

import math
from fractions import Fraction as Q

import numpy as np
import pytest

from fpref import FMT, rnd

from tlpsim.errors import UnsupportedPTX
from tlpsim.functional.state import VALUE

INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64")
MODES = ("rn", "rz", "rm", "rp")
REG = {"bf16": ".b16", "tf32": ".b32", "f16x2": ".b32", "bf16x2": ".b32"}
rng = np.random.default_rng(2024)


def fround(x: float, fmt: str, mode: str) -> float:
    if math.isnan(x) or math.isinf(x):
        return x
    return rnd(Q(x), fmt, mode, math.copysign(1, x))


def bf16_bits(v: float) -> int:
    return int(np.float32(v).view(np.uint32)) >> 16


def bf16_val(bits) -> np.ndarray:
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def as_float(bits, t):
    """Raw result bits of type t as float64 values."""
    if t == "bf16":
        return bf16_val(bits)
    if t == "tf32":
        return np.asarray(bits, np.uint32).view(np.float32).astype(np.float64)
    return np.asarray(bits).view(VALUE[t]).astype(np.float64)


def encode(vals, t):
    """Python numbers -> register contents of PTX type t (bf16: from exactly representable values)."""
    if t == "bf16":
        return np.array([bf16_bits(v) for v in vals], np.uint16)
    if t in INTS:
        bits = VALUE[t].itemsize * 8
        return np.array([int(v) & ((1 << bits) - 1) for v in vals], dtype=f"u{VALUE[t].itemsize}").view(VALUE[t])
    return np.array(vals, dtype=VALUE[t])


def cvt(run_ptx, opcode, srcs, src_type, dst_type):
    n = len(srcs[0])
    pad = max(32, -(-n // 32) * 32)
    decls = [f".reg {REG.get(dst_type, '.' + dst_type)} %d;"]
    regs = {}
    for i, s in enumerate(srcs):
        decls.append(f".reg {REG.get(src_type, '.' + src_type)} %s{i};")
        a = np.asarray(s)
        regs[f"%s{i}"] = np.concatenate([a, np.repeat(a[:1], pad - n)])
    ops = ", ".join(["%d"] + [f"%s{i}" for i in range(len(srcs))])
    res = run_ptx(f"{opcode} {ops};", regs, decls="\n".join(decls), n_threads=pad)
    return res.reg("%d")[:n]


def same(got, want) -> bool:
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def rng_of(t):
    b = VALUE[t].itemsize * 8
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if t[0] == "s" else (0, (1 << b) - 1)


EDGE_INTS = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536,
             2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**53 + 1, 2**62 + 2**38 + 1, 2**63 - 1,
             -2**63, 2**63 + 2**39 + 1, 2**64 - 1, 2**24 + 1, 2**40 + 2**16, 2**40 + 2**16 + 1, -(2**53 + 3)]


def int_values(t, n=40):
    lo, hi = rng_of(t)
    v = [x for x in EDGE_INTS if lo <= x <= hi]
    v += [int(x) for x in rng.integers(lo, hi, n, dtype=np.int64 if t != "u64" else np.uint64, endpoint=True)]
    return v


# ---------------------------------------------------------------- integer <-> integer


@pytest.mark.parametrize("at", INTS)
def test_int_to_int(run_ptx, at):
    vals = int_values(at)
    src = encode(vals, at)
    for dt in INTS:
        lo, hi = rng_of(dt)
        bits = VALUE[dt].itemsize * 8
        wrap = [((v & ((1 << bits) - 1)) ^ (1 << (bits - 1))) - (1 << (bits - 1)) if dt[0] == "s"
                else v & ((1 << bits) - 1) for v in vals]
        got = cvt(run_ptx, f"cvt.{dt}.{at}", [src], at, dt).view(VALUE[dt])
        assert [int(g) for g in got] == wrap, (dt, at)
        lo_a, hi_a = rng_of(at)
        if lo_a < lo or hi_a > hi:  # .sat only where saturation is possible
            got = cvt(run_ptx, f"cvt.sat.{dt}.{at}", [src], at, dt).view(VALUE[dt])
            assert [int(g) for g in got] == [min(max(v, lo), hi) for v in vals], (dt, at)


# ---------------------------------------------------------------- float -> integer

F2I = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, 1e-40, -1e-40, 254.5, 255.5, 256.0, -0.9,
       65535.5, 2147483520.0, 2.0**31, -2.0**31, -2.0**31 - 1, 2.0**32, 2.0**63, -2.0**63, 2.0**64, 1e30, -1e30,
       3.75, -3.75, 1e-310, np.inf, -np.inf, np.nan]
IRND = {"rni": lambda q: round(q), "rzi": lambda q: math.trunc(q), "rmi": math.floor, "rpi": math.ceil}


@pytest.mark.parametrize("at", ["f16", "bf16", "f32", "f64"])
def test_float_to_int(run_ptx, at):
    vals = np.array(F2I + list(rng.normal(0, 1e3, 30)), np.float64)
    with np.errstate(over="ignore"):
        vals = as_float(encode(vals, at), at) if at != "bf16" else bf16_val(encode(vals, at))
    src = encode(vals, at)
    for dt in INTS:
        lo, hi = rng_of(dt)
        bits = VALUE[dt].itemsize * 8
        nan = 0 if (at != "f64" and bits < 64) else (lo if dt[0] == "s" else 1 << (bits - 1))
        for mode, fn in IRND.items():
            for ftz in (("", ".ftz") if at == "f32" else ("",)):
                got = cvt(run_ptx, f"cvt.{mode}{ftz}.{dt}.{at}", [src], at, dt).view(VALUE[dt])
                want = []
                for x in vals:
                    if math.isnan(x):
                        want.append(nan)
                    elif math.isinf(x):
                        want.append(hi if x > 0 else lo)
                    else:
                        if ftz and abs(x) < 2.0 ** -126:
                            x = 0.0
                        want.append(min(max(fn(Q(x)), lo), hi))
                assert [int(g) for g in got] == want, (mode, ftz, dt, at)


# ---------------------------------------------------------------- integer -> float


@pytest.mark.parametrize("at", INTS)
def test_int_to_float(run_ptx, at):
    vals = int_values(at, 30)
    src = encode(vals, at)
    for dt in ("f16", "bf16", "f32", "f64"):
        for mode in MODES:
            got = as_float(cvt(run_ptx, f"cvt.{mode}.{dt}.{at}", [src], at, dt), dt)
            want = [rnd(Q(v), dt, mode) for v in vals]
            bad = [(v, g, w) for v, g, w in zip(vals, got, want) if not same(g, w)]
            assert not bad, (mode, dt, at, bad[:4])
    got = as_float(cvt(run_ptx, f"cvt.rn.sat.f32.{at}", [src], at, "f32"), "f32")
    assert list(got) == [min(max(float(v), 0.0), 1.0) for v in vals]


# ---------------------------------------------------------------- float -> float


def float_values(at, n=150):
    p = FMT[at][0]
    m = rng.integers(1, 1 << p, n).astype(np.float64)
    e = np.concatenate([rng.integers(-40, 40, n // 2), rng.integers(-160, -120, n // 4),
                        rng.integers(-30, 20, n // 8), rng.integers(100, 130, n - n // 2 - n // 4 - n // 8)])
    v = np.ldexp(m, e - p + 1) * np.where(rng.random(n) < 0.5, -1, 1)
    ties = [1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -8, 1 + 2.0 ** -8 + 2.0 ** -40, 1 + 2.0 ** -11 + 2.0 ** -40, 65520.0, 65519.0, 2.0 ** -25, 2.0 ** -24 * 1.5,
            3.4028235e38, 2.0 ** 128 - 2.0 ** 103, 1e-45, 2.0 ** -150, 2.0 ** -149 * 1.5, 2.0 ** -133 * 2.5]
    v = np.concatenate([v, ties, [-x for x in ties], [0.0, -0.0, np.inf, -np.inf, np.nan]])
    with np.errstate(over="ignore"):
        return as_float(encode(v, at), at) if at != "bf16" else bf16_val([bf16_bits(x) for x in v.astype(np.float32)])


@pytest.mark.parametrize("dt,at", [("f32", "f64"), ("f16", "f64"), ("bf16", "f64"), ("f16", "f32"),
                                   ("bf16", "f32"), ("bf16", "f16"), ("f16", "bf16")])
def test_narrowing_float_conversions(run_ptx, dt, at):
    vals = float_values(at)
    src = encode(vals, at) if at != "bf16" else np.array([bf16_bits(v) for v in vals], np.uint16)
    for mode in MODES:
        got = as_float(cvt(run_ptx, f"cvt.{mode}.{dt}.{at}", [src], at, dt), dt)
        bad = [(x, g, fround(x, dt, mode)) for x, g in zip(vals, got) if not same(g, fround(x, dt, mode))]
        assert not bad, (mode, bad[:4])
    if "f32" in (dt, at):  # .ftz flushes f32 inputs and results
        got = as_float(cvt(run_ptx, f"cvt.rn.ftz.{dt}.{at}", [src], at, dt), dt)
        for x, g in zip(vals, got):
            if at == "f32" and 0 < abs(x) < 2.0 ** -126:
                assert same(g, math.copysign(0.0, x))
            if dt == "f32" and 0 < abs(fround(x, "f32", "rn")) < 2.0 ** -126:
                assert same(g, math.copysign(0.0, x))


def test_widening_same_type_and_sat(run_ptx):
    for at, dt in (("f16", "f32"), ("f16", "f64"), ("bf16", "f32"), ("bf16", "f64"), ("f32", "f64")):
        vals = float_values(at, 60)
        src = encode(vals, at) if at != "bf16" else np.array([bf16_bits(v) for v in vals], np.uint16)
        got = as_float(cvt(run_ptx, f"cvt.{dt}.{at}", [src], at, dt), dt)
        assert all(same(g, x) for g, x in zip(got, vals)), (at, dt)
    b = np.array([0x0001, 0x8040, 0x3F80], np.uint16)  # bf16 subnormals are f32 subnormals
    got = cvt(run_ptx, "cvt.ftz.f32.bf16", [b], "bf16", "f32").view(np.float32)
    assert [same(g, w) for g, w in zip(got, [0.0, -0.0, 1.0])] == [True] * 3
    sub = np.array([1e-40, -1e-40, 2.5, -0.0], np.float32)
    got = cvt(run_ptx, "cvt.ftz.f64.f32", [sub], "f32", "f64").view(np.float64)
    assert [same(g, w) for g, w in zip(got, [0.0, -0.0, 2.5, -0.0])] == [True] * 4
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 1e-40, np.inf, np.nan, -0.0, 8388609.5], np.float64)
    for t in ("f32", "f64", "f16"):
        with np.errstate(over="ignore"):
            xs = x.astype(VALUE[t])
        for mode, fn in (("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil)):
            got = cvt(run_ptx, f"cvt.{mode}.{t}.{t}", [xs], t, t).view(VALUE[t])
            assert all(same(g, w) for g, w in zip(got, fn(xs))), (t, mode, got)
    got = cvt(run_ptx, "cvt.rpi.ftz.f32.f32", [x.astype(np.float32)], "f32", "f32").view(np.float32)
    assert same(got[6], 0.0)
    b = np.array([bf16_bits(v) for v in (2.5, -1.5, 0.3, 300.0)], np.uint16)
    got = bf16_val(cvt(run_ptx, "cvt.rni.bf16.bf16", [b], "bf16", "bf16"))
    assert list(got) == [2.0, -2.0, 0.0, 300.0]
    y = np.array([-2.0, -0.0, 0.25, 1.0, 7.0, np.nan, np.inf, -np.inf], np.float32)
    got = cvt(run_ptx, "cvt.sat.f32.f32", [y], "f32", "f32").view(np.float32)
    assert [same(g, w) for g, w in zip(got, [0.0, 0.0, 0.25, 1.0, 1.0, 0.0, 1.0, 0.0])] == [True] * 8
    got = cvt(run_ptx, "cvt.rn.sat.f16.f64", [y.astype(np.float64)], "f64", "f16").view(np.float16)
    assert [same(g, w) for g, w in zip(got, [0.0, 0.0, 0.25, 1.0, 1.0, 0.0, 1.0, 0.0])] == [True] * 8


# ---------------------------------------------------------------- packed, relu/satfinite, tf32, cvt.pack


def test_packed_relu_satfinite_tf32(run_ptx):
    a = np.array([1.0, -2.0, 70000.0, np.nan, 1 + 2.0 ** -11 + 2.0 ** -20, -np.inf], np.float32)
    b = np.array([0.5, 3.0, -1e6, 1.0, -(2.0 ** -30), 2.0 ** -25], np.float32)
    for mode in ("rn", "rz"):
        for mods in ("", ".relu", ".satfinite", ".relu.satfinite"):
            got = cvt(run_ptx, f"cvt.{mode}{mods}.f16x2.f32", [a, b], "f32", "f16x2")
            for half, src in ((got >> 16, a), (got & 0xFFFF, b)):
                val = half.astype(np.uint16).view(np.float16).astype(np.float64)
                for x, g in zip(src, val):
                    w = fround(float(x), "f16", mode)
                    if "satfinite" in mods and math.isinf(w):
                        w = math.copysign(65504.0, w)
                    if "relu" in mods and (w < 0 or math.isnan(w)):
                        w = 0.0 if w < 0 else math.nan
                    assert same(g, w), (mode, mods, x, g, w)
            if "relu" in mods:
                assert (int(got[3]) >> 16) == 0x7FFF  # canonical NaN
            got = cvt(run_ptx, f"cvt.{mode}{mods}.bf16x2.f32", [a, b], "f32", "bf16x2")
            for half, src in ((got >> 16, a), (got & 0xFFFF, b)):
                for x, g in zip(src, bf16_val(half.astype(np.uint16))):
                    w = fround(float(x), "bf16", mode)
                    if "satfinite" in mods and math.isinf(w):
                        w = math.copysign(float((2 - 2.0 ** -7) * 2.0 ** 127), w)
                    if "relu" in mods and (w < 0 or math.isnan(w)):
                        w = 0.0 if w < 0 else math.nan
                    assert same(g, w), (mode, mods, x, g, w)
    x = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, -(1 + 2.0 ** -11), 3.4028235e38, 1.3, np.nan], np.float32)
    for mode in ("rna", "rn", "rz"):
        got = cvt(run_ptx, f"cvt.{mode}.tf32.f32", [x], "f32", "tf32")
        assert np.all(got[:5] & 0x1FFF == 0)
        for v, g in zip(x[:5], as_float(got[:5], "tf32")):
            assert same(g, fround(float(v), "tf32", mode)), (mode, v, g)
    got = as_float(cvt(run_ptx, "cvt.rna.satfinite.tf32.f32", [x], "f32", "tf32"), "tf32")
    assert got[3] == float((2 - 2.0 ** -10) * 2.0 ** 127)


def test_cvt_pack(run_ptx):
    ai, bi = [70000, -5, 300, -200, 17], [-70000, 40000, 7, 127, -1]
    a, b = np.array(ai, np.int32), np.array(bi, np.int32)
    got = cvt(run_ptx, "cvt.pack.sat.s16.s32", [a, b], "s32", "u32")
    want = [((min(max(x, -32768), 32767) & 0xFFFF) << 16) | (min(max(y, -32768), 32767) & 0xFFFF) for x, y in zip(ai, bi)]
    assert list(got) == want
    pad = [np.concatenate([x, np.zeros(27, x.dtype)]) for x in (a, b, np.full(5, 0xABCD1234, np.uint32))]
    res = run_ptx("cvt.pack.sat.u8.s32.b32 %d, %s0, %s1, %s2;", dict(zip(("%s0", "%s1", "%s2"), pad)),
                  decls=".reg .b32 %d; .reg .s32 %s0; .reg .s32 %s1; .reg .b32 %s2;")
    got = res.reg("%d")[:5]
    want = [(0x1234 << 16) | (min(max(x, 0), 255) << 8) | min(max(y, 0), 255) for x, y in zip(ai, bi)]
    assert list(got) == want


@pytest.mark.parametrize("body", [
    "cvt.f32.s32 %f, %r;", "cvt.rn.s32.f32 %r, %f;", "cvt.rni.f64.f32 %e, %f;", "cvt.rn.sat.bf16.f32 %h, %f;",
    "cvt.rs.f16x2.f32 %r, %f, %f, %r;", "cvt.rn.satfinite.e4m3x2.f32 %h, %f, %f;", "cvt.rn.f64.f32 %e, %f;",
    "cvt.rni.s32.s16 %r, %h;", "cvt.f16.f32 %h, %f;", "cvt.rna.f16.f32 %h, %f;",
])
def test_unsupported_forms(run_ptx, body):
    with pytest.raises(UnsupportedPTX):
        run_ptx(body, decls=".reg .f32 %f; .reg .b32 %r; .reg .f64 %e; .reg .b16 %h;")
