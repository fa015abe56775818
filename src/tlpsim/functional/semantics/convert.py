"""`cvt` and `cvt.pack` (PTX ISA 9.7.9.21-22): conversions between the integer types
.u8-.u64/.s8-.s64 and the floating-point types .f16 .bf16 .f32 .f64 (plus .tf32 and
the packed .f16x2/.bf16x2 destinations from two .f32 sources).

* int -> int: sign- or zero-extension by the *source* type, or truncation ("chop");
  .sat clamps the value to the destination range.
* float -> int: .rni/.rzi/.rmi/.rpi round to an integer, then the value saturates to the
  destination range (PTX: always, .sat is redundant). NaN gives 0, except for an .f64
  source or a 64-bit destination, where it gives 1 << (bits - 1) (PTX ISA 9.x).
* int -> float and float -> narrower float: .rn/.rz/.rm/.rp (and .rna for .tf32) are
  correctly rounded, 64-bit integers included (exact residual + round-to-odd), with
  IEEE overflow (inf for .rn, the largest finite number in the directed modes).
* float -> same float with .rni/.rzi/.rmi/.rpi rounds to an integral value; widening
  float conversions are exact.
* .ftz flushes .f32 inputs and results; .sat clamps float results to [0.0, 1.0] (NaN
  and -0.0 -> +0.0); .relu makes negative results +0.0 (-0.0 kept) and NaN the
  canonical NaN; .satfinite turns infinite results into the largest finite value (NaN
  stays NaN).

Not implemented (UnsupportedPTX at build time): .rs stochastic rounding, .scaled, the
fp8/fp6/fp4 (e4m3, e5m2, e2m1, ...) and ue8m0 formats, cvt.pack to .u2/.s2 (.u4/.s4
and 8/16-bit pack forms are supported).
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Reg
from tlpsim.functional.semantics import fpround as fr
from tlpsim.functional.semantics import semantic
from tlpsim.functional.semantics.floating import ftz as flush
from tlpsim.functional.semantics.floating import reader as float_reader
from tlpsim.functional.semantics.floating import relu as relu_fn
from tlpsim.functional.semantics.floating import sat as sat_fn
from tlpsim.functional.state import VALUE

F64 = np.float64
INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64")
FLOATS = ("f16", "bf16", "f32", "f64")
IRND = ("rni", "rzi", "rmi", "rpi")
FRND = ("rn", "rz", "rm", "rp", "rna")
_ROUND_INT = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
_WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
_MAXBITS = {"f16": np.uint16(0x7BFF), "bf16": np.uint16(0x7F7F), "tf32": np.uint32(0x7F7FE000)}


def _bits(t: str) -> int:
    return VALUE[t].itemsize * 8


def _range(t: str) -> tuple[int, int]:
    b = _bits(t)
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if t[0] == "s" else (0, (1 << b) - 1)


def _int_reader(oc, op, t):
    r = oc.reader(op, t)
    if isinstance(op, Reg):
        return r
    dt = VALUE[t]
    return lambda st, idx: np.full(idx.shape, r(st, idx), dtype=dt)


def _to64(t: str, ftz: bool):
    """Exact binary64 value of a float element (f16 values, bf16 bits, f32, f64)."""
    if t == "bf16":
        return lambda x: fr.bf16_to_f32(x).astype(F64)
    if t == "f32" and ftz:
        return lambda x: flush(x, "f32").astype(F64)
    return lambda x: np.asarray(x, F64)


@semantic("cvt")
def build_cvt(ins, oc):
    if ins.has("pack"):
        return _build_pack(ins, oc)
    if len(ins.types) != 2:
        raise oc.unsupported(ins, "type combination")
    dt, at = ins.types
    mods = [m for m in ins.mods if m not in ins.types]
    for m in mods:
        if m not in IRND + FRND + ("ftz", "sat", "relu", "satfinite"):
            raise oc.unsupported(ins, f"modifier .{m}")
    irnd = [m for m in mods if m in IRND]
    frnd = [m for m in mods if m in FRND]
    if len(irnd) + len(frnd) > 1:
        raise oc.unsupported(ins, "more than one rounding modifier")
    ftz, sat = "ftz" in mods, "sat" in mods
    relu, satfin = "relu" in mods, "satfinite" in mods
    if ftz and "f32" not in (dt, at):
        raise oc.unsupported(ins, ".ftz (only when a type is .f32)")
    if (relu or satfin) and not (at == "f32" and dt in ("f16", "bf16", "tf32", "f16x2", "bf16x2")):
        raise oc.unsupported(ins, ".relu/.satfinite (only for f32 -> f16/bf16/tf32 forms)")
    if frnd and frnd[0] == "rna" and dt != "tf32":
        raise oc.unsupported(ins, ".rna (only for .tf32)")
    if dt in ("f16x2", "bf16x2", "tf32"):
        if at != "f32" or not frnd or irnd or sat or ftz:
            raise oc.unsupported(ins, "form of the packed / tf32 conversion")
        return _build_narrow_f32(ins, oc, dt, frnd[0], relu, satfin)
    if len(ins.dsts) != 1 or len(ins.srcs) != 1:
        raise oc.unsupported(ins, "operand count")
    if dt in INTS and at in INTS:
        if irnd or frnd or ftz:
            raise oc.unsupported(ins, "rounding or .ftz on an integer conversion")
        fn = _int_to_int(dt, at, sat)
        rd = _int_reader(oc, ins.srcs[0], at)
    elif dt in INTS and at in FLOATS:
        if not irnd:
            raise oc.unsupported(ins, "float-to-integer conversion without .rni/.rzi/.rmi/.rpi")
        fn = _float_to_int(dt, at, irnd[0], ftz)
        rd = float_reader(oc, ins.srcs[0], at, array=True)
    elif dt in FLOATS and at in INTS:
        if not frnd or irnd:
            raise oc.unsupported(ins, "integer-to-float conversion without .rn/.rz/.rm/.rp")
        if sat and dt == "bf16":
            raise oc.unsupported(ins, ".sat for .bf16")
        fn = _int_to_float(dt, at, frnd[0], sat)
        rd = _int_reader(oc, ins.srcs[0], at)
    elif dt in FLOATS and at in FLOATS:
        fn = _float_to_float(ins, oc, dt, at, irnd, frnd, ftz, sat, relu, satfin)
        rd = float_reader(oc, ins.srcs[0], at, array=True)
    else:
        raise oc.unsupported(ins, "type combination")
    wr = oc.writer(ins.dsts[0], dt)

    def run(st, idx):
        with np.errstate(all="ignore"):
            wr(st, idx, fn(rd(st, idx)))
    return run


# ---------------------------------------------------------------- integer destinations


def _int_to_int(dt, at, sat):
    ddt = VALUE[dt]
    if not sat:
        return lambda v: v.astype(ddt)
    lo, hi = _range(dt)
    if at == "u64":
        return lambda v: np.minimum(v, np.uint64(hi)).astype(ddt)
    if dt == "u64":
        return lambda v: np.maximum(v.astype(np.int64), 0).astype(ddt)
    return lambda v: np.clip(v.astype(np.int64), lo, hi).astype(ddt)


def _float_to_int(dt, at, irnd, ftz):
    ddt = VALUE[dt]
    lo, hi = _range(dt)
    bits = _bits(dt)
    nan_val = ddt.type(0) if (at != "f64" and bits < 64) else np.array(1 << (bits - 1), np.uint64).astype(ddt)[()]
    rnd = _ROUND_INT[irnd]
    to64 = _to64(at, ftz)
    if bits < 64:
        flo, fhi = F64(lo), F64(hi)

        def conv(x):
            r = np.clip(rnd(x), flo, fhi)
            nan = np.isnan(r)
            if not np.count_nonzero(nan):
                return r.astype(ddt)
            return np.where(nan, nan_val, np.where(nan, 0.0, r).astype(ddt))
    else:
        top = F64(2.0 ** 63 if dt == "s64" else 2.0 ** 64)
        bottom = F64(-(2.0 ** 63) if dt == "s64" else 0.0)
        top_val = ddt.type(hi)

        def conv(x):
            r = rnd(x)
            big = r >= top
            nan = np.isnan(r)
            out = np.where(big | nan, 0.0, np.maximum(r, bottom)).astype(ddt)
            out = np.where(big, top_val, out)
            return np.where(nan, nan_val, out) if np.count_nonzero(nan) else out
    return lambda x: conv(to64(x))


# ---------------------------------------------------------------- float destinations


def _finish(dt, sat=False):
    """Post-processing of a float result in its PTX value representation."""
    if sat:
        return lambda r: sat_fn(r, dt)
    return lambda r: r


def _int_to_float(dt, at, mode, sat):
    fmt = fr.FMTS[dt]
    fin = _finish(dt, sat)
    if _bits(at) < 64:
        return lambda v: fin(fr.from_f64(v.astype(F64), fmt, mode))
    signed = at == "s64"
    two63, two64 = F64(2.0 ** 63), F64(2.0 ** 64)

    def conv(v):
        hi = v.astype(F64)  # RN53
        if signed:
            res = v - np.where(hi >= two63, -two63, hi).astype(np.int64)
        else:
            res = (v - np.where(hi >= two64, 0.0, hi).astype(np.uint64)).view(np.int64)
        if fmt is fr.F64:
            return fr.step(hi, res, mode)
        x, _ = fr.round_odd(hi, res.astype(F64))
        return fr.from_f64(x, fmt, mode)
    return lambda v: fin(conv(v))


def _float_to_float(ins, oc, dt, at, irnd, frnd, ftz, sat, relu, satfin):
    if sat and dt == "bf16":
        raise oc.unsupported(ins, ".sat for .bf16")
    fin = _finish(dt, sat)
    flush_out = ftz and dt == "f32"
    if dt == at:
        if frnd:
            raise oc.unsupported(ins, "floating-point rounding on a same-type conversion")
        pre = (lambda x: flush(x, "f32")) if ftz else (lambda x: x)
        if not irnd:
            return lambda x: fin(pre(x))
        rnd = _ROUND_INT[irnd[0]]
        if dt == "bf16":
            return lambda x: (rnd(fr.bf16_to_f32(x)).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        return lambda x: fin(rnd(pre(x)))
    if irnd:
        raise oc.unsupported(ins, "integer rounding on a conversion between different float types")
    to64 = _to64(at, ftz)
    widening = {"f16": ("f32", "f64"), "bf16": ("f32", "f64"), "f32": ("f64",), "f64": ()}[at]
    if dt in widening:
        if frnd:
            raise oc.unsupported(ins, "floating-point rounding on an exact (widening) conversion")
        target = np.dtype(np.float32 if dt == "f32" else F64)
        if flush_out:  # cvt.ftz.f32.bf16: bf16 subnormals are f32 subnormals
            return lambda x: fin(flush(to64(x).astype(target), "f32"))
        return lambda x: fin(to64(x).astype(target))
    if not frnd:
        raise oc.unsupported(ins, "narrowing float conversion without a rounding modifier")
    fmt = fr.FMTS[dt]
    mode = frnd[0]
    post = _narrow_post(dt, relu, satfin)

    def conv(x):
        r = fr.from_f64(to64(x), fmt, mode)
        if flush_out:
            r = flush(r, "f32")
        return fin(post(r))
    return conv


def _narrow_post(dt, relu, satfin):
    """.satfinite (infinities -> largest finite) then .relu, on f16 values / raw bits."""
    def post(r):
        if satfin:
            if dt == "f16":
                inf = np.isinf(r)
                r = np.where(inf, np.copysign(np.float16(65504.0), r), r)
            else:
                mag = r & ~(np.uint16(0x8000) if dt == "bf16" else np.uint32(0x80000000))
                inf_bits = np.uint16(0x7F80) if dt == "bf16" else np.uint32(0x7F800000)
                r = np.where(mag == inf_bits, (r - mag) | _MAXBITS[dt], r)
        if relu:
            if dt == "tf32":
                f = r.view(np.float32)
                r = np.where(np.isnan(f), np.uint32(0x7FFFFFFF), np.where(f < 0, np.uint32(0), r))
            else:
                r = relu_fn(r, dt)
        return r
    return post


def _build_narrow_f32(ins, oc, dt, mode, relu, satfin):
    """cvt.frnd2{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b and .tf32.f32 d, a."""
    if dt == "tf32":
        if mode not in ("rn", "rz", "rna") or len(ins.srcs) != 1:
            raise oc.unsupported(ins, "form of cvt.tf32.f32")
        post = _narrow_post("tf32", relu, satfin)
        rd = float_reader(oc, ins.srcs[0], "f32", array=True)
        wr = oc.writer(ins.dsts[0], "b32")

        def run_tf32(st, idx):
            with np.errstate(all="ignore"):
                wr(st, idx, post(fr.from_f64(rd(st, idx).astype(F64), fr.TF32, mode)))
        return run_tf32
    if mode not in ("rn", "rz") or len(ins.srcs) != 2 or len(ins.dsts) != 1:
        raise oc.unsupported(ins, "form of the packed conversion")
    half = dt[:-2]
    fmt = fr.FMTS[half]
    post = _narrow_post(half, relu, satfin)
    ra = float_reader(oc, ins.srcs[0], "f32", array=True)
    rb = float_reader(oc, ins.srcs[1], "f32", array=True)
    wr = oc.writer(ins.dsts[0], "b32")

    def one(x):
        r = post(fr.from_f64(x.astype(F64), fmt, mode))
        return (r.view(np.uint16) if half == "f16" else r).astype(np.uint32)

    def run(st, idx):
        with np.errstate(all="ignore"):
            wr(st, idx, (one(ra(st, idx)) << np.uint32(16)) | one(rb(st, idx)))
    return run


# ---------------------------------------------------------------- cvt.pack

_PACK_BITS = {"u4": 4, "s4": 4, "u8": 8, "s8": 8, "u16": 16, "s16": 16}


def _build_pack(ins, oc):
    """cvt.pack.sat.{u16,s16}.s32 d, a, b and cvt.pack.sat.{u4,s4,u8,s8}.s32.b32 d, a, b, c."""
    ct = next((m for m in ins.mods if m in _PACK_BITS or m in ("u2", "s2")), None)
    if ct not in _PACK_BITS or "sat" not in ins.mods or "s32" not in ins.mods:
        raise oc.unsupported(ins, "form of cvt.pack")
    size = _PACK_BITS[ct]
    lo, hi = (-(1 << (size - 1)), (1 << (size - 1)) - 1) if ct[0] == "s" else (0, (1 << size) - 1)
    with_c = size < 16
    if len(ins.srcs) != (3 if with_c else 2) or len(ins.dsts) != 1:
        raise oc.unsupported(ins, "operand count of cvt.pack")
    ra, rb = _int_reader(oc, ins.srcs[0], "s32"), _int_reader(oc, ins.srcs[1], "s32")
    rc = _int_reader(oc, ins.srcs[2], "b32") if with_c else None
    wr = oc.writer(ins.dsts[0], "u32")
    mask = np.uint32((1 << size) - 1)
    sh, sh2 = np.uint32(size), np.uint32(2 * size)

    def run(st, idx):
        ta = np.clip(ra(st, idx), lo, hi).astype(np.uint32) & mask
        tb = np.clip(rb(st, idx), lo, hi).astype(np.uint32) & mask
        d = tb | (ta << sh)
        if with_c:
            d = d | (rc(st, idx) << sh2)
        wr(st, idx, d)
    return run
