"""Presets (TOML files in `tlpsim/config/presets/`) and `load_config`.

A preset file is a config tree in TOML. It may start with `extends = "<preset
or path>"`; the base is loaded first and this file's tables are merged over it
key by key (a policy choice with a different `impl` replaces the base's choice
and its parameters; with the same impl, parameters merge). Paths in `extends`
are relative to the extending file.
"""

from __future__ import annotations

import copy
import difflib
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tlpsim.config.model import GPUConfig
from tlpsim.config.overrides import _normalise, apply_overrides, validate_raw
from tlpsim.errors import ConfigError

__all__ = ["PRESET_DIR", "list_presets", "load_config", "load_raw", "preset_path"]

PRESET_DIR = Path(__file__).resolve().parent / "presets"


def list_presets() -> list[str]:
    """Names of the built-in presets, sorted."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def preset_path(preset: str | Path, relative_to: Path | None = None) -> Path:
    """The file of a preset name, or an existing TOML path (relative to `relative_to`)."""
    if isinstance(preset, Path) or str(preset).endswith(".toml") or "/" in str(preset) or "\\" in str(preset):
        path = Path(preset)
        if not path.is_absolute() and relative_to is not None:
            path = relative_to / path
        if not path.is_file():
            raise ConfigError(f"config file not found: {path}")
        return path
    name = str(preset)
    path = PRESET_DIR / f"{name}.toml"
    if not path.is_file():
        names = list_presets()
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        text = f"unknown preset '{name}'"
        if near:
            text += "; did you mean " + " or ".join(f"'{n}'" for n in near) + "?"
        raise ConfigError(text + f" (available: {', '.join(names)})")
    return path


def _merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        old = out.get(k)
        if isinstance(v, dict) and isinstance(old, dict):
            if ("impl" in v or "impl" in old) and v.get("impl", old.get("impl")) != old.get("impl"):
                out[k] = dict(v)  # a different implementation: its params start afresh
            else:
                out[k] = _merge(old, v)
        elif isinstance(v, dict) and isinstance(old, str) and "impl" not in v:
            out[k] = {"impl": old, **v}  # parameters added to a base's bare policy name
        else:
            out[k] = v
    return out


_PARSED: dict[Path, tuple[tuple[int, int], dict]] = {}


def _parsed(path: Path) -> dict:
    """A config file's TOML, parsed once per version of the file (a sweep loads the
    same preset for each of its thousands of configurations); a copy, as callers merge
    into it."""
    st = path.stat()
    stamp = (st.st_mtime_ns, st.st_size)
    have = _PARSED.get(path)
    if have is None or have[0] != stamp:
        have = _PARSED[path] = (stamp, tomllib.loads(path.read_text(encoding="utf-8")))
    return copy.deepcopy(have[1])


def load_raw(preset: str | Path, _chain: tuple[Path, ...] = (), _relative_to: Path | None = None) -> dict:
    """The merged (unvalidated) dict of a preset and the presets it extends."""
    path = preset_path(preset, _relative_to).resolve()
    if path in _chain:
        cycle = " -> ".join(p.stem for p in (*_chain, path))
        raise ConfigError(f"presets extend each other in a cycle: {cycle}")
    try:
        data = _parsed(path)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: TOML syntax error: {exc}") from None
    except UnicodeDecodeError as exc:  # a binary file, or another encoding: TOML is UTF-8
        raise ConfigError(f"{path}: not a UTF-8 text file (byte 0x{exc.object[exc.start]:02x} at offset "
                          f"{exc.start}); a config is a TOML file") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    base = data.pop("extends", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise ConfigError(f"{path}: 'extends' must be a preset name or a path, got {base!r}")
    try:
        parent = load_raw(base, (*_chain, path), path.parent)
    except ConfigError as exc:
        raise ConfigError(f"{path.name}: extends = {base!r}: {exc}") from None
    return _merge(parent, data)


def load_config(preset: str | Path = "gtx480",
                overrides: Mapping[str, Any] | Sequence[str] | str = ()) -> GPUConfig:
    """Load a preset (built-in name or TOML path), apply dotted-key overrides, and
    validate. Raises `ConfigError` naming the key for unknown keys (with
    suggestions), out-of-range values and inconsistent combinations; an unknown
    preset lists the available ones."""
    raw = load_raw(preset)
    items = _normalise(overrides)
    if items:
        raw = apply_overrides(raw, items, GPUConfig)
    name = Path(preset).stem if isinstance(preset, Path) else str(preset)
    source = f"preset '{name}'"
    if items:
        source += ", overrides " + ", ".join(f"{k}={v}" for k, v in items)
    return validate_raw(raw, GPUConfig, source)
