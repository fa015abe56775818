"""C `printf` formatting for device-side `printf` (CUDA's `vprintf`).

nvcc compiles `printf(fmt, a, b, ...)` in a kernel to `vprintf(fmt, buf)`: `fmt`
points at the format string (a `.global` constant) and `buf` at a local buffer
holding the arguments after C's default promotions (float -> double, char/short
-> int), each aligned to its own size. `parse_format` splits a format string into
literal text and conversions; `Conversion.size` says how many bytes of `buf` an
argument takes; `format_value` renders one argument as glibc would.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

# %[flags][width][.precision][length]conversion
_SPEC = re.compile(r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
                   r"(?P<length>hh|h|ll|l|j|z|t|L|q)?(?P<conv>[diouxXcsfFeEgGaApn%])")

MAX_ARGS = 32  # CUDA's limit on printf arguments


@dataclass(frozen=True)
class Conversion:
    """One `%...` conversion: its text as written and how to read its argument."""

    text: str
    flags: str
    width: str | None
    prec: str | None
    length: str
    conv: str

    @property
    def size(self) -> int:
        """Bytes the (promoted) argument occupies in the argument buffer."""
        if self.conv in "sp":
            return 8
        if self.conv in "fFeEgGaA":
            return 8  # float is promoted to double
        if self.conv == "%":
            return 0
        return 8 if self.length in ("l", "ll", "j", "z", "t", "q") else 4

    @property
    def star_args(self) -> int:
        return (self.width == "*") + (self.prec == "*")


def parse_format(fmt: str) -> list[str | Conversion]:
    """Literal strings and Conversions in order. A `%` that starts no valid
    conversion is printed as written (glibc does the same)."""
    out: list[str | Conversion] = []
    pos = 0
    while True:
        k = fmt.find("%", pos)
        if k < 0:
            break
        m = _SPEC.match(fmt, k)
        if m is None:
            out.append(fmt[pos: k + 1])
            pos = k + 1
            continue
        if k > pos:
            out.append(fmt[pos:k])
        if m.group("conv") == "%":
            out.append("%")
        else:
            out.append(Conversion(m.group(0), m.group("flags").replace("'", ""), m.group("width"), m.group("prec"),
                                  m.group("length") or "", m.group("conv")))
        pos = m.end()
    if pos < len(fmt):
        out.append(fmt[pos:])
    return out


def layout(pieces: list[str | Conversion]) -> list[tuple[int, int]]:
    """(offset, size) in the argument buffer of every argument the conversions
    read, in order (a `*` width or precision is an int argument of its own)."""
    slots = []
    off = 0
    for p in pieces:
        if isinstance(p, str):
            continue
        sizes = [4] * p.star_args + ([p.size] if p.conv != "n" else [8])
        for size in sizes:
            off = -(-off // size) * size
            slots.append((off, size))
            off += size
    return slots


def _int_value(raw: int, size: int, conv: Conversion) -> int:
    bits = 8 * size
    if conv.length == "hh":
        bits = 8
    elif conv.length == "h":
        bits = 16
    raw &= (1 << bits) - 1
    if conv.conv in "di" and raw >> (bits - 1):
        raw -= 1 << bits
    return raw


def format_value(conv: Conversion, raw: int, text: str | None = None, width: int | None = None,
                 prec: int | None = None) -> str:
    """Render one argument: `raw` is the argument's bits (as an unsigned integer of
    `conv.size` bytes); `text` is the string a `%s` pointer points to."""
    flags = conv.flags
    w = conv.width if conv.width != "*" else None
    p = conv.prec if conv.prec != "*" else None
    if width is not None:
        if width < 0:
            flags, width = flags + "-", -width
        w = str(width)
    if prec is not None and prec >= 0:
        p = str(prec)
    elif conv.prec == "*":
        p = None
    spec = "%" + flags + (w or "") + ("." + (p or "0") if p is not None else "")
    c = conv.conv
    if c in "di":
        return (spec + "d") % _int_value(raw, conv.size, conv)
    if c == "o" and "#" in flags:  # C's alternate octal form is a leading 0, Python's is 0o
        v = _int_value(raw, conv.size, conv)
        return (spec.replace("#", "") + "s") % (("0" if v else "") + f"{v:o}") if p is None else \
            (spec.replace("#", "") + "o") % v
    if c in "ouxX":
        return (spec + c) % _int_value(raw, conv.size, conv)
    if c == "c":
        return (spec.replace(".", "") + "s") % chr(raw & 0xFF)
    if c == "s":
        return (spec + "s") % ("(null)" if text is None else text)
    if c == "p":
        body = "(nil)" if raw == 0 else f"{raw:#x}"
        return (spec.split(".")[0] + "s") % body
    if c == "n":
        return ""
    value = struct.unpack("<d", struct.pack("<Q", raw & 0xFFFFFFFFFFFFFFFF))[0]
    if c in "aA":
        return _hexfloat(value, spec, c)
    return (spec + c) % value


def _hexfloat(value: float, spec: str, c: str) -> str:
    if math.isinf(value) or math.isnan(value):
        body = ("-" if value < 0 else "") + ("inf" if math.isinf(value) else "nan")
    else:
        sign = "-" if math.copysign(1, value) < 0 else ""
        body = re.sub(r"\.?0+p", "p", value.hex()) if value != 0 else sign + "0x0p+0"
    if c == "A":
        body = body.upper()
    return (spec.split(".")[0] + "s") % body
