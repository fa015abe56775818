"""Exact IEEE-754 rounding helpers for the floating-point and conversion semantics.

NumPy only rounds to nearest-even, has no fused multiply-add and no bfloat16, so
everything else is built here from error-free transformations (all vectorised):

* `two_sum` / `two_prod` (Knuth / Dekker): s + e == a + b and p + e == a * b exactly;
* `round_odd`: turns a round-to-nearest result plus its exact error into the result
  rounded to *odd* in binary64. Rounding a round-to-odd value again to any format of
  at most 51 bits gives the correctly rounded result in every mode (Boldo-Melquiond),
  which is how binary32/16/bfloat16 results are obtained from binary64 arithmetic;
* `round_scaled(hi, rsign, E, fmt, mode)`: the general, slow-path rounder. The exact
  value is (hi + delta) * 2**E with hi == RN53(exact / 2**E), delta of sign `rsign`
  (0: exact); hi is a normal binary64 number near 1 so nothing under- or overflows
  before the single final rounding to `fmt` (including subnormal results, overflow
  and ties broken by the sticky sign);
* `fma64` (exact binary64 fused multiply-add, every mode), `mul64`/`div64`/`add64`/
  `sqrt64` for the directed modes of binary64, `to_f32` for binary32 results.

All functions expect arrays (not NumPy scalars) where they inspect bits, and are
called under `np.errstate(all="ignore")` by the instruction closures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F64_ = np.float64
U64_ = np.uint64
INF = np.inf


@dataclass(frozen=True)
class Fmt:
    name: str
    p: int      # significand bits (with the hidden bit)
    emin: int   # exponent of the smallest normal number
    emax: int   # exponent of the largest finite number

    @property
    def max(self) -> float:
        return float(np.ldexp(2.0 - 2.0 ** (1 - self.p), self.emax))

    @property
    def tiny(self) -> float:  # smallest normal
        return float(np.ldexp(1.0, self.emin))


F64 = Fmt("f64", 53, -1022, 1023)
F32 = Fmt("f32", 24, -126, 127)
F16 = Fmt("f16", 11, -14, 15)
BF16 = Fmt("bf16", 8, -126, 127)
TF32 = Fmt("tf32", 11, -126, 127)
FMTS = {"f64": F64, "f32": F32, "f16": F16, "bf16": BF16, "tf32": TF32}

MODES = ("rn", "rz", "rm", "rp")
_SPLIT = F64_(134217729.0)  # 2**27 + 1 (Dekker/Veltkamp splitter for binary64)
_STICKY = F64_(2.0 ** -200)  # a representative of "something tiny" (never reaches a result grid)

# ---------------------------------------------------------------- error-free transformations


def two_sum(a, b):
    """s = RN(a + b) and e with s + e == a + b exactly (unless s overflows)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def two_sum_err(a, b, s):
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def two_prod(a, b):
    """p = RN(a * b) and e with p + e == a * b exactly, provided |a|, |b| < 2**995 and
    the product is at least 2**-968 in magnitude (no overflow in the split, no
    underflow of the error term)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def round_odd(s, e):
    """(RO(s + e), sign of the remaining error) for s = RN(x), e = x - s exact.

    The second value has the sign of x - RO(x) (0 when exact). Rounding RO(x) to a
    format of at most 51 significand bits, in any mode, rounds x correctly."""
    need = (np.abs(e) > 0) & ((s.view(np.int64) & 1) == 0)  # (NaN errors of inf sums excluded)
    if np.count_nonzero(need):
        s = np.where(need, np.nextafter(s, np.copysign(INF, e)), s)
        e = np.where(need, -e, e)
    return s, e


# ---------------------------------------------------------------- binary32 results


def to_f32(x, mode: str):
    """Round binary64 values to binary32 in `mode`.

    Correct when x is exact, round-to-odd, or known never to fall on a binary32
    rounding boundary unless exact (quotients and square roots of binary32 values)."""
    y = x.astype(np.float32)
    if mode == "rn":
        return y
    y64 = y.astype(F64_)
    if mode == "rz":
        m, to = np.abs(y64) > np.abs(x), np.float32(0)
    elif mode == "rm":
        m, to = y64 > x, np.float32(-INF)
    else:
        m, to = y64 < x, np.float32(INF)
    if np.count_nonzero(m):
        y = np.where(m, np.nextafter(y, to), y)
    return y


def step(r, rsign, mode: str):
    """Directed rounding of r = RN(x) given the sign of x - r (any float dtype)."""
    if mode == "rn":
        return r
    dt = r.dtype.type
    if mode == "rz":
        m, to = (np.sign(rsign) * r) < 0, dt(0)
    elif mode == "rm":
        m, to = rsign < 0, dt(-INF)
    else:
        m, to = rsign > 0, dt(INF)
    if np.count_nonzero(m):
        r = np.where(m, np.nextafter(r, to), r)
    return r


# ---------------------------------------------------------------- general rounding


def fmt_nextafter(r, up, fmt: Fmt):
    """Neighbour of the fmt-representable binary64 values r toward +inf (up) or -inf."""
    to = INF if up else -INF
    if fmt is F64:
        return np.nextafter(r, to)
    if fmt is F32:
        return np.nextafter(r.astype(np.float32), np.float32(to)).astype(F64_)
    if fmt is F16:
        return np.nextafter(r.astype(np.float16), np.float16(to)).astype(F64_)
    # bfloat16 / tf32: binary32 with a shorter significand; step the binary32 bits
    inc = np.uint32(1 << (24 - fmt.p))
    x = r.astype(np.float32)
    b = x.view(np.uint32)
    grow = (x > 0) if up else (x < 0)
    nb = np.where(grow, b + inc, b - inc)
    zero = x == 0
    if np.count_nonzero(zero):
        nb = np.where(zero, np.uint32(0 if up else 0x80000000) | inc, nb)
    return nb.view(np.float32).astype(F64_)


def round_scaled(hi, rsign, E, fmt: Fmt, mode: str):
    """Round (hi + delta) * 2**E to `fmt` in `mode` ('rn', 'rna', 'rz', 'rm', 'rp').

    hi must be RN53 of the exact value / 2**E (or the exact value itself), delta an
    unknown quantity of sign `rsign` smaller than half an ulp of hi; `rsign` may be the
    scalar 0 for exact inputs. Returns binary64 values that are representable in fmt
    (or +-inf / NaN)."""
    m, e = np.frexp(hi)
    te = e.astype(np.int64) + E
    k = np.maximum(te - 1, fmt.emin) - (fmt.p - 1)
    t = np.ldexp(m, np.maximum(te - k, -1000))  # hi * 2**E in units of the target ulp
    exact = np.isscalar(rsign) and rsign == 0
    if not exact:
        rsign = np.sign(rsign)  # only the sign matters (and products must not underflow)
    if mode == "rn":
        n = np.rint(t)
    elif mode == "rna":
        a = np.abs(t)
        f = np.floor(a)
        n = np.copysign(f + (a - f >= 0.5), t)
    elif mode == "rz":
        n = np.trunc(t)
    elif mode == "rm":
        n = np.floor(t)
    else:
        n = np.ceil(t)
    d = t - n
    if not exact and mode in ("rn", "rna"):
        adj = (np.abs(d) == 0.5) & (rsign * d > 0)
        if np.count_nonzero(adj):
            n = np.where(adj, n + np.sign(d), n)
    r = np.ldexp(n, k)
    if not exact and mode in ("rz", "rm", "rp"):
        on = d == 0
        if mode == "rz":
            need = on & (rsign * t < 0)
            up = need & (t < 0)
            down = need & (t > 0)
        else:
            up = on & (rsign > 0) if mode == "rp" else np.zeros(r.shape, bool)
            down = on & (rsign < 0) if mode == "rm" else np.zeros(r.shape, bool)
        if np.count_nonzero(up):
            r = np.where(up, fmt_nextafter(r, True, fmt), r)
        if np.count_nonzero(down):
            r = np.where(down, fmt_nextafter(r, False, fmt), r)
    big = (np.abs(r) > fmt.max) & np.isfinite(hi)
    if np.count_nonzero(big):
        r = np.where(big, overflow_value(r, fmt, mode), r)
    return r


def overflow_value(r, fmt: Fmt, mode: str):
    """What an out-of-range result of sign sign(r) rounds to in `mode`."""
    mx = F64_(fmt.max)
    if mode in ("rn", "rna"):
        return np.copysign(INF, r)
    if mode == "rz":
        return np.copysign(mx, r)
    if mode == "rm":
        return np.where(r > 0, mx, -INF)
    return np.where(r > 0, INF, -mx)


# ---------------------------------------------------------------- formats without NumPy arithmetic


def bf16_to_f32(u):
    return (np.asarray(u).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16_rn(x):
    """binary32 -> bfloat16 bits, round to nearest even (NaN -> canonical 0x7FFF)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(x)
    if np.count_nonzero(nan):
        r = np.where(nan, np.uint16(0x7FFF), r)
    return r


def f64_to_f32_odd(x):
    """binary64 -> binary32 rounded to odd (keeps enough information for bfloat16)."""
    y = x.astype(np.float32)
    y64 = y.astype(F64_)
    need = (y64 != x) & ((y.view(np.uint32) & np.uint32(1)) == 0) & ~np.isnan(x) & np.isfinite(y)
    if np.count_nonzero(need):
        y = np.where(need, np.nextafter(y, np.where(x > y64, np.float32(INF), np.float32(-INF))), y)
    return y


def from_f64(x, fmt: Fmt, mode: str):
    """Round binary64 values (exact or round-to-odd) to fmt; returns the PTX value type
    of fmt: float64/float32/float16 arrays, or raw uint16 (bf16) / uint32 (tf32) bits."""
    if fmt is F64:
        return x
    if fmt is F32 and mode != "rna":
        return to_f32(x, mode)
    if fmt is F16 and mode == "rn":
        return x.astype(np.float16)
    if fmt is BF16 and mode == "rn":
        return f32_to_bf16_rn(f64_to_f32_odd(x))
    r = round_scaled(x, 0, 0, fmt, mode)
    if fmt is F16:
        return r.astype(np.float16)
    if fmt is F32:
        return r.astype(np.float32)
    bits = r.astype(np.float32).view(np.uint32)
    nan = np.isnan(x)
    if fmt is BF16:
        out = (bits >> np.uint32(16)).astype(np.uint16)
        return np.where(nan, np.uint16(0x7FFF), out) if nan.any() else out
    return np.where(nan, np.uint32(0x7FFFFFFF), bits) if nan.any() else bits


# ---------------------------------------------------------------- binary64 directed arithmetic


def add64(a, b, mode: str):
    """a + b in binary64 with rounding `mode` (IEEE zero-sign rules included)."""
    s = a + b
    if mode == "rn":
        return s
    e = two_sum_err(a, b, s)
    ovf = np.isinf(s) & np.isfinite(a) & np.isfinite(b)
    if np.count_nonzero(ovf):
        e = np.where(ovf, -s, e)  # the exact sum is finite: below the infinity
    r = step(s, e, mode)
    if mode == "rm":
        r = zero_sum_rm(r, a, b)
    return r


def zero_sum_rm(r, a, b):
    """Exact zero sums are -0 in round-toward-negative unless both addends are +0
    (a and b are the exact addends; any float dtype)."""
    z = r == 0
    if np.count_nonzero(z):
        pos = (a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b)
        r = np.where(z & ~pos, r.dtype.type(-0.0), r)
    return r


def _scaled_product(a, b):
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    ph, pl = two_prod(ma, mb)
    return ph, pl, ea.astype(np.int64) + eb


def mul64(a, b, mode: str):
    r = a * b
    if mode == "rn":
        return r
    gen = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0)
    if np.count_nonzero(gen):
        i = np.nonzero(gen)[0]
        ph, pl, E = _scaled_product(a[i], b[i])
        r[i] = round_scaled(ph, pl, E, F64, mode)
    return r


def div64(a, b, mode: str):
    q = a / b
    if mode == "rn":
        return q
    gen = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0)
    if np.count_nonzero(gen):
        i = np.nonzero(gen)[0]
        ma, ea = np.frexp(a[i])
        mb, eb = np.frexp(b[i])
        qs = ma / mb
        p, pe = two_prod(qs, mb)
        rem = (ma - p) - pe  # exact remainder, sign of (ma/mb - qs) * sign(mb)
        q[i] = round_scaled(qs, rem * np.sign(mb), ea.astype(np.int64) - eb, F64, mode)
    return q


def sqrt64(x, mode: str):
    s = np.sqrt(x)
    if mode == "rn":
        return s
    gen = np.isfinite(x) & (x > 0)
    if np.count_nonzero(gen):
        i = np.nonzero(gen)[0]
        xi, si = x[i], s[i]
        _, e = np.frexp(xi)
        k = -(e.astype(np.int64) // 2)  # scale x by 4**k into [0.25, 1)
        xs, ss = np.ldexp(xi, 2 * k), np.ldexp(si, k)
        p, pe = two_prod(ss, ss)
        rsign = np.where(xs - p > pe, 1.0, np.where(xs - p < pe, -1.0, 0.0))
        s[i] = step(si, rsign, mode)
    return s


# ---------------------------------------------------------------- binary64 fused multiply-add

_TINY_P = F64_(2.0 ** -968)


def fma64(a, b, c, mode: str):
    """Correctly rounded a * b + c in binary64 (arrays of equal shape)."""
    if mode != "rn":
        return _fma64_general(a, b, c, mode)
    # Boldo-Melquiond emulation: RN(th + RO(tl + pl)) with c + p = th + tl, a * b = p + pl
    # (two_prod / two_sum / round_odd inlined with in-place arithmetic: this is a hot path)
    sub, mul = np.subtract, np.multiply
    p = a * b
    t = a * _SPLIT
    ah = t - a
    sub(t, ah, out=ah)
    al = a - ah
    mul(b, _SPLIT, out=t)
    bh = t - b
    sub(t, bh, out=bh)
    bl = b - bh
    pl = ah * bh
    pl -= p
    mul(ah, bl, out=t)
    pl += t
    mul(al, bh, out=t)
    pl += t
    mul(al, bl, out=t)
    pl += t
    th = c + p
    bb = th - c
    tl = th - bb
    sub(c, tl, out=tl)
    sub(p, bb, out=bb)
    tl += bb
    v = tl + pl
    sub(v, tl, out=bb)
    e2 = v - bb
    sub(tl, e2, out=e2)
    sub(pl, bb, out=bb)
    e2 += bb
    v, _ = round_odd(v, e2)
    r = th + v
    np.abs(p, out=p)
    bad = ~((p >= _TINY_P) & np.isfinite(r))  # zero/tiny products, inf/NaN, overflow
    if np.count_nonzero(bad):
        i = np.nonzero(bad)[0]
        r[i] = _fma64_general(a[i], b[i], c[i], mode)
    return r


def _fma64_general(a, b, c, mode: str):
    """Exact fma for any lanes: special values directly, the rest scaled to avoid
    over/underflow and rounded once by round_scaled."""
    prod = a * b
    out = prod + c
    fa, fb, fc = np.isfinite(a), np.isfinite(b), np.isfinite(c)
    out = np.where(fa & fb & ~fc, c, out)  # finite product + inf (the product may overflow)
    zp = fa & fb & fc & ((a == 0) | (b == 0))
    if mode == "rm" and zp.any():  # exact zero product: IEEE zero-sum sign rule
        out = np.where(zp & (out == 0) & ~((c == 0) & ~np.signbit(c) & ~np.signbit(prod)), -0.0, out)
    gen = fa & fb & fc & (a != 0) & (b != 0)
    if not gen.any():
        return out
    i = np.nonzero(gen)[0]
    a, b, c = a[i], b[i], c[i]
    ph, pl, S = _scaled_product(a, b)
    mc, ec = np.frexp(c)
    ec = ec.astype(np.int64)
    cz = c == 0
    D = ec - S
    cdom = (D > 60) & ~cz            # the product only matters as a sticky bit
    csmall = ~cz & (D < -110)        # c only matters as a sticky bit
    c1 = np.ldexp(c, np.where(cdom | csmall, 0, -S))
    c1 = np.where(csmall, np.copysign(_STICKY, c), c1)
    E = np.where(cdom, ec, S)
    c1 = np.where(cdom, mc, c1)
    ph = np.where(cdom, np.copysign(_STICKY, ph), ph)
    pl = np.where(cdom, 0.0, pl)
    th, tl = two_sum(c1, ph)
    v, e2 = two_sum(tl, pl)
    v, rv = round_odd(v, e2)
    hi, lo = two_sum(th, v)
    rsign = np.where(lo != 0, lo, rv)
    r = round_scaled(hi, rsign, E, F64, mode)
    zero = hi == 0  # exact cancellation of opposite-signed terms
    if np.count_nonzero(zero):
        r = np.where(zero, -0.0 if mode == "rm" else 0.0, r)
    out[i] = r
    return out


# ---------------------------------------------------------------- binary32 / half fused multiply-add


def fma_via64(a64, b64, c64):
    """RO53(a*b + c) for binary32 (or narrower) inputs given as binary64: the product
    is exact, the sum is made round-to-odd, so any final rounding is correct."""
    p = a64 * b64
    s = p + c64
    return round_odd(s, two_sum_err(p, c64, s))[0]


_M29 = U64_(0x1FFFFFFF)
_MID29 = U64_(0x10000000)
_ABS64 = U64_(0x7FFFFFFFFFFFFFFF)
_TINY32_BITS = U64_(0x380FFFFFFFFFFFFF)  # bits of 2**-126 minus one


def fma32(a, b, c, mode: str):
    """Correctly rounded binary32 fma (float32 arrays or scalars)."""
    p = np.asarray(a, F64_) * b
    s = p + c
    if s.ndim == 0:
        return fma32(np.atleast_1d(a), b, c, mode)[0]
    if mode != "rn":
        s, _ = round_odd(s, two_sum_err(p, np.asarray(c, F64_), s))
        return to_f32(s, mode)
    y = s.astype(np.float32)
    # RN(RN53(x)) differs from RN(x) only if RN53(x) is an exact binary32 midpoint (or in the
    # binary32 subnormal range): redo those lanes with round-to-odd
    bits = s.view(U64_)
    sus = ((bits & _M29) == _MID29) | (((bits & _ABS64) - U64_(1)) < _TINY32_BITS)
    k = np.count_nonzero(sus)
    if not k:
        return y
    if k * 8 > s.size:  # many candidates (short products): keep only the inexact sums
        e = two_sum_err(p, np.asarray(c, F64_), s)
        sus &= e != 0
        if not np.count_nonzero(sus):
            return y
        i = np.nonzero(sus)[0]
        y[i] = round_odd(s[i], e[i])[0].astype(np.float32)
        return y
    i = np.nonzero(sus)[0]
    pi = np.broadcast_to(p, s.shape)[i]
    ci = np.broadcast_to(c, s.shape)[i].astype(F64_)
    si = s[i]
    y[i] = round_odd(si, two_sum_err(pi, ci, si))[0].astype(np.float32)
    return y
