"""Dotted-key overrides (`sm.max_ctas=3`) applied to a raw config dict, schema
walking, value parsing, and turning pydantic errors into `ConfigError`s that
name the full dotted key.

Override forms (`apply_overrides`):

- `"sm.max_ctas=3"` strings (as from `--set`), or a mapping `{"sm.max_ctas": 3}`;
  string values are converted by the field's type (pydantic's lax parsing:
  "3" → 3, "true" → True, "1.5" → 1.5; sizes "48KiB" and clocks "1.4GHz" where
  the field is a size or a clock; "none" for optional fields).
- A policy choice: `sm.warp_scheduler=lrr` replaces the whole choice (params
  dropped); `sm.warp_scheduler.impl=lrr` changes only the name;
  `sm.warp_scheduler.active_warps=8` sets one parameter (value parsed as a TOML
  literal: 8 → int, 0.5 → float, true → bool, anything else a string);
  `sm.warp_scheduler={impl="two_level", active_warps=8}` sets it from an inline
  table.
- A whole section from an inline table, e.g. `l1d={size_kb=32, assoc=8}`: the
  keys it names are set, the others keep their values.
- Free-form tables (`power.table`): `power.table.rf_bank.leakage_mw=2.8`; a
  table value (`power.table={...}`) replaces the whole table.
"""

from __future__ import annotations

import difflib
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from tlpsim.config.policy import PolicyChoice
from tlpsim.errors import ConfigError

__all__ = ["all_keys", "apply_overrides", "parse_literal", "parse_override", "parse_overrides", "suggest",
           "validate_raw"]


# --------------------------------------------------------------------------- schema walking


def _strip_optional(ann: Any) -> tuple[Any, bool]:
    """(inner annotation, allows None) for `X | None` / Optional[X] / Annotated."""
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _strip_optional(typing.get_args(ann)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        allows_none = len(args) < len(typing.get_args(ann))
        if len(args) == 1:
            inner, _ = _strip_optional(args[0])
            return inner, allows_none
        return ann, allows_none
    return ann, False


def _kind(ann: Any) -> tuple[str, Any]:
    """Classify a field annotation: ('policy'|'section'|'dict'|'value', inner)."""
    inner, _ = _strip_optional(ann)
    if isinstance(inner, type) and issubclass(inner, PolicyChoice):
        return "policy", inner
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return "section", inner
    if inner is dict or typing.get_origin(inner) is dict:
        return "dict", inner
    return "value", inner


def all_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every settable dotted key of the schema (policy choices and free-form
    tables count as leaves)."""
    out: list[str] = []
    for name, info in model.model_fields.items():
        key = f"{prefix}{name}"
        kind, inner = _kind(info.annotation)
        if kind == "section":
            out += all_keys(inner, key + ".")
        else:
            out.append(key)
    return out


def suggest(bad: str, keys: Sequence[str]) -> list[str]:
    """Close matches for a misspelt dotted key: by the whole key, and by its last
    part (so `gpu.max_ctas` suggests `sm.max_ctas`)."""
    found = difflib.get_close_matches(bad, keys, n=3, cutoff=0.6)
    leaf = bad.rsplit(".", 1)[-1]
    leaves = {k.rsplit(".", 1)[-1]: [] for k in keys}
    for k in keys:
        leaves[k.rsplit(".", 1)[-1]].append(k)
    for near in difflib.get_close_matches(leaf, list(leaves), n=3, cutoff=0.75):
        for k in leaves[near]:
            if k not in found:
                found.append(k)
    return found[:5]


def _unknown_key(key: str, root: type[BaseModel], section: str = "") -> ConfigError:
    keys = all_keys(root)
    hint = suggest(key, keys)
    text = f"unknown configuration key '{key}'"
    if hint:
        text += "; did you mean " + " or ".join(f"'{h}'" for h in hint) + "?"
    elif section:
        text += f"; the keys of [{section}] are: " + ", ".join(
            k[len(section) + 1:] for k in keys if k.startswith(section + "."))
    else:
        text += "; the sections are: " + ", ".join(root.model_fields)
    return ConfigError(text)


# --------------------------------------------------------------------------- values


def parse_literal(text: str) -> Any:
    """A TOML literal if `text` is one (8, 0.5, true, "x", [1, 2], {a = 1}), else the text itself."""
    s = text.strip()
    try:
        return tomllib.loads(f"v = {s}")["v"]
    except tomllib.TOMLDecodeError:
        return s


def parse_override(item: str) -> tuple[str, str]:
    """Split `"key=value"` (as given to `--set`)."""
    if "=" not in item:
        raise ConfigError(f"override {item!r} is not of the form key=value (e.g. sm.max_ctas=4)")
    key, value = item.split("=", 1)
    key = key.strip()
    if not key:
        raise ConfigError(f"override {item!r} has an empty key")
    return key, value.strip()


def parse_overrides(items: Sequence[str], option: str = "--set") -> dict[str, str]:
    """`--set` options as a dict; a key given twice with different values is an error
    (one would silently replace the other)."""
    out: dict[str, str] = {}
    for item in items:
        key, value = parse_override(item)
        if key in out and out[key] != value:
            raise ConfigError(f"{option} {key} is given twice ({option} {key}={out[key]} and {option} {key}={value}); "
                              "give it once")
        out[key] = value
    return out


def _typed_value(value: Any, ann: Any, kind: str) -> Any:
    if not isinstance(value, str):
        return value
    _inner, allows_none = _strip_optional(ann)
    if allows_none and value.strip().lower() in ("none", "null", ""):
        return None
    if kind in ("section", "dict"):
        parsed = parse_literal(value)
        return parsed
    return value.strip()


def _choice_dict(current: Any, key: str) -> dict:
    if current is None:
        return {}
    try:
        choice = PolicyChoice.model_validate(current)
    except ValidationError as exc:
        msg = exc.errors(include_url=False)[0].get("msg", "invalid").removeprefix("Value error, ")
        raise ConfigError(f"{key}: {msg}") from None
    return {"impl": choice.impl, **choice.params}


def _set_nested(target: dict, parts: list[str], value: Any, key: str) -> None:
    node = target
    for p in parts[:-1]:
        nxt = node.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            node[p] = nxt
        node = nxt
    node[parts[-1]] = value


# --------------------------------------------------------------------------- overrides


def _normalise(overrides: Mapping[str, Any] | Sequence[str] | str | None) -> list[tuple[str, Any]]:
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [parse_override(overrides)]
    if isinstance(overrides, Mapping):
        return [(str(k).strip(), v) for k, v in overrides.items()]
    out = []
    for item in overrides:
        if isinstance(item, str):
            out.append(parse_override(item))
        elif isinstance(item, tuple) and len(item) == 2:
            out.append((str(item[0]).strip(), item[1]))
        else:
            raise ConfigError(f"an override is 'key=value' or a (key, value) pair, got {item!r}")
    return out


def apply_overrides(raw: dict, overrides: Mapping[str, Any] | Sequence[str] | str | None,
                    root: type[BaseModel]) -> dict:
    """Apply dotted-key overrides to a raw (unvalidated) config dict, in order; the
    result still needs validation (`validate_raw`). Unknown keys raise
    `ConfigError` with suggestions."""
    raw = _deepcopy(raw)
    for key, value in _normalise(overrides):
        _apply_one(raw, key, value, root)
    return raw


def _merge_dicts(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge_dicts(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) \
            and "impl" not in v else v
    return out


def _deepcopy(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _deepcopy(v) for k, v in d.items()}
    if isinstance(d, list):
        return [_deepcopy(v) for v in d]
    return d


def _apply_one(raw: dict, key: str, value: Any, root: type[BaseModel]) -> None:
    parts = key.split(".")
    if any(not p for p in parts):
        raise ConfigError(f"malformed configuration key '{key}'")
    model: type[BaseModel] = root
    node = raw
    for i, part in enumerate(parts):
        here = ".".join(parts[: i + 1])
        fields = model.model_fields
        if part not in fields:
            raise _unknown_key(key, root, ".".join(parts[:i]))
        info = fields[part]
        kind, inner = _kind(info.annotation)
        rest = parts[i + 1:]
        if kind == "policy":
            current = node.get(part, info.get_default(call_default_factory=True))
            if not rest:
                if isinstance(value, str):
                    value = parse_literal(value) if value.strip().startswith("{") else value.strip()
                node[part] = value
            elif rest == ["impl"]:
                choice = _choice_dict(current, here)
                choice["impl"] = str(value).strip()
                node[part] = choice
            else:
                choice = _choice_dict(current, here)
                if "impl" not in choice:
                    raise ConfigError(f"{here} has no implementation to set '{'.'.join(rest)}' on; "
                                      f"set {here}=<name> first")
                parsed = parse_literal(value) if isinstance(value, str) else value
                params = {k: v for k, v in choice.items() if k != "impl"}
                _set_nested(params, rest, parsed, key)
                node[part] = {"impl": choice["impl"], **params}
            return
        if kind == "dict":
            if not rest:
                node[part] = _typed_value(value, info.annotation, kind)
            else:
                table = node.get(part)
                if not isinstance(table, dict):
                    table = _deepcopy(info.get_default(call_default_factory=True) or {})
                parsed = parse_literal(value) if isinstance(value, str) else value
                _set_nested(table, rest, parsed, key)
                node[part] = table
            return
        if kind == "section":
            if not rest:
                value = _typed_value(value, info.annotation, kind)
                current = node.get(part)
                if isinstance(value, dict) and isinstance(current, dict):
                    value = _merge_dicts(current, value)  # a table sets the keys it names, keeps the rest
                node[part] = value
                return
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                if isinstance(nxt, BaseModel):
                    nxt = nxt.model_dump()
                else:
                    nxt = {}
                node[part] = nxt
            node, model = nxt, inner
            continue
        # a plain value
        if rest:
            raise ConfigError(f"'{here}' is a value, not a table, so '{key}' does not exist")
        node[part] = _typed_value(value, info.annotation, kind)
        return


# --------------------------------------------------------------------------- validation


def _loc_key(loc: tuple) -> str:
    parts = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        elif isinstance(p, str):
            if p.startswith("function-") or "[" in p:
                continue  # pydantic validator / union branch labels, not keys
            parts.append(("." if parts else "") + p)
    return "".join(parts)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def format_errors(exc: ValidationError, root: type[BaseModel]) -> list[str]:
    """One line per pydantic error, each naming the full dotted key."""
    lines = []
    seen = set()
    keys = all_keys(root)
    for err in exc.errors(include_url=False):
        key = _loc_key(tuple(err.get("loc", ())))
        msg = err.get("msg", "invalid")
        etype = err.get("type", "")
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if etype == "extra_forbidden":
            hint = suggest(key, keys)
            line = f"unknown configuration key '{key}'"
            if hint:
                line += "; did you mean " + " or ".join(f"'{h}'" for h in hint) + "?"
        elif etype == "value_error" and (f"{key}." in msg or not key):
            line = msg  # a cross-field message already names its keys in full
        else:
            got = err.get("input")
            line = f"{key}: {msg}"
            if not isinstance(got, (dict, BaseModel)) and etype not in ("missing",):
                line += f" (got {_short(got)})"
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return lines


def validate_raw(raw: dict, root: type[BaseModel], source: str = "") -> Any:
    """Validate a raw dict into `root`, converting pydantic errors to one `ConfigError`."""
    try:
        return root.model_validate(raw)
    except ValidationError as exc:
        lines = format_errors(exc, root)
        head = f"invalid configuration{f' ({source})' if source else ''}"
        if len(lines) == 1:
            raise ConfigError(f"{head}: {lines[0]}") from None
        raise ConfigError(head + ":\n" + "\n".join("  " + ln for ln in lines)) from None
