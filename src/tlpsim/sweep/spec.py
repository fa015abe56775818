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
import math
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tlpsim.errors import ConfigError, TlpsimError
from tlpsim.sweep.job import RunParams, canonical, run_config

_TOP = {"name", "workloads", "sizes", "presets", "seeds", "mode", "overrides", "policies", "runs", "baseline",
        "plugins"}
_RUN_KEYS = {"workload", "size", "preset", "seed", "overrides"}
_BASE_PARAMS = ("preset", "size")  # baseline entries that replace a run parameter, not an override
#: a spec of this many runs or more has its run count reported before it is checked and expanded
LARGE_SPEC = 1000


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


#: the largest seed: the results database stores it as a SQLite INTEGER (64-bit signed)
MAX_SEED = 2**63 - 1


def _seed(value: Any, where: str) -> int:
    # the same rule as `tlpsim run --seed`: a whole number >= 0 (1.5 would be cut to 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: a seed is a whole number >= 0, got {value!r}")
    if value > MAX_SEED:
        raise ConfigError(f"{where}: seed {value} is too large; a seed is at most 2**63 - 1 = {MAX_SEED} "
                          "(the results database stores it as a 64-bit integer)")
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


def parse_spec(text: str, source: str = "<spec>", name: str | None = None, plugins: tuple[str, ...] = (),
               progress: Callable[[str], None] | None = None) -> SweepSpec:
    """A spec from its TOML text. `plugins` (already loaded: `--plugin`, TLPSIM_PLUGINS)
    are carried by every run, after the spec's own `plugins`, which are loaded here
    (relative paths against the spec file's directory). The run count is known, and
    every distinct configuration checked, before the runs are expanded; `progress`,
    if given, is told the count at once and then how the checks go (a spec may
    expand to 10^5 runs)."""
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
        key = EXTENSION_POINTS[point]
        if key in overrides:  # one would silently replace the other
            raise ConfigError(f"{source}: [policies] {point} and [overrides] \"{key}\" both set {key}; "
                              "give its choices in one of them")
        overrides[key] = choices
    product: tuple[list, ...] = ()
    if "workloads" in data:
        product = (_strings(data, "workloads", [], source), _strings(data, "sizes", ["small"], source),
                   _seeds(data, source), _strings(data, "presets", ["gtx480"], source))
    elif overrides:
        raise ConfigError(f"{source}: [overrides] given but no 'workloads' list to apply them to")
    axes = _axes(overrides)
    explicit = _explicit_runs(data, source, mode, plugins)
    if not product and not explicit:
        raise ConfigError(f"{source}: the sweep has no runs (give 'workloads' or [[runs]])")
    baseline = _baseline(data, source)
    n_product = math.prod(len(v) for v in product) * math.prod(len(v) for _, v in axes) if product else 0
    if progress is not None and n_product + len(explicit) >= LARGE_SPEC:
        configs = (len(product[3]) * math.prod(len(v) for _, v in axes) if product else 0) + len(explicit)
        progress(f"{source}: {n_product + len(explicit):,} runs ({configs:,} configurations"
                 + (", and their baselines" if baseline else "") + "); checking them before expanding the runs")
    workloads = set(product[0]) if product else set()
    sizes = set(product[1]) if product else set()
    _check_names(source, workloads | {r.workload for r in explicit},
                 sizes | {r.size for r in explicit} | ({baseline["size"]} if "size" in baseline else set()), mode)
    first: list[RunParams] = []  # the first run of each configuration of the product
    if product:
        wl, size, seed = product[0][0], product[1][0], product[2][0]
        keys = [k for k, _ in axes]
        first = [RunParams(wl, size, preset, dict(zip(keys, vals)), seed, mode, plugins)
                 for preset, *vals in itertools.product(product[3], *(v for _, v in axes))]
        # each axis varied alone first: a bad value is found at once, not after its product with the others
        star = [RunParams(wl, size, preset, {k: (v if k == key else axis[0]) for k, axis in axes}, seed, mode, plugins)
                for preset in product[3] for key, values in axes for v in values]
        _check_configs(source, star, {}, None)
    _check_configs(source, first + explicit, baseline, progress)
    runs: list[RunParams] = []
    if product:
        codes = [r.fingerprint() for r in first]  # one per configuration, not per run
        for wl, size, seed, k in itertools.product(product[0], product[1], product[2], range(len(first))):
            runs.append(RunParams(wl, size, first[k].preset, dict(first[k].overrides), seed, mode, plugins,
                                  dict(codes[k])))
    runs += explicit
    for p in list(runs):
        b = baseline_of(p, baseline)
        if b is not None:
            runs.append(b)
    spec = SweepSpec(str(name or data.get("name") or Path(source).stem), _dedup(runs, progress), baseline, source,
                     text)
    return spec


def _explicit_runs(data: dict, source: str, mode: str, plugins: tuple[str, ...]) -> list[RunParams]:
    explicit = data.get("runs", [])
    if not isinstance(explicit, list) or not all(isinstance(item, dict) for item in explicit):
        raise ConfigError(f"{source}: 'runs' must be an array of tables ([[runs]] sections), got {explicit!r}")
    runs = []
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
    return runs


def _baseline(data: dict, source: str) -> dict[str, Any]:
    baseline = _flatten(data.get("baseline", {}), source)
    if "workload" in baseline or "seed" in baseline:
        raise ConfigError(f"{source}: [baseline] may not fix 'workload' or 'seed' (runs are normalised per workload)")
    for param in _BASE_PARAMS:
        if not isinstance(baseline.get(param, ""), str):
            raise ConfigError(f"{source}: [baseline] '{param}' must be a name (a string), got {baseline[param]!r}")
    return baseline


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


def load_spec(path: str | Path, plugins: tuple[str, ...] = (),
              progress: Callable[[str], None] | None = None) -> SweepSpec:
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
    return parse_spec(text, str(p), None, plugins, progress)


def _dedup(runs: list[RunParams], progress: Callable[[str], None] | None = None) -> list[RunParams]:
    seen: dict[str, RunParams] = {}
    ticker = _Ticker(progress, "expanding the runs", len(runs))
    for r in runs:
        seen.setdefault(r.key(), r)
        ticker.step()
    # group runs of one workload input together: later ones reuse its cached traces
    return sorted(seen.values(), key=lambda r: (r.workload, r.size, r.seed))


class _Ticker:
    """`progress` told how a long step goes, at most every few seconds."""

    EVERY_S = 2.0

    def __init__(self, progress: Callable[[str], None] | None, what: str, total: int) -> None:
        self.progress, self.what, self.total, self.done = progress, what, total, 0
        self.next = time.monotonic() + self.EVERY_S

    def step(self) -> None:
        self.done += 1
        if self.progress is not None and time.monotonic() >= self.next:
            self.progress(f"  {self.what}: {self.done:,}/{self.total:,}")
            self.next = time.monotonic() + self.EVERY_S


def _check_names(source: str, workloads: set[str], sizes: set[str], mode: str) -> None:
    from tlpsim.workloads.registry import SIZES, get_workload

    for wl in sorted(workloads):
        try:
            get_workload(wl)
        except TlpsimError as exc:
            raise ConfigError(f"{source}: {exc}") from None
    for size in sorted(sizes):
        if size not in SIZES:
            raise ConfigError(f"{source}: unknown size {size!r}; choose from {', '.join(SIZES)}")
    if mode != "timing":
        raise ConfigError(f"{source}: sweeps run the timing model (mode = \"timing\")")


def _check_configs(source: str, examples: list[RunParams], baseline: dict[str, Any],
                   progress: Callable[[str], None] | None) -> None:
    """Load and resolve each distinct (preset, overrides) once, and its baseline's;
    `examples` holds a run of each (named in the error)."""
    from tlpsim.policies.registry import resolve_config

    checked = set()
    ticker = _Ticker(progress, "configurations checked", len(examples))
    for example in examples:
        ticker.step()
        b = baseline_of(example, baseline)
        for r in (example,) if b is None else (example, b):
            key = (r.preset, canonical(r.overrides))
            if key in checked:
                continue
            checked.add(key)
            try:
                resolve_config(run_config(r.preset, r.overrides))  # policy names resolve at build time
            except ConfigError as exc:
                raise ConfigError(f"{source}: run '{r.label()}': {exc}") from None


def validate(spec: SweepSpec) -> None:
    """Check names and every distinct configuration of a spec's runs."""
    runs = spec.runs
    _check_names(spec.source, {r.workload for r in runs}, {r.size for r in runs},
                 "timing" if all(r.mode == "timing" for r in runs) else "functional")
    _check_configs(spec.source, runs, {}, None)
