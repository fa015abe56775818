"""Exact rounding reference shared by the floating-point and conversion semantic
tests: a rational rounded to a binary format in a PTX rounding mode."""

from __future__ import annotations

import math
from fractions import Fraction as Q

FMT = {"f64": (53, -1022, 1023), "f32": (24, -126, 127), "f16": (11, -14, 15), "bf16": (8, -126, 127),
       "tf32": (11, -126, 127)}


def rnd(q: Q, fmt: str, mode: str, zsign: float = 1.0) -> float:
    """Exact rational q rounded to fmt in mode (zsign: sign of a zero result)."""
    p, emin, emax = FMT[fmt]
    if q == 0:
        return math.copysign(0.0, zsign)
    s = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    e += 1 if Q(2) ** (e + 1) <= a else 0
    e -= 1 if Q(2) ** e > a else 0
    k = max(e, emin) - (p - 1)
    n = a / Q(2) ** k
    fl, frac = n.numerator // n.denominator, n - n.numerator // n.denominator
    if mode == "rn":
        fl += frac > Q(1, 2) or (frac == Q(1, 2) and fl % 2 == 1)
    elif mode == "rna":
        fl += frac >= Q(1, 2)
    elif (mode == "rm" and s < 0 or mode == "rp" and s > 0) and frac:
        fl += 1
    v = fl * Q(2) ** k
    mx = (2 - Q(1, 2 ** (p - 1))) * Q(2) ** emax
    if v > mx:
        if mode in ("rn", "rna") or (mode == "rp" and s > 0) or (mode == "rm" and s < 0):
            return s * math.inf
        v = mx
    return math.copysign(float(v), s) if v else math.copysign(0.0, s)
