"""Floating-point abs, neg, min, max and the approximate transcendentals sin cos lg2
ex2 tanh (PTX ISA 9.7.3 / 9.7.4). Imported by `floating`, whose operand plumbing it uses.

* abs/neg only touch the sign bit (NaN payloads kept; abs.f64 passes NaN unchanged as
  PTX specifies); .ftz flushes the input first.
* min/max follow the PTX pseudo-code: a NaN operand is ignored unless both are NaN,
  -0.0 < +0.0, .NaN returns the canonical NaN (0x7fffffff / 0x7fff) if any input is
  NaN, .xorsign.abs and three-input .f32 forms (.abs) are supported.
* The .approx functions return the correctly rounded value of the binary64 function
  (well inside the documented bounds: sin/cos 2**-20.5 abs., lg2 2**-22, ex2 2 ulp,
  tanh 2**-11 rel., f16 ex2 2**-9.9, bf16 ex2 2**-7) with the documented special cases
  (sin(+-Inf) = NaN, lg2(+-0) = -Inf, ex2(-Inf) = +0, tanh(+-Inf) = +-1, ...).
"""

from __future__ import annotations

import numpy as np

from tlpsim.functional.semantics import fpround as fr
from tlpsim.functional.semantics import semantic
from tlpsim.functional.semantics.floating import (
    CANON_NAN,
    F16,
    F32,
    F64,
    build_elementwise,
    check,
    elem,
    ftz,
    post,
    pre_ftz,
)

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}

# ---------------------------------------------------------------- abs / neg


@semantic("abs", "neg")
def build_abs_neg(ins, oc):
    t = ins.type
    et = elem(t)
    check(ins, oc, types=("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"), n_src=1, allowed=("ftz",), rnd_ok=())
    f = ins.has("ftz")
    if f and et not in ("f32", "f16"):
        raise oc.unsupported(ins, ".ftz")
    neg = ins.base == "neg"
    if et == "bf16":
        fn = (lambda x: x ^ np.uint16(0x8000)) if neg else (lambda x: x & np.uint16(0x7FFF))
    elif neg:
        fn = np.negative
    elif et == "f64":  # abs.f64: NaN input is passed through unchanged
        fn = lambda x: np.where(np.isnan(x), x, np.abs(x))
    else:
        fn = np.abs
    if f:
        fn = pre_ftz(fn, et)
    return build_elementwise(ins, oc, t, fn, array=et == "bf16")


# ---------------------------------------------------------------- min / max


def _two(is_max: bool, nan_mode: bool, et: str):
    """min/max of two float arrays with -0.0 < +0.0 and the NaN rules."""
    ufunc = np.fmax if is_max else np.fmin
    ui = _UINT[np.dtype(F32 if et == "bf16" else {"f32": F32, "f64": F64, "f16": F16}[et]).itemsize]
    canon = CANON_NAN["f32" if et == "bf16" else et]

    def fn(x, y):
        r = ufunc(x, y)
        zz = (x == 0) & (y == 0)
        if np.count_nonzero(zz):
            xb, yb = x.view(ui), y.view(ui)
            r = np.where(zz, ((xb & yb) if is_max else (xb | yb)).view(x.dtype), r)
        if nan_mode:
            nan = np.isnan(x) | np.isnan(y)
            if np.count_nonzero(nan):
                r = np.where(nan, canon, r)
        return r
    return fn


@semantic("min", "max")
def build_min_max(ins, oc):
    t = ins.type
    et = elem(t)
    n = len(ins.srcs)
    check(ins, oc, types=("f32", "f64", "f16", "f16x2", "bf16", "bf16x2"), n_src=n,
          allowed=("ftz", "NaN", "xorsign", "abs"), rnd_ok=())
    f, nan_mode, xs, ab = ins.has("ftz"), ins.has("NaN"), ins.has("xorsign"), ins.has("abs")
    if n not in (2, 3) or (n == 3 and t != "f32"):
        raise oc.unsupported(ins, "operand count")
    if (f and et not in ("f32", "f16")) or (t == "f64" and (nan_mode or ab)):
        raise oc.unsupported(ins, "modifier")
    if xs != ab and n == 2 or (xs and n == 3):
        raise oc.unsupported(ins, ".xorsign requires .abs (two inputs only); .abs alone needs three inputs")
    two = _two(ins.base == "max", nan_mode, et)

    def fn(*v):
        if et == "bf16":
            v = [fr.bf16_to_f32(x) for x in v]
        if f:
            v = [ftz(x, et) for x in v]
        if xs:
            sgn = np.signbit(v[0]) ^ np.signbit(v[1])
        if ab:
            v = [np.abs(x) for x in v]
        r = two(v[0], v[1])
        if n == 3:
            r = two(r, v[2])
        if xs:
            r = np.where(sgn & ~np.isnan(r), -r, r)
        if et == "bf16":
            return (r.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        return r
    return build_elementwise(ins, oc, t, fn, array=True)


# ---------------------------------------------------------------- transcendentals

_FUNCS = {"sin": np.sin, "cos": np.cos, "lg2": np.log2, "ex2": np.exp2, "tanh": np.tanh}


@semantic("sin", "cos", "lg2", "ex2", "tanh")
def build_transcendental(ins, oc):
    base = ins.base
    t = ins.type
    et = elem(t)
    types = {"tanh": ("f32", "f16", "f16x2", "bf16", "bf16x2"), "ex2": ("f32", "f16", "f16x2", "bf16", "bf16x2")}
    check(ins, oc, types=types.get(base, ("f32",)), n_src=1, allowed=("approx", "ftz"), rnd_ok=())
    if not ins.has("approx"):
        raise oc.unsupported(ins, ".approx is required")
    f = ins.has("ftz")
    if f and not (et == "f32" and base != "tanh" or et == "bf16" and base == "ex2"):
        raise oc.unsupported(ins, ".ftz")
    if et == "bf16" and base == "ex2":
        f = True  # ex2.approx.ftz.bf16: subnormal inputs and results are flushed
    func = _FUNCS[base]
    if et == "f32":
        fn = lambda x: func(np.asarray(x, F64)).astype(F32)
    elif et == "f16":
        fn = lambda x: func(np.asarray(x, F64)).astype(F16)
    else:
        fn = lambda x: fr.f32_to_bf16_rn(fr.f64_to_f32_odd(func(fr.bf16_to_f32(x).astype(F64))))
    if f:
        fn = post(pre_ftz(fn, et), et, ftz_out=True)
    return build_elementwise(ins, oc, t, fn, array=et == "bf16")
