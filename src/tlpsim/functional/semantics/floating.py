"""Floating-point arithmetic (PTX ISA 9.7.3 "Floating-Point", 9.7.4 "Half Precision" and
9.7.5 "Mixed Precision" instructions): add sub mul fma mad div rcp sqrt rsqrt, plus the
operand plumbing shared with `floating_misc` (abs neg min max sin cos lg2 ex2 tanh).

Types: .f32 and .f64; .f16/.bf16 and the packed .f16x2/.bf16x2 (two halves of a b32,
element 0 in the low half) and .f32x2 (two f32 in a b64) where PTX defines them; the
mixed forms add/sub/fma.f32.{f16,bf16}.

Exactness. Every form with a rounding modifier (.rn .rz .rm .rp) is correctly rounded,
including subnormal results, overflow and the IEEE sign of exact zero sums, using the
error-free transformations of `fpround` (binary32 via binary64 arithmetic plus
round-to-odd where binary64 is not exact; binary64 fma/directed modes via Dekker
products). Results are the IEEE values; NaN results of .f32 arithmetic are whatever
NumPy produces (PTX: "an unspecified NaN"), .f64 NaN payloads propagate as in NumPy.

Choices where PTX gives an error bound instead of a value (see each builder):
div.full.f32, rcp/sqrt.approx.f32 and the .approx transcendentals return the binary32
rounding of the exact (binary64) result, always within the documented bound;
div.approx.f32 is computed as a * rcp(b) with the reciprocal flushed to zero when it
is subnormal (reproducing the documented 2**126 < |b| < 2**128 behaviour);
rcp/rsqrt.approx.ftz.f64 truncate the binary64 result of the upper 32 input bits to
its upper 32 bits. .sat maps NaN and -0.0 to +0.0; .relu maps negative results to +0.0
(-0.0 is kept) and NaN to the canonical NaN. .ftz flushes inputs, then results after
rounding (a result that rounds up to the smallest normal number is kept). Legacy
mad.f32/mad.f64 without a rounding modifier mean .rn (PTX ISA errata); the sm_1x
truncating mad.f32 is not modelled.

Not implemented (UnsupportedPTX): fma .oob, f16/bf16 rounding other than .rn, float
literals for packed operands. The .f32x2 forms are implemented here but only reachable
once the opcode table knows .f32x2 as a type (the integer family dispatches shared
opcodes on the instruction type).
"""

from __future__ import annotations

import numpy as np

from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.ir import Imm, Reg
from tlpsim.functional.semantics import fpround as fr
from tlpsim.functional.semantics import semantic

F32, F64, F16 = np.float32, np.float64, np.float16
FLOAT_TYPES = ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2", "f32x2")
PACKED = {"f16x2": ("f16", np.dtype(np.float16), "b32"), "bf16x2": ("bf16", np.dtype(np.uint16), "b32"),
          "f32x2": ("f32", np.dtype(np.float32), "b64")}
ELEM_DTYPE = {"f32": np.dtype(F32), "f64": np.dtype(F64), "f16": np.dtype(F16), "bf16": np.dtype(np.uint16)}
ROUNDING = ("rn", "rz", "rm", "rp")
CANON_NAN = {"f32": np.uint32(0x7FFFFFFF).view(F32), "f16": np.uint16(0x7FFF).view(F16), "bf16": np.uint16(0x7FFF),
             "f64": np.uint64(0x7FFFFFFFFFFFFFFF).view(F64)}
TINY = {"f32": F32(2.0 ** -126), "f16": F16(2.0 ** -14)}

# ---------------------------------------------------------------- operand plumbing


def elem(t: str) -> str:
    return PACKED[t][0] if t in PACKED else t


def ptype(ins) -> str | None:
    """The instruction's float type (.f32x2 is not a type modifier of the opcode table)."""
    return "f32x2" if "f32x2" in ins.mods else ins.type


def check(ins, oc, *, types, n_src: int, allowed=(), rnd_ok=(), rnd_default: str | None = "rn") -> str:
    """Validate operand count, type and modifiers; returns the rounding mode (or None).

    `allowed` lists the optional non-rounding modifiers the form accepts; `rnd_ok` the
    rounding modifiers accepted (`rnd_default` when absent; None: one is required)."""
    t = ptype(ins)
    if t not in types:
        raise oc.unsupported(ins, f"type .{t}")
    if len(ins.dsts) != 1 or len(ins.srcs) != n_src:
        raise oc.unsupported(ins, f"operand count (expected 1 destination and {n_src} sources)")
    rnd = [m for m in ins.mods if m in ROUNDING or m in ("rna", "rs")]
    for m in ins.mods:
        if m not in ins.types and m != t and m not in ROUNDING and m not in allowed and m not in ("rna", "rs"):
            raise oc.unsupported(ins, f"modifier .{m}")
    if len(rnd) > 1 or (rnd and rnd[0] not in rnd_ok):
        raise oc.unsupported(ins, f"rounding modifier .{rnd[0] if len(rnd) == 1 else rnd}")
    if not rnd and rnd_default is None and rnd_ok:
        raise oc.unsupported(ins, "missing rounding modifier")
    return rnd[0] if rnd else rnd_default


def reader(oc, op, t: str, array: bool = False):
    """Values of a source in the element representation of PTX type t (float16 for f16,
    raw uint16 bits for bf16, the flattened element pairs of packed types). With
    `array`, immediates are broadcast to len(idx) (for code that indexes or views)."""
    if t in PACKED:
        _, vdt, ct = PACKED[t]
        if isinstance(op, Imm) and op.is_float:
            raise UnsupportedPTX(f"float literal {op} for packed type .{t} (kernel {oc.fn.name})", oc.filename, 0)
        base = oc.reader(op, ct)
        if isinstance(op, Reg):
            return lambda st, idx: base(st, idx).view(vdt)
        cdt = np.dtype(np.uint32 if ct == "b32" else np.uint64)
        return lambda st, idx: np.full(idx.shape, base(st, idx), dtype=cdt).view(vdt)
    if isinstance(op, Imm) and t in ("f16", "bf16"):
        if op.is_float:
            val = F16(op.value) if t == "f16" else fr.f32_to_bf16_rn(np.asarray(op.value, F32))[()]
        else:
            val = np.uint16(int(op.value) & 0xFFFF)
            val = val.view(F16) if t == "f16" else val
        r = lambda st, idx: val
    else:
        r = oc.reader(op, t)
    if array and not isinstance(op, Reg):
        dt = ELEM_DTYPE[t]
        return lambda st, idx: np.full(idx.shape, r(st, idx), dtype=dt)
    return r


def writer(oc, op, t: str):
    if t in PACKED:
        ct = PACKED[t][2]
        cdt = np.dtype(np.uint32 if ct == "b32" else np.uint64)
        w = oc.writer(op, ct)
        return lambda st, idx, v: w(st, idx, v.view(cdt))
    return oc.writer(op, t)


def build_elementwise(ins, oc, t: str, fn, *, array: bool = False, srcs=None, src_types=None):
    """Closure running fn(*element values) -> element values for every lane."""
    srcs = ins.srcs if srcs is None else srcs
    src_types = src_types or [t] * len(srcs)
    rds = [reader(oc, s, st_, array or t in PACKED) for s, st_ in zip(srcs, src_types)]
    wr = writer(oc, ins.dsts[0], t)
    if len(rds) == 1:
        r0 = rds[0]

        def run1(st, idx):
            with np.errstate(all="ignore"):
                wr(st, idx, fn(r0(st, idx)))
        return run1
    if len(rds) == 2:
        r0, r1 = rds

        def run2(st, idx):
            with np.errstate(all="ignore"):
                wr(st, idx, fn(r0(st, idx), r1(st, idx)))
        return run2

    def run(st, idx):
        with np.errstate(all="ignore"):
            wr(st, idx, fn(*[r(st, idx) for r in rds]))
    return run


# ---------------------------------------------------------------- element helpers


def ftz(x, et: str):
    """Flush subnormals to sign-preserving zero (f32 / f16 values, bf16 bits)."""
    if et == "bf16":
        return np.where((x & np.uint16(0x7F80)) == 0, x & np.uint16(0x8000), x)
    return x * (np.abs(x) >= TINY[et])


def sat(x, et: str):
    """Clamp to [0.0, 1.0]; NaN and -0.0 give +0.0."""
    return np.fmin(np.fmax(x, 0), 1) + ELEM_DTYPE[et].type(0)


def relu(x, et: str):
    """Negative results become +0.0, NaN the canonical NaN (f16 values, bf16 bits)."""
    if et == "bf16":
        neg = (x > np.uint16(0x8000)) & (x <= np.uint16(0xFF80))
        r = np.where(neg, np.uint16(0), x)
        nan = (x & np.uint16(0x7FFF)) > np.uint16(0x7F80)
    else:
        r = np.where(x < 0, ELEM_DTYPE[et].type(0), x)
        nan = np.isnan(x)
    return np.where(nan, CANON_NAN[et], r)


def post(fn, et: str, *, ftz_out=False, sat_out=False, relu_out=False):
    """Wrap an element function with result flushing / saturation / relu."""
    if not (ftz_out or sat_out or relu_out):
        return fn

    def wrapped(*v):
        r = fn(*v)
        if ftz_out:
            r = ftz(r, et)
        if sat_out:
            r = sat(r, et)
        if relu_out:
            r = relu(r, et)
        return r
    return wrapped


def pre_ftz(fn, et: str, n: int | None = None):
    """Flush the (first n) inputs of fn."""
    def wrapped(*v):
        k = len(v) if n is None else n
        return fn(*[ftz(x, et) if i < k else x for i, x in enumerate(v)])
    return wrapped


def bf16_via_f32(fn32):
    """An f32 element function lifted to bf16 bits (inputs exact, result RN)."""
    return lambda *v: fr.f32_to_bf16_rn(fn32(*[fr.bf16_to_f32(x) for x in v]))


def mods_ftz_sat(ins, oc, et, *, sat_ok=True):
    f, s = ins.has("ftz"), ins.has("sat")
    if f and et not in ("f32", "f16"):
        raise oc.unsupported(ins, ".ftz (only for .f32 and .f16 types)")
    if s and (not sat_ok or et not in ("f32", "f16")):
        raise oc.unsupported(ins, ".sat")
    return f, s


# ---------------------------------------------------------------- add / sub / mul


def _f32_addsub(mode, sub):
    if mode == "rn":
        return np.subtract if sub else np.add

    def fn(a, b):
        a64, b64 = np.asarray(a, F64), np.asarray(-b if sub else b, F64)
        s = a64 + b64
        s, _ = fr.round_odd(s, fr.two_sum_err(a64, b64, s))
        y = fr.to_f32(s, mode)
        return fr.zero_sum_rm(y, a64, b64) if mode == "rm" else y
    return fn


def _f32_mul(mode):
    if mode == "rn":
        return np.multiply
    return lambda a, b: fr.to_f32(np.asarray(a, F64) * b, mode)


@semantic("add", "sub", "mul")
def build_add_sub_mul(ins, oc):
    base = ins.base
    types = ins.types
    if len(types) == 2 and base != "mul":  # mixed precision add/sub.f32.{f16,bf16}
        return _build_mixed(ins, oc)
    t = ptype(ins)
    et = elem(t)
    half = et in ("f16", "bf16")
    mode = check(ins, oc, types=FLOAT_TYPES, n_src=2, allowed=("ftz", "sat"),
                 rnd_ok=("rn",) if half else ROUNDING)
    f, s = mods_ftz_sat(ins, oc, et, sat_ok=t not in ("f32x2", "f64"))
    sub = base == "sub"
    if et == "f32":
        fn = _f32_mul(mode) if base == "mul" else _f32_addsub(mode, sub)
        array = mode != "rn"
    elif et == "f64":
        if base == "mul":
            fn = np.multiply if mode == "rn" else (lambda a, b: fr.mul64(a, b, mode))
        elif mode == "rn":
            fn = np.subtract if sub else np.add
        else:
            fn = (lambda a, b: fr.add64(a, -b, mode)) if sub else (lambda a, b: fr.add64(a, b, mode))
        array = mode != "rn"
    elif et == "f16":  # NumPy's binary16 arithmetic rounds the exact binary32 result once
        fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[base]
        array = False
    else:
        fn = bf16_via_f32({"add": np.add, "sub": np.subtract, "mul": np.multiply}[base])
        array = True
    if f:
        fn = pre_ftz(fn, et)
    return build_elementwise(ins, oc, t, post(fn, et, ftz_out=f, sat_out=s), array=array)


def _build_mixed(ins, oc):
    """add/sub{.rnd}{.sat}.f32.{f16,bf16} d, a, c: a converted exactly to f32."""
    dt, at = ins.types
    if dt != "f32" or at not in ("f16", "bf16"):
        raise oc.unsupported(ins, "type combination")
    mode = check(ins, oc, types=("f16", "bf16"), n_src=2, allowed=("sat",), rnd_ok=ROUNDING)
    fn = _f32_addsub(mode, ins.base == "sub")
    cv = (lambda x: np.asarray(x, F32)) if at == "f16" else fr.bf16_to_f32
    inner = post(fn, "f32", sat_out=ins.has("sat"))
    return build_elementwise(ins, oc, "f32", lambda a, c: inner(cv(a), c), array=True, src_types=[at, "f32"])


# ---------------------------------------------------------------- fma / mad


@semantic("fma", "mad")
def build_fma(ins, oc):
    types = ins.types
    mad = ins.base == "mad"
    if len(types) == 2:
        return _build_mixed_fma(ins, oc)
    t = ptype(ins)
    et = elem(t)
    half = et in ("f16", "bf16")
    if mad and (half or t == "f32x2"):
        raise oc.unsupported(ins, f"type .{t}")
    # fma requires a rounding modifier; legacy mad without one means .rn (PTX ISA errata)
    mode = check(ins, oc, types=FLOAT_TYPES, n_src=3, allowed=("ftz", "sat", "relu"),
                 rnd_ok=("rn",) if half else ROUNDING, rnd_default="rn" if mad else None)
    f, s = mods_ftz_sat(ins, oc, et, sat_ok=t not in ("f32x2", "f64"))
    rl = ins.has("relu")
    if rl and not half:
        raise oc.unsupported(ins, ".relu")
    if et == "f32":
        def fn(a, b, c):
            y = fr.fma32(a, b, c, mode)
            if mode == "rm":
                y = fr.zero_sum_rm(y, np.asarray(a, F64) * b, c)
            return y
    elif et == "f64":
        def fn(a, b, c):
            return fr.fma64(a, b, c, mode)
    elif et == "f16":
        def fn(a, b, c):
            return fr.fma_via64(a.astype(F64), b.astype(F64), c.astype(F64)).astype(F16)
    else:
        def fn(a, b, c):
            s64 = fr.fma_via64(*[fr.bf16_to_f32(x).astype(F64) for x in (a, b, c)])
            return fr.f32_to_bf16_rn(fr.f64_to_f32_odd(s64))
    if f:
        fn = pre_ftz(fn, et)
    return build_elementwise(ins, oc, t, post(fn, et, ftz_out=f, sat_out=s, relu_out=rl), array=et != "f32")


def _build_mixed_fma(ins, oc):
    """fma.rnd{.sat}.f32.{f16,bf16} d, a, b, c: a, b converted exactly to f32."""
    dt, at = ins.types
    if ins.base != "fma" or dt != "f32" or at not in ("f16", "bf16"):
        raise oc.unsupported(ins, "type combination")
    mode = check(ins, oc, types=("f16", "bf16"), n_src=3, allowed=("sat",), rnd_ok=ROUNDING, rnd_default=None)
    cv = (lambda x: np.asarray(x, F32)) if at == "f16" else fr.bf16_to_f32

    def fn(a, b, c):
        a, b = cv(a), cv(b)
        y = fr.fma32(a, b, c, mode)
        return fr.zero_sum_rm(y, a.astype(F64) * b, c) if mode == "rm" else y
    return build_elementwise(ins, oc, "f32", post(fn, "f32", sat_out=ins.has("sat")), array=True,
                             src_types=[at, at, "f32"])


# ---------------------------------------------------------------- div / rcp / sqrt / rsqrt


@semantic("div")
def build_div(ins, oc):
    t = ins.type
    approx, full = ins.has("approx"), ins.has("full")
    mode = check(ins, oc, types=("f32", "f64"), n_src=2, allowed=("ftz", "approx", "full"),
                 rnd_ok=() if (approx or full) else ROUNDING, rnd_default=None)
    f = ins.has("ftz")
    if t == "f64":
        if approx or full or f:
            raise oc.unsupported(ins, "modifier (only .rnd for .f64)")
        return build_elementwise(ins, oc, t, lambda a, b: fr.div64(a, b, mode), array=mode != "rn")
    if approx and full or (approx or full) == (mode is not None):
        raise oc.unsupported(ins, "exactly one of .approx, .full or a rounding modifier is required")
    if approx:  # d = a * (1/b) with a flush-to-zero reciprocal
        def fn(a, b):
            r = (1.0 / np.asarray(b, F64)).astype(F32)
            return a * ftz(r, "f32")
    elif full:
        def fn(a, b):
            return (np.asarray(a, F64) / b).astype(F32)
    else:
        def fn(a, b):
            return fr.to_f32(np.asarray(a, F64) / b, mode)
    if f:
        fn = pre_ftz(fn, "f32")
    return build_elementwise(ins, oc, t, post(fn, "f32", ftz_out=f), array=True)


@semantic("rcp")
def build_rcp(ins, oc):
    t = ins.type
    approx = ins.has("approx")
    mode = check(ins, oc, types=("f32", "f64"), n_src=1, allowed=("ftz", "approx"),
                 rnd_ok=() if approx else ROUNDING, rnd_default=None)
    f = ins.has("ftz")
    if not approx and mode is None:
        raise oc.unsupported(ins, "one of .approx or a rounding modifier is required")
    if t == "f64":
        if approx:
            if not f:
                raise oc.unsupported(ins, ".approx without .ftz for .f64")
            return build_elementwise(ins, oc, t, lambda a: _gross_f64(a, lambda x: 1.0 / x), array=True)
        if f:
            raise oc.unsupported(ins, ".ftz for .f64")
        return build_elementwise(ins, oc, t, lambda a: fr.div64(np.ones_like(a), a, mode), array=True)
    if approx:  # max 1 ulp: the correctly rounded reciprocal qualifies
        fn = lambda a: (1.0 / np.asarray(a, F64)).astype(F32)
    else:
        fn = lambda a: fr.to_f32(1.0 / np.asarray(a, F64), mode)
    if f:
        fn = pre_ftz(fn, "f32")
    return build_elementwise(ins, oc, t, post(fn, "f32", ftz_out=f), array=True)


@semantic("sqrt")
def build_sqrt(ins, oc):
    t = ins.type
    approx = ins.has("approx")
    mode = check(ins, oc, types=("f32", "f64"), n_src=1, allowed=("ftz", "approx"),
                 rnd_ok=() if approx else ROUNDING, rnd_default=None)
    f = ins.has("ftz")
    if not approx and mode is None:
        raise oc.unsupported(ins, "one of .approx or a rounding modifier is required")
    if t == "f64":
        if approx or f:
            raise oc.unsupported(ins, "modifier (only .rnd for .f64)")
        return build_elementwise(ins, oc, t, lambda a: fr.sqrt64(a, mode), array=mode != "rn")
    if approx:  # max relative error 2**-23: the correctly rounded root qualifies
        fn = np.sqrt
    else:
        fn = lambda a: fr.to_f32(np.sqrt(np.asarray(a, F64)), mode)
    if f:
        fn = pre_ftz(fn, "f32")
    return build_elementwise(ins, oc, t, post(fn, "f32", ftz_out=f), array=True)


@semantic("rsqrt")
def build_rsqrt(ins, oc):
    t = ins.type
    check(ins, oc, types=("f32", "f64"), n_src=1, allowed=("ftz", "approx"), rnd_ok=())
    f = ins.has("ftz")
    if not ins.has("approx"):
        raise oc.unsupported(ins, ".approx is required")
    if t == "f64":
        if f:
            return build_elementwise(ins, oc, t, lambda a: _gross_f64(a, lambda x: 1.0 / np.sqrt(x)), array=True)
        return build_elementwise(ins, oc, t, lambda a: 1.0 / np.sqrt(a))
    fn = lambda a: (1.0 / np.sqrt(np.asarray(a, F64))).astype(F32)
    if f:
        fn = pre_ftz(fn, "f32")
    return build_elementwise(ins, oc, t, post(fn, "f32", ftz_out=f), array=True)


_HI32 = np.uint64(0xFFFFFFFF00000000)
_F64_CANON_NAN_HI = np.uint64(0x7FFFFFFF00000000)
_F64_TINY = F64(2.0 ** -1022)


def _gross_f64(a, op):
    """rcp/rsqrt.approx.ftz.f64: op on the upper 32 bits of a (subnormals flushed), result
    truncated to its upper 32 bits, NaN -> 0x7fffffff00000000."""
    x = (a.view(np.uint64) & _HI32).view(F64)
    x = x * (np.abs(x) >= _F64_TINY)
    r = op(x)
    r = r * (np.abs(r) >= _F64_TINY)
    bits = r.view(np.uint64) & _HI32
    nan = np.isnan(r)
    if np.count_nonzero(nan):
        bits = np.where(nan, _F64_CANON_NAN_HI, bits)
    return bits.view(F64)


# the rest of the family (abs neg min max sin cos lg2 ex2 tanh) registers itself on import
from tlpsim.functional.semantics import floating_misc  # noqa: F401
