"""Compile options as users write them (nvcc's or NVRTC's spelling, as in CuPy's
`RawModule(options=...)`), split into what tlpsim tracks itself — include
directories, macro definitions, the C++ standard, the register cap — and the rest,
passed to nvcc unchanged. Tracking them means the PTX cache key covers headers
found through `-I`, and a `--std` replaces tlpsim's default instead of clashing
with it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tlpsim.errors import TlpsimError

DEFAULT_STD = "c++17"
STANDARDS = ("c++03", "c++11", "c++14", "c++17", "c++20")


@dataclass(frozen=True)
class CompileOptions:
    include_dirs: tuple[str, ...] = ()
    defines: dict[str, str | None] = field(default_factory=dict)
    std: str = DEFAULT_STD
    maxrregcount: int | None = None
    rest: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"include_dirs": list(self.include_dirs), "defines": dict(self.defines), "std": self.std,
                "maxrregcount": self.maxrregcount, "options": list(self.rest)}


# option spellings that take a value: (short, long)
_VALUED = {"I": ("-I", "--include-path"), "D": ("-D", "--define-macro"), "std": ("-std", "--std"),
           "maxrregcount": ("-maxrregcount", "--maxrregcount")}


def _value(opts: list[str], k: int, spellings: tuple[str, str]) -> tuple[str, int] | None:
    """(value, options consumed) if opts[k] is one of `spellings` with its value."""
    o = opts[k]
    short, long_ = spellings
    for sp in (long_, short):
        if o == sp:
            if k + 1 >= len(opts):
                raise TlpsimError(f"compile option {o} needs a value")
            return opts[k + 1], 2
        if o.startswith(sp + "="):
            return o[len(sp) + 1:], 1
    if short in ("-I", "-D") and o.startswith(short) and len(o) > 2:
        return o[2:], 1
    return None


def split_options(options: str | Sequence[str] = (), *, include_dirs: Sequence[str] = (),
                  defines: dict | None = None, std: str | None = None,
                  maxrregcount: int | None = None) -> CompileOptions:
    """Parse `options` (a string is split at whitespace) and merge the explicit
    keywords; a bad value is a TlpsimError naming the option."""
    if isinstance(options, str):
        options = options.split()
    opts = [str(o) for o in options]
    incs = [str(d) for d in include_dirs]
    defs = dict(defines or {})
    rest: list[str] = []
    k = 0
    while k < len(opts):
        for key, sp in _VALUED.items():
            got = _value(opts, k, sp)
            if got is not None:
                value, used = got
                if key == "I":
                    incs.append(value)
                elif key == "D":
                    name, eq, val = value.partition("=")
                    defs[name] = val if eq else None
                elif key == "std":
                    std = value
                else:
                    maxrregcount = _regcount(value)
                k += used
                break
        else:
            rest.append(opts[k])
            k += 1
    std = std or DEFAULT_STD
    if std not in STANDARDS:
        raise TlpsimError(f"--std={std}: not a C++ standard nvcc knows (use one of {', '.join(STANDARDS)})")
    return CompileOptions(tuple(dict.fromkeys(incs)), defs, std, maxrregcount, tuple(rest))


def _regcount(value) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if n <= 0:
        raise TlpsimError(f"-maxrregcount={value}: must be a positive integer")
    return n


__all__ = ["CompileOptions", "DEFAULT_STD", "STANDARDS", "split_options"]
