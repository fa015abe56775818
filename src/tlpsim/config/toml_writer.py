"""A small TOML writer for resolved configs (the standard library only reads TOML).

Handles what configs contain: tables, strings, bools, ints, floats, arrays of
those, and inline tables. `None` values are omitted (TOML has no null; an
omitted optional field reads back as its default, None). Policy choices are
written as a bare string when they have no parameters, else as an inline table.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["dumps"]

_BARE = re.compile(r"[A-Za-z0-9_\-]+")


def _string(s: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes; TOML also forbids a raw DEL
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(k: str) -> str:
    return k if _BARE.fullmatch(k) else _string(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        text = repr(v)
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        items = [f"{_key(k)} = {_value(x)}" for k, x in v.items() if x is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"cannot write {type(v).__name__} to TOML: {v!r}")


def _is_policy(v: Any) -> bool:
    return isinstance(v, dict) and "impl" in v


def _table(lines: list[str], path: list[str], data: dict) -> None:
    scalars = [(k, v) for k, v in data.items() if v is not None and not (isinstance(v, dict) and not _is_policy(v))]
    tables = [(k, v) for k, v in data.items() if isinstance(v, dict) and not _is_policy(v)]
    if path and (scalars or not tables):
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for k, v in scalars:
        if _is_policy(v) and len(v) == 1:
            v = v["impl"]
        lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in tables:
        _table(lines, path + [k], v)


def dumps(data: dict, header: str = "") -> str:
    """TOML text for a nested dict; `header` lines are written as leading comments."""
    lines = [f"# {h}".rstrip() for h in header.splitlines()] if header else []
    _table(lines, [], data)
    return "\n".join(lines).lstrip("\n") + "\n"
