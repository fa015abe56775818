"""Unit-bearing field types and the `field()` helper used by every config section.

Every config field is declared with `field(default, "what it is", unit="cycles")`;
the description and unit land in the pydantic field metadata
(`FieldInfo.description`, `FieldInfo.json_schema_extra["unit"]`) so that
documentation, `tlpsim config --explain`-style listings and the tests can read
them. A field without a description is a bug (a test walks the whole tree).

Annotated types accept either a number or a string with a unit, the way gem5's
`MemorySize` and `Frequency` params do:

- `KiB` (an int count of KiB): `16`, `"16KiB"`, `"16KB"`, `"2MiB"` (KB and MB are
  read as binary units, as GPU documentation uses them), `"16384B"`.
- `Bytes` (an int count of bytes): `49152`, `"48KiB"`, `"48K"`, `"128B"`.
- `MHz` (a float): `700`, `"700MHz"`, `"1.4GHz"`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

__all__ = ["Bytes", "KiB", "MHz", "field", "parse_bytes", "parse_mhz", "unit_of"]

_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KkMmGg]?)(i?)([Bb]?)\s*$")
_SCALE = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_FREQ_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([kKmMgG]?)(?:[hH][zZ])?\s*$")
_FSCALE = {"": 1e-6, "k": 1e-3, "m": 1.0, "g": 1e3}  # to MHz; a bare number is MHz (handled below)


def parse_bytes(value: Any) -> Any:
    """Convert "48KiB"/"2MiB"/"128B"/"4096" to a byte count; pass anything else on
    unchanged for pydantic to check (so a wrong type still gets pydantic's error)."""
    if isinstance(value, str):
        m = _SIZE_RE.match(value)
        if not m:
            raise ValueError(f"not a size: {value!r} (write e.g. 49152, \"48KiB\" or \"2MiB\")")
        number, prefix, _i, _b = m.groups()
        amount = float(number) * _SCALE[prefix.lower()]
        if amount != int(amount):
            raise ValueError(f"size {value!r} is not a whole number of bytes")
        return int(amount)
    return value


def _parse_kib(value: Any) -> Any:
    """Convert a size string to KiB ("2MiB" -> 2048, "16KiB" -> 16); a bare number
    (int or numeric string) is already KiB."""
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[0-9]+", text):
            return int(text)
        nbytes = parse_bytes(text)
        if nbytes % 1024:
            raise ValueError(f"size {value!r} is not a whole number of KiB")
        return nbytes // 1024
    return value


def parse_mhz(value: Any) -> Any:
    """Convert "1.4GHz"/"700MHz"/"924" to MHz (a bare number is MHz)."""
    if isinstance(value, str):
        m = _FREQ_RE.match(value)
        if not m:
            raise ValueError(f"not a frequency: {value!r} (write e.g. 700, \"700MHz\" or \"1.4GHz\")")
        number, prefix = m.groups()
        has_unit = value.strip().lower().endswith("hz") or bool(prefix)
        if not has_unit:
            return float(number)
        return float(number) * _FSCALE[prefix.lower()]
    return value


KiB = Annotated[int, BeforeValidator(_parse_kib)]
Bytes = Annotated[int, BeforeValidator(parse_bytes)]
MHz = Annotated[float, BeforeValidator(parse_mhz)]


def field(default: Any = ..., description: str = "", *, unit: str | None = None, **kwargs: Any) -> Any:
    """A pydantic `Field` with a mandatory description and an optional unit.

    `unit` is stored in `json_schema_extra["unit"]` (e.g. "cycles", "bytes",
    "KiB", "MHz", "core cycles", "DRAM cycles"). Range constraints (`ge`, `le`,
    `gt`, `multiple_of`) pass through to pydantic."""
    if not description:
        raise TypeError("every config field needs a description")
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    if unit is not None:
        extra["unit"] = unit
    return Field(default, description=description, json_schema_extra=extra or None, **kwargs)


def unit_of(field_info: Any) -> str | None:
    """The unit recorded by `field()` for a pydantic FieldInfo, or None."""
    extra = field_info.json_schema_extra
    if isinstance(extra, dict):
        unit = extra.get("unit")
        return unit if isinstance(unit, str) else None
    return None
