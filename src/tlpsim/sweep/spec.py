"""Sweep specifications (TOML): a cross product of workloads x sizes x presets x
seeds x override axes, plus explicit runs, plus the baseline every run is
normalised against.

    name = "schedulers"                     # optional (default: the file's stem)
    workloads = ["vecadd", "reduction"]
    sizes = ["tiny"]
    presets = ["gtx480"]
    seeds = [1]                              # optional
    plugins = ["my_sched.py", "lab.policies"]  # optional: plug-in files (relative to the spec) or modules
    [overrides]
    "sm.warp_scheduler" = ["lrr", "gto"]     # each list is one axis of the product
    "gpu.max_ctas_per_sm" = 4                # a single value is fixed for every run
    [policies]
    cta_scheduler = ["round_robin"]          # extension point -> choices (= overrides of its config key)
    [[runs]]                                 # explicit runs, added to the product
    workload = "sgemm"
    size = "tiny"
    overrides = { "sm.warp_scheduler" = "two_level" }
    [baseline]
    "sm.warp_scheduler" = "lrr"              # a run's baseline: the same run with these values

A list value is always an axis; to set a list-valued config field, give a list
of lists. The baseline of every run is added to the sweep when the product does
not contain it. The spec's plug-ins (and those given with `--plugin` or in
TLPSIM_PLUGINS) are loaded before the spec's policy names are checked, and every
run carries them to its worker."""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlpsim.errors import ConfigError, TlpsimError
from tlpsim.sweep.job import RunParams, canonical

_TOP = {"name", "workloads", "sizes", "presets", "seeds", "mode", "overrides", "policies", "runs", "baseline",
        "plugins"}
_RUN_KEYS = {"workload", "size", "preset", "seed", "overrides"}
_BASE_PARAMS = ("preset", "size")  # baseline entries that replace a run parameter, not an override


@dataclass
class SweepSpec:
    name: str
    runs: list[RunParams]
    baseline: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    text: str = ""

    def baseline_of(self, p: RunParams) -> RunParams | None:
        return baseline_of(p, self.baseline)


def baseline_of(p: RunParams, baseline: dict[str, Any]) -> RunParams | None:
    """The run `p` is normalised against: `p` with the baseline's values."""
    if not baseline:
        return None
    ov = dict(p.overrides)
    for k, v in baseline.items():
        if k not in _BASE_PARAMS:
            ov[k] = v
    return RunParams(p.workload, baseline.get("size", p.size), baseline.get("preset", p.preset), ov, p.seed, p.mode,
                     p.plugins)


def _flatten(table: dict, where: str, prefix: str = "") -> dict[str, Any]:
    """Dotted keys from a table; bare TOML dotted keys (sm.x = ...) arrive nested."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and "impl" not in v:
            out.update(_flatten(v, where, key + "."))
        else:
            out[key] = v
    return out


def _axes(table: dict) -> list[tuple[str, list]]:
    return [(k, list(v) if isinstance(v, list) else [v]) for k, v in table.items()]


def _strings(data: dict, key: str, default: list, where: str) -> list:
    v = data.get(key, default)
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not v:
        raise ConfigError(f"{where}: '{key}' must be a non-empty list of names")
    bad = [x for x in v if not isinstance(x, str)]
    if bad:
        raise ConfigError(f"{where}: '{key}' must be a list of names (strings), got {bad[0]!r}")
    return v


def _seed(value: Any, where: str) -> int:
    # the same rule as `tlpsim run --seed`: a whole number >= 0 (1.5 would be cut to 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: a seed is a whole number >= 0, got {value!r}")
    return value


def _seeds(data: dict, where: str) -> list[int]:
    v = data.get("seeds", [1])
    v = v if isinstance(v, list) else [v]
    if not v:
        raise ConfigError(f"{where}: 'seeds' must be a non-empty list")
    return [_seed(x, f"{where}: 'seeds'") for x in v]


def _table(data: dict, key: str, where: str) -> dict:
    v = data.get(key, {})
    if not isinstance(v, dict):
        raise ConfigError(f"{where}: '{key}' must be a table ([{key}] or {key} = {{ ... }}), got {v!r}")
    return v


def _empty_axes(table: dict, where: str, name: str) -> None:
    for k, v in table.items():
        if v == []:
            raise ConfigError(f"{where}: [{name}] {k!r} is an empty list: an axis needs at least one value")


def parse_spec(text: str, source: str = "<spec>", name: str | None = None, plugins: tuple[str, ...] = ()) -> SweepSpec:
    """A spec from its TOML text. `plugins` (already loaded: `--plugin`, TLPSIM_PLUGINS)
    are carried by every run, after the spec's own `plugins`, which are loaded here
    (relative paths against the spec file's directory)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: TOML syntax error: {exc}") from None
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(unknown)} (a sweep spec has: {', '.join(sorted(_TOP))})")
    for table in ("overrides", "policies", "baseline"):
        if isinstance(data.get(table), dict) and "plugins" in data[table]:
            raise ConfigError(f"{source}: 'plugins' is inside [{table}]: write it before the spec's first "
                              "[table] (a TOML key after a table header belongs to that table)")
    for table in ("overrides", "policies", "baseline"):
        _table(data, table, source)
    if not isinstance(data.get("name", ""), str):
        raise ConfigError(f"{source}: 'name' must be a string, got {data['name']!r}")
    plugins = tuple(dict.fromkeys(tuple(plugins) + _spec_plugins(data, source)))
    mode = data.get("mode", "timing")
    overrides = _flatten(data.get("overrides", {}), source)
    _empty_axes(overrides, source, "overrides")
    from tlpsim.policies.registry import EXTENSION_POINTS

    _empty_axes(data.get("policies", {}), source, "policies")
    for point, choices in data.get("policies", {}).items():
        if point not in EXTENSION_POINTS:
            raise ConfigError(f"{source}: [policies] {point!r} is not an extension point "
                              f"(choose from {', '.join(EXTENSION_POINTS)})")
        overrides[EXTENSION_POINTS[point]] = choices
    runs: list[RunParams] = []
    if "workloads" in data:
        workloads = _strings(data, "workloads", [], source)
        sizes = _strings(data, "sizes", ["small"], source)
        presets = _strings(data, "presets", ["gtx480"], source)
        seeds = _seeds(data, source)
        axes = _axes(overrides)
        keys = [k for k, _ in axes]
        for wl, size, seed, preset, *vals in itertools.product(workloads, sizes, seeds, presets, *(v for _, v in axes)):
            runs.append(RunParams(wl, size, preset, dict(zip(keys, vals)), seed, mode, plugins))
    elif overrides:
        raise ConfigError(f"{source}: [overrides] given but no 'workloads' list to apply them to")
    explicit = data.get("runs", [])
    if not isinstance(explicit, list) or not all(isinstance(item, dict) for item in explicit):
        raise ConfigError(f"{source}: 'runs' must be an array of tables ([[runs]] sections), got {explicit!r}")
    for k, item in enumerate(explicit):
        where = f"{source}: [[runs]] #{k + 1}"
        bad = sorted(set(item) - _RUN_KEYS)
        if bad or "workload" not in item:
            raise ConfigError(f"{where}: needs 'workload' and may have {', '.join(sorted(_RUN_KEYS))}"
                              + (f" (unknown: {', '.join(bad)})" if bad else ""))
        for param in ("workload", "size", "preset"):
            if not isinstance(item.get(param, ""), str):
                raise ConfigError(f"{where}: '{param}' must be a name (a string), got {item[param]!r}")
        runs.append(RunParams(item["workload"], item.get("size", "small"), item.get("preset", "gtx480"),
                              _flatten(_table(item, "overrides", where), where), _seed(item.get("seed", 1), where),
                              mode, plugins))
    if not runs:
        raise ConfigError(f"{source}: the sweep has no runs (give 'workloads' or [[runs]])")
    baseline = _flatten(data.get("baseline", {}), source)
    if "workload" in baseline or "seed" in baseline:
        raise ConfigError(f"{source}: [baseline] may not fix 'workload' or 'seed' (runs are normalised per workload)")
    for param in _BASE_PARAMS:
        if not isinstance(baseline.get(param, ""), str):
            raise ConfigError(f"{source}: [baseline] '{param}' must be a name (a string), got {baseline[param]!r}")
    for p in list(runs):
        b = baseline_of(p, baseline)
        if b is not None:
            runs.append(b)
    spec = SweepSpec(str(name or data.get("name") or Path(source).stem), _dedup(runs), baseline, source, text)
    validate(spec)
    return spec


def _spec_plugins(data: dict, source: str) -> tuple[str, ...]:
    """Load the spec's `plugins` (files relative to the spec's directory, or modules)."""
    from tlpsim.policies.external import load_all

    items = data.get("plugins", [])
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ConfigError(f"{source}: 'plugins' must be a list of plug-in files (*.py) or module names")
    base = Path(source).resolve().parent if source and not source.startswith("<") else None
    return tuple(lp.spec for lp in load_all(items, origin=f"{source}: plugins", base=base))


def load_spec(path: str | Path, plugins: tuple[str, ...] = ()) -> SweepSpec:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"sweep spec not found: {p}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:  # TOML is UTF-8: a binary file, or another encoding
        raise ConfigError(f"{p}: not a UTF-8 text file (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                          "a sweep spec is a TOML file") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the sweep spec {p}: {exc.strerror or exc}") from None
    return parse_spec(text, str(p), None, plugins)


def _dedup(runs: list[RunParams]) -> list[RunParams]:
    seen: dict[str, RunParams] = {}
    for r in runs:
        seen.setdefault(r.key(), r)
    # group runs of one workload input together: later ones reuse its cached traces
    return sorted(seen.values(), key=lambda r: (r.workload, r.size, r.seed))


def validate(spec: SweepSpec) -> None:
    """Check names and every distinct configuration before anything runs, so a typo
    fails the sweep at once with the spec file and key named."""
    from tlpsim.config.loader import load_config
    from tlpsim.policies.registry import resolve_config
    from tlpsim.workloads.registry import SIZES, get_workload

    for wl in sorted({r.workload for r in spec.runs}):
        try:
            get_workload(wl)
        except TlpsimError as exc:
            raise ConfigError(f"{spec.source}: {exc}") from None
    for size in sorted({r.size for r in spec.runs}):
        if size not in SIZES:
            raise ConfigError(f"{spec.source}: unknown size {size!r}; choose from {', '.join(SIZES)}")
    if any(r.mode != "timing" for r in spec.runs):
        raise ConfigError(f"{spec.source}: sweeps run the timing model (mode = \"timing\")")
    checked = set()
    for r in spec.runs:
        key = (r.preset, canonical(r.overrides))
        if key in checked:
            continue
        checked.add(key)
        try:
            resolve_config(load_config(r.preset, r.overrides))  # policy names resolve at build time
        except ConfigError as exc:
            raise ConfigError(f"{spec.source}: run '{r.label()}': {exc}") from None
