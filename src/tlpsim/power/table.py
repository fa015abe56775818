"""Energy tables: one TOML data file per technology node (`power/tables/<node>.toml`,
every entry commented with its source), plus the config's overrides.

A table maps structure -> {key: number}. Overrides (`[power.table.<structure>]`) may
only name structures and keys the node's table has; anything else is a ConfigError
naming the key and the valid choices, so a typo cannot silently leave a default in
place."""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from tlpsim.errors import ConfigError

__all__ = ["EnergyTable", "available_nodes", "load_table", "node_table", "override_problems"]

EnergyTable = dict[str, dict[str, float]]


def available_nodes() -> list[str]:
    """Technology nodes with a table file, e.g. ['28nm', '40nm', '45nm']."""
    files = resources.files("tlpsim.power") / "tables"
    return sorted(p.name[:-5] for p in files.iterdir() if p.name.endswith(".toml"))


@cache
def _read(node: str) -> dict:
    path = resources.files("tlpsim.power") / "tables" / f"{node}.toml"
    if not path.is_file():
        raise ConfigError(f"power.technology_node = {node!r}: no energy table for this node "
                          f"(available: {', '.join(available_nodes())}; add src/tlpsim/power/tables/{node}.toml)")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"energy table {path}: {exc}") from None
    for name, entry in data.items():
        if not isinstance(entry, dict) or not all(isinstance(v, (int, float)) for v in entry.values()):
            raise ConfigError(f"energy table {path}: [{name}] must be a table of numbers")
    return data


def node_table(node: str) -> EnergyTable:
    """A fresh copy of the node's table (no overrides)."""
    return {s: {k: float(v) for k, v in e.items()} for s, e in _read(node).items()}


def _suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def override_problems(node: str, overrides: Mapping[str, Any]) -> list[str]:
    """Messages for override keys the node's table lacks or values that are not numbers."""
    base = _read(node)
    out = []
    for struct, entry in overrides.items():
        if struct not in base:
            out.append(f"power.table.{struct}: unknown structure{_suggest(struct, base)}; the {node} table has "
                       f"{', '.join(sorted(base))}")
            continue
        if not isinstance(entry, Mapping):
            out.append(f"power.table.{struct} must be a table of keys, e.g. {{ {next(iter(base[struct]))} = ... }}")
            continue
        for key, value in entry.items():
            if key not in base[struct]:
                out.append(f"power.table.{struct}.{key}: unknown key{_suggest(key, base[struct])}; "
                           f"[{struct}] has {', '.join(sorted(base[struct]))}")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                out.append(f"power.table.{struct}.{key} = {value!r}: must be a non-negative number")
    return out


def load_table(node: str, overrides: Mapping[str, Any] | None = None) -> EnergyTable:
    """The node's table with `overrides` applied; ConfigError if an override is unknown."""
    table = node_table(node)
    overrides = overrides or {}
    problems = override_problems(node, overrides)
    if problems:
        raise ConfigError("; ".join(problems))
    for struct, entry in overrides.items():
        for key, value in entry.items():
            table[struct][key] = float(value)
    return table
