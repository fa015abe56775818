"""The C types of a `__global__` kernel's parameters, read from its CUDA source.

PTX keeps only a parameter's width (a `float*` is a `.u64`), so an array of the wrong
element type passed for a pointer is reinterpreted bit by bit, as on a GPU and in
CuPy; knowing the pointee type lets a launch warn about it. Only what can be read
with certainty is returned: a kernel defined once under that name, and pointers to
the built-in arithmetic types (a template parameter, a struct or a typedef this
file does not know gives None)."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["kernel_parameters", "pointee_dtype"]

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct"}
_TYPES = {
    "float": "f4", "double": "f8", "__half": "f2", "half": "f2", "bool": "?",
    "char": "i1", "signed char": "i1", "int8_t": "i1", "unsigned char": "u1", "uint8_t": "u1",
    "short": "i2", "short int": "i2", "int16_t": "i2", "unsigned short": "u2", "unsigned short int": "u2",
    "uint16_t": "u2", "int": "i4", "signed int": "i4", "signed": "i4", "int32_t": "i4", "unsigned": "u4",
    "unsigned int": "u4", "uint32_t": "u4", "uint": "u4", "long": "i8", "long int": "i8", "long long": "i8",
    "long long int": "i8", "int64_t": "i8", "unsigned long": "u8", "unsigned long int": "u8",
    "unsigned long long": "u8", "unsigned long long int": "u8", "uint64_t": "u8", "size_t": "u8",
}


def kernel_parameters(source: str, name: str) -> list[str] | None:
    """The parameter declarations (`"const float *x"`, ...) of the `__global__`
    function `name` (unqualified, no template arguments) in `source`, or None when
    it is not defined there exactly once."""
    text = _COMMENTS.sub(" ", source)
    found: set[tuple[str, ...]] = set()
    for m in re.finditer(rf"(?<![\w:]){re.escape(name)}\s*\(", text):
        head = text[max(text.rfind(c, 0, m.start()) for c in ";{}") + 1:m.start()]
        if "__global__" not in head:
            continue
        depth, k = 1, m.end()
        while depth and k < len(text):
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        if depth:
            return None
        found.add(tuple(_split_top(text[m.end():k - 1])))
    return list(next(iter(found))) if len(found) == 1 else None


def _split_top(params: str) -> list[str]:
    out, depth, cur = [], 0, []
    for c in params:
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    last = "".join(cur).strip()
    if last and last != "void":
        out.append(last)
    return [" ".join(p.split()) for p in out]


def pointee_dtype(decl: str) -> np.dtype | None:
    """The element type of a pointer parameter `decl` ("const float* __restrict__ x"),
    or None when it is not a single pointer to a built-in arithmetic type."""
    decl = decl.split("=")[0]
    if decl.count("*") != 1 or "[" in decl or "(" in decl:
        return None
    words = [w for w in decl.split("*")[0].replace("&", " ").split() if w not in _QUALIFIERS]
    code = _TYPES.get(" ".join(words))
    return None if code is None else np.dtype(code)
