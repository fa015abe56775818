"""The plug-in registry: policies register where they are defined, by name, under
one of the extension points; the simulator builder resolves config choices
through it (Ramulator 2's interface/implementation factory, in Python).

Extension points (and the config key that selects each)::

    cta_scheduler       gpu.cta_scheduler        which CTA goes to which SM, and when
    resource_allocator  sm.resource_allocator    whether a CTA fits; where its registers/shared memory live
    warp_scheduler      sm.warp_scheduler        which eligible warp issues
    operand_storage     sm.operand_storage       operand readiness, RF banks, eligibility, RF energy events
    context_switcher    sm.context_switcher      switching stalled warps/CTAs out to spare storage
    execution_checker   sm.execution_checker     redundant execution for error detection
    monitor             monitor.policy           observes counters over time

Registering a policy (one class, one decorator, parameters declared next to it)::

    from dataclasses import dataclass
    from tlpsim.policies.registry import register

    @register("warp_scheduler", "two_level")
    class TwoLevel(WarpScheduler):
        \"\"\"Two-level scheduler (Narasiman et al., MICRO'11).\"\"\"
        @dataclass(frozen=True)
        class Params:
            active_warps: int = 8      # or a pydantic BaseModel with Field(description=...)

Resolving a choice (done by the simulator builder, not at config parse time)::

    cls, params = resolve("warp_scheduler", cfg.sm.warp_scheduler)   # params: a Params instance or None
    built = resolve_config(cfg)   # every extension point at once; all errors reported together

API: `register(point, name)`, `interface(point)` (declare the base class that
implementations must subclass), `resolve(point, choice, key=None)`,
`resolve_config(config)`, `choices(point)`, `get(point, name)`,
`describe(point=None)` (for a `tlpsim plugins` listing), `unregister(point,
name)`, `load_plugins()`, `registrations()`, `note_origin(module, via)`,
`EXTENSION_POINTS`.

"none" at the optional points (context_switcher, execution_checker, monitor)
means "no plug-in": `resolve` returns (None, None) for it unless a class is
registered under that name.

Rules: registering a name twice under one point raises
`PluginRegistrationError` (re-running the same class definition, e.g. a module
reload, replaces it); a `Params` attribute must be a pydantic model or a
dataclass; unknown extension points raise. Resolution errors are `ConfigError`s
that name the config key (`sm.warp_scheduler`), the bad implementation or
parameter, and the valid choices.

Built-in policy modules are found by importing every module under
`tlpsim.policies` the first time the registry is queried (so a new policy file
needs no import list), plus any `importlib.metadata` entry points in the group
`tlpsim.policies` and the files/modules named in the `TLPSIM_PLUGINS` environment
variable (out-of-tree plug-ins; see `tlpsim.policies.external`, which also loads
`--plugin` files).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.metadata
import inspect
import pkgutil
import re
import sys
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from tlpsim.errors import ConfigError, TlpsimError

__all__ = [
    "ENTRY_POINT_GROUP", "EXTENSION_POINTS", "NONE", "OPTIONAL_POINTS", "CounterInfo", "ParamInfo", "PluginInfo",
    "PluginRegistrationError", "choices", "describe", "get", "info", "interface", "load_plugins", "note_origin",
    "register", "registrations", "resolve", "resolve_config", "type_name", "unregister",
]

ENTRY_POINT_GROUP = "tlpsim.policies"

#: extension point -> config key of its choice (kept equal to tlpsim.config.model.POLICY_KEYS)
EXTENSION_POINTS: dict[str, str] = {
    "cta_scheduler": "gpu.cta_scheduler",
    "resource_allocator": "sm.resource_allocator",
    "warp_scheduler": "sm.warp_scheduler",
    "operand_storage": "sm.operand_storage",
    "context_switcher": "sm.context_switcher",
    "execution_checker": "sm.execution_checker",
    "monitor": "monitor.policy",
}

#: extension points where the choice "none" means "no plug-in" (resolves to (None, None))
#: unless a class is registered under that name
OPTIONAL_POINTS: frozenset[str] = frozenset({"context_switcher", "execution_checker", "monitor"})
NONE = "none"

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_REGISTRY: dict[str, dict[str, type]] = {p: {} for p in EXTENSION_POINTS}
_INTERFACES: dict[str, type] = {}
_LOAD_STATE = "pending"  # -> "loading" -> "done"; back to "pending" if an import fails
_ORIGINS: dict[str, str] = {}  # module name -> how it was loaded ("entry point ...", "--plugin", ...)


class PluginRegistrationError(TlpsimError, ValueError):
    """A policy was registered wrongly: unknown extension point, bad or duplicate
    name, wrong base class, or a malformed `Params` declaration."""


# --------------------------------------------------------------------------- registration


def _check_point(point: str) -> None:
    if point not in EXTENSION_POINTS:
        near = difflib.get_close_matches(point, list(EXTENSION_POINTS), n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise PluginRegistrationError(f"unknown extension point '{point}'{hint} "
                                      f"(extension points: {', '.join(EXTENSION_POINTS)})")


def _params_kind(params_cls: Any) -> str:
    if params_cls is None:
        return "none"
    if inspect.isclass(params_cls) and issubclass(params_cls, BaseModel):
        return "pydantic"
    if inspect.isclass(params_cls) and dataclasses.is_dataclass(params_cls):
        return "dataclass"
    return "bad"


def _same_definition(a: type, b: type) -> bool:
    return a.__module__ == b.__module__ and a.__qualname__ == b.__qualname__


def register(point: str, name: str):
    """Class decorator: register the class as implementation `name` of extension
    point `point`. Raises `PluginRegistrationError` on a duplicate name."""
    _check_point(point)
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise PluginRegistrationError(f"bad {point} name {name!r}: use letters, digits, '_' or '-'")

    def deco(cls: type) -> type:
        if not inspect.isclass(cls):
            raise PluginRegistrationError(f"@register('{point}', '{name}') must decorate a class, got {cls!r}")
        base = _INTERFACES.get(point)
        if base is not None and not issubclass(cls, base):
            raise PluginRegistrationError(f"{cls.__qualname__} is registered as {point} '{name}' but does not "
                                          f"subclass {base.__qualname__}")
        params_cls = getattr(cls, "Params", None)
        if _params_kind(params_cls) == "bad":
            raise PluginRegistrationError(f"{cls.__qualname__}.Params must be a pydantic BaseModel or a "
                                          f"dataclass, got {params_cls!r}")
        from tlpsim.timing.plugin import check_sampling

        try:  # a wrong sampling declaration is the registration's error, not a later run's
            check_sampling(cls, f"{point} '{name}' ({cls.__qualname__})")
        except ConfigError as exc:
            raise PluginRegistrationError(str(exc)) from None
        table = _REGISTRY[point]
        old = table.get(name)
        if old is not None and old is not cls and not _same_definition(old, cls):
            raise PluginRegistrationError(f"{point} '{name}' is already registered by "
                                          f"{old.__module__}.{old.__qualname__}; cannot register "
                                          f"{cls.__module__}.{cls.__qualname__} under the same name")
        table[name] = cls
        cls.plugin_point = point  # type: ignore[attr-defined]
        cls.plugin_name = name  # type: ignore[attr-defined]
        return cls

    return deco


def interface(point: str):
    """Class decorator for an extension point's base class: implementations
    registered under `point` must subclass it (checked at registration)."""
    _check_point(point)

    def deco(cls: type) -> type:
        old = _INTERFACES.get(point)
        if old is not None and old is not cls and not _same_definition(old, cls):
            raise PluginRegistrationError(f"extension point '{point}' already has interface {old.__qualname__}")
        for name, impl in _REGISTRY[point].items():
            if not issubclass(impl, cls):
                raise PluginRegistrationError(f"{point} '{name}' ({impl.__qualname__}) does not subclass "
                                              f"{cls.__qualname__}")
        _INTERFACES[point] = cls
        return cls

    return deco


def unregister(point: str, name: str) -> None:
    """Remove a registration (for tests and notebooks); unknown names are ignored."""
    _check_point(point)
    _REGISTRY[point].pop(name, None)


def load_plugins() -> None:
    """Import every module under `tlpsim.policies`, the `tlpsim.policies` entry
    points and the `TLPSIM_PLUGINS` files/modules, once, so their `@register`
    decorators run. A plug-in that fails to load (or registers nothing) raises a
    `PluginLoadError` naming it, its file and line."""
    global _LOAD_STATE
    if _LOAD_STATE != "pending":  # done, or a plug-in module is querying the registry while loading
        return
    _LOAD_STATE = "loading"
    try:
        import tlpsim.policies as pkg
        from tlpsim.policies import external

        for mod in pkgutil.walk_packages(pkg.__path__, prefix=pkg.__name__ + "."):
            if mod.name != __name__:
                importlib.import_module(mod.name)
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            external.load_entry_point(ep)
        external.load_all(external.env_specs(), origin=external.ENV)
    except BaseException:
        _LOAD_STATE = "pending"  # a broken plug-in fails every query, not just the first
        raise
    _LOAD_STATE = "done"


def registrations() -> dict[tuple[str, str], type]:
    """Every registration so far, {(point, name): class} (without loading anything)."""
    return {(p, n): cls for p, table in _REGISTRY.items() for n, cls in table.items()}


def note_origin(module: str, via: str) -> None:
    """Record how a plug-in module was loaded, for `describe` (e.g. "--plugin",
    "entry point name (distribution)")."""
    _ORIGINS[module] = via


# --------------------------------------------------------------------------- queries


def choices(point: str) -> list[str]:
    """Valid implementation names of an extension point, sorted: the registered
    ones, plus "none" at the optional points."""
    _check_point(point)
    load_plugins()
    names = set(_REGISTRY[point])
    if point in OPTIONAL_POINTS:
        names.add(NONE)
    return sorted(names)


def get(point: str, name: str) -> type:
    """The class registered as `name` under `point`; `ConfigError` listing the choices otherwise."""
    _check_point(point)
    load_plugins()
    cls = _REGISTRY[point].get(name)
    if cls is None:
        raise _unknown_impl(point, name, EXTENSION_POINTS[point])
    return cls


def _listing(names: list[str]) -> str:
    return ", ".join(names) if names else "(none registered)"


def _unknown_impl(point: str, name: str, key: str) -> ConfigError:
    names = sorted(set(_REGISTRY[point]) | ({NONE} if point in OPTIONAL_POINTS else set()))
    near = difflib.get_close_matches(name, names, n=2, cutoff=0.5)
    text = f"{key}: unknown {point} '{name}'"
    if near:
        text += "; did you mean " + " or ".join(f"'{n}'" for n in near) + "?"
    return ConfigError(text + f" (registered {point} choices: {_listing(names)})")


def _param_fields(params_cls: Any) -> dict[str, tuple[Any, Any, str]]:
    """name -> (type, default or ..., description) for a Params class."""
    kind = _params_kind(params_cls)
    out: dict[str, tuple[Any, Any, str]] = {}
    if kind == "pydantic":
        for n, f in params_cls.model_fields.items():
            default = ... if f.is_required() else f.get_default(call_default_factory=True)
            out[n] = (f.annotation, default, f.description or "")
    elif kind == "dataclass":
        for f in dataclasses.fields(params_cls):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                default = f.default_factory()  # type: ignore[misc]
            else:
                default = ...
            desc = f.metadata.get("help", f.metadata.get("description", "")) if f.metadata else ""
            out[f.name] = (f.type, default, desc)
    return out


def _build_params(point: str, name: str, cls: type, params: Mapping[str, Any], key: str) -> Any:
    params_cls = getattr(cls, "Params", None)
    kind = _params_kind(params_cls)
    if kind == "none":
        if params:
            raise ConfigError(f"{key}: {point} '{name}' takes no parameters "
                              f"(got {', '.join(sorted(params))})")
        return None
    fields = _param_fields(params_cls)
    unknown = [p for p in params if p not in fields]
    if unknown:
        bad = unknown[0]
        near = difflib.get_close_matches(bad, list(fields), n=2, cutoff=0.5)
        hint = ("; did you mean " + " or ".join(f"'{n}'" for n in near) + "?") if near else ""
        raise ConfigError(f"{key}.{bad}: unknown parameter of {point} '{name}'{hint} "
                          f"(parameters: {', '.join(fields) or 'none'})")
    try:
        if kind == "pydantic":
            return params_cls.model_validate(dict(params))
        return TypeAdapter(params_cls).validate_python(dict(params))
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_url=False):
            loc = ".".join(str(p) for p in err.get("loc", ()) if not str(p).startswith("function-"))
            where = f"{key}.{loc}" if loc else key
            msg = err.get("msg", "invalid").removeprefix("Value error, ")
            got = err.get("input")
            line = f"{where}: {msg}"
            if err.get("type") != "missing" and not isinstance(got, Mapping):
                line += f" (got {got!r})"
            lines.append(line + f" [{point} '{name}']")
        raise ConfigError("\n".join(lines)) from None


def resolve(point: str, choice: Any, *, key: str | None = None) -> tuple[type | None, Any]:
    """(class, params instance or None) for a policy choice (a `PolicyChoice`, a
    name, or a `{impl: ..., **params}` mapping). `key` is the config key named in
    errors (default: the extension point's key, e.g. `sm.warp_scheduler`).
    At an optional point (`OPTIONAL_POINTS`) the choice "none" gives (None, None)
    unless a class is registered under that name."""
    from tlpsim.config.policy import PolicyChoice

    _check_point(point)
    key = key or EXTENSION_POINTS[point]
    try:
        parsed = PolicyChoice.model_validate(choice)
    except ValidationError as exc:
        msg = exc.errors(include_url=False)[0].get("msg", "invalid").removeprefix("Value error, ")
        raise ConfigError(f"{key}: {msg}") from None
    load_plugins()
    cls = _REGISTRY[point].get(parsed.impl)
    if cls is None:
        if parsed.impl == NONE and point in OPTIONAL_POINTS:
            if parsed.params:
                raise ConfigError(f"{key}: '{NONE}' (no {point}) takes no parameters "
                                  f"(got {', '.join(sorted(parsed.params))})")
            return None, None
        raise _unknown_impl(point, parsed.impl, key)
    return cls, _build_params(point, parsed.impl, cls, parsed.params, key)


def resolve_config(config: Any) -> dict[str, tuple[type | None, Any]]:
    """Resolve every extension point's choice in a `GPUConfig` (an optional point
    set to "none" maps to (None, None)); all problems are reported in one
    `ConfigError`."""
    out: dict[str, tuple[type | None, Any]] = {}
    problems: list[str] = []
    for point, (key, choice) in config.policy_choices().items():
        try:
            out[point] = resolve(point, choice, key=key)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        cls = out[point][0]
        if cls is not None and callable(getattr(cls, "config_problems", None)):
            problems.extend(cls.config_problems(config, key))
    if problems:
        if len(problems) == 1:
            raise ConfigError(problems[0])
        raise ConfigError("invalid policy choices:\n" + "\n".join("  " + p for p in problems))
    return out


# --------------------------------------------------------------------------- introspection


@dataclass(frozen=True)
class ParamInfo:
    """One declared parameter of a plug-in."""

    name: str
    type: Any
    default: Any  # Ellipsis when required
    description: str


@dataclass(frozen=True)
class CounterInfo:
    """One statistic a plug-in declares."""

    name: str
    unit: str
    description: str
    agg: str = "sum"      # how it becomes a launch's statistic (Counter.agg)


@dataclass(frozen=True)
class PluginInfo:
    """One registered plug-in, for listings (`tlpsim plugins`)."""

    point: str
    name: str
    cls: type
    summary: str
    params: tuple[ParamInfo, ...]
    events: tuple[str, ...] = ()
    counters: tuple[CounterInfo, ...] = ()
    energy: tuple[tuple[str, Any], ...] = ()   # (structure name, EnergyStructure)
    module: str = ""
    file: str = ""                             # its source file ("" when unknown)
    origin: str = ""                           # built-in, entry point, --plugin, TLPSIM_PLUGINS, ...

    @property
    def key(self) -> str:
        """`point.name`: the plug-in's key in statistics (`LaunchStats.plugins`)."""
        return f"{self.point}.{self.name}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for `tlpsim plugins --json` and run records)."""
        return {
            "point": self.point, "name": self.name, "key": self.key, "config_key": EXTENSION_POINTS[self.point],
            "summary": self.summary, "module": self.module, "file": self.file, "origin": self.origin,
            "params": [{"name": p.name, "type": type_name(p.type), "required": p.default is ...,
                        "default": None if p.default is ... else _plain(p.default), "description": p.description}
                       for p in self.params],
            "events": list(self.events),
            # a level's aggregation ("max", "mean"); sums, the default, say nothing
            "counters": {c.name: {"unit": c.unit, "description": c.description,
                                  **({"agg": c.agg} if c.agg != "sum" else {})} for c in self.counters},
            "energy": {n: {"access_pj": _plain(e.access_pj), "leakage_mw": _plain(e.leakage_mw),
                           "instances": e.instances, "source": e.source, "description": e.description}
                       for n, e in self.energy},
        }


def type_name(t: Any) -> str:
    """A parameter's type as written in code: `int`, `float | None`, `list[int]`."""
    if isinstance(t, str):
        return t
    if isinstance(t, type) and not typing.get_args(t):
        return t.__name__
    return str(t).replace("typing.", "")


def _plain(v: Any) -> Any:
    """A JSON-ready copy of a parameter default or energy number."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_plain(x) for x in v]
    if isinstance(v, BaseModel):
        return v.model_dump(mode="json")
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return _plain(dataclasses.asdict(v))
    return repr(v)


def _source_file(cls: type) -> str:
    try:
        return inspect.getsourcefile(cls) or inspect.getfile(cls)
    except (TypeError, OSError):
        mod = sys.modules.get(cls.__module__)
        return str(getattr(mod, "__file__", "") or "")


def _origin(module: str) -> str:
    if module == "tlpsim.policies" or module.startswith("tlpsim.policies."):
        return "built-in"
    for mod, via in _ORIGINS.items():
        if module == mod or module.startswith(mod + "."):
            return via
    return "imported"  # registered by code that imported it (a test, a notebook)


def info(point: str, name: str, cls: type) -> PluginInfo:
    """What a registered class declares: parameters, events, counters, energy structures, source."""
    # its own docstring (not a base's), else its module's
    doc = inspect.cleandoc(cls.__dict__.get("__doc__") or getattr(sys.modules.get(cls.__module__), "__doc__", None)
                           or "")
    summary = doc.splitlines()[0] if doc else ""
    params_cls = getattr(cls, "Params", None)
    try:
        hints = typing.get_type_hints(params_cls) if params_cls is not None else {}
    except Exception:  # noqa: BLE001 - unresolvable forward references: keep the annotation text
        hints = {}
    params = tuple(ParamInfo(n, hints.get(n, t), d, desc) for n, (t, d, desc) in _param_fields(params_cls).items())
    counters = tuple(CounterInfo(n, getattr(c, "unit", ""), getattr(c, "description", ""), getattr(c, "agg", "sum"))
                     for n, c in dict(getattr(cls, "counters", {}) or {}).items())
    energy = tuple(dict(getattr(cls, "energy", {}) or {}).items())
    return PluginInfo(point, name, cls, summary, params, tuple(sorted(getattr(cls, "events", ()) or ())), counters,
                      energy, cls.__module__, _source_file(cls), _origin(cls.__module__))


def describe(point: str | None = None) -> list[PluginInfo]:
    """Every registered plug-in (of one extension point, or all), sorted by point and name."""
    load_plugins()
    points = [point] if point is not None else list(EXTENSION_POINTS)
    out = []
    for p in points:
        _check_point(p)
        for name in sorted(_REGISTRY[p]):
            out.append(info(p, name, _REGISTRY[p][name]))
    return out
