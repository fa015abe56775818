"""The base every plug-in shares: declared parameters, subscribed events, declared
statistics and energy structures, and the port it acts through.

A plug-in subscribes to events by naming them in `events`; for each it defines the
handler `on_<event>`. Events nobody subscribed to cost nothing: the SM keeps one
handler list per event and skips empty ones. The `instr_issued` event is also
filtered per static instruction by `watches(instr)`, computed once per kernel, so
a plug-in that watches only loads pays only for loads.

Handler signatures (`now` is the core cycle):

=================  ==============================================================
event              handler
=================  ==============================================================
kernel_start       on_kernel_start(kernel: KernelInfo, now)
kernel_end         on_kernel_end(kernel: KernelInfo, now)
cta_admitted       on_cta_admitted(cta: CTAView, now)          (cta.insts = 0)
cta_retired        on_cta_retired(cta: CTAView, now)           (cta.insts = its total)
warp_started       on_warp_started(warp: WarpView, now)
warp_finished      on_warp_finished(warp: WarpView, now)
warp_blocked       on_warp_blocked(warp: WarpView, reason: str, now)
warp_unblocked     on_warp_unblocked(warp: WarpView, reason: str, now)
instr_issued       on_instr_issued(warp: WarpView, instr: StaticInstr, active_mask: int, now)
writeback          on_writeback(warp: WarpView, instr: StaticInstr, value_class: int, now)
l1d_access         on_l1d_access(warp: WarpView, line: int, outcome: str, evicted: int, now)
window             on_window(counters: WindowCounters, now)
timer              on_timer(tag, now)
=================  ==============================================================

Blocking reasons (`BLOCK_REASONS`): "memory" (a source waits on a load), "scoreboard"
(a source waits on an arithmetic result), "barrier", "fetch" (empty instruction
buffer), "hold" (a plug-in holds the warp). `l1d_access` outcomes: "hit", "miss",
"merged" (waits on a pending miss), "fail" (reservation failure, retried); `evicted`
is the line address the access evicted, or -1.

SM-level plug-ins (warp scheduler, resource allocator, operand storage, context
switcher, execution checker) see the events of their own SM; GPU-level plug-ins
(CTA scheduler, monitor) see every SM's (the views carry the SM id).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tlpsim.errors import ConfigError

#: event name -> handler method
EVENTS: dict[str, str] = {name: "on_" + name for name in (
    "kernel_start", "kernel_end", "cta_admitted", "cta_retired", "warp_started", "warp_finished",
    "warp_blocked", "warp_unblocked", "instr_issued", "writeback", "l1d_access", "window", "timer")}

BLOCK_REASONS = ("memory", "scoreboard", "barrier", "fetch", "hold")

#: one hold bit per extension point, so two plug-ins never release each other's holds
HOLD_BITS: dict[str, int] = {p: 1 << k for k, p in enumerate((
    "cta_scheduler", "resource_allocator", "warp_scheduler", "operand_storage", "context_switcher",
    "execution_checker", "monitor"))}

SM_POINTS = ("resource_allocator", "warp_scheduler", "operand_storage", "context_switcher", "execution_checker")
GPU_POINTS = ("cta_scheduler", "monitor")


#: whether a plug-in's behaviour allows projecting the middle waves of a launch
#: (docs/plugins.md, "Sampling"; tlpsim.sampling.safety): "stationary" after warm-up,
#: "settles" after a last decision point it reports with `port.settled(kid)`, or
#: "non_stationary" (the default: it may change behaviour at any time)
STATIONARITY = ("stationary", "settles", "non_stationary")

#: how a counter becomes a launch's statistic (docs/plugins.md, "Counters")
AGGREGATIONS = ("sum", "max", "mean")


@dataclass(frozen=True)
class Counter:
    """A statistic a plug-in declares: its unit, what it counts, and how it is
    aggregated into a launch's statistic:

    - "sum" (default): an event count; the launch's value is its increase during
      the launch, summed over the plug-in's instances (SMs), and runs sum launches;
    - "max": a level the plug-in writes (registers in use, resident CTAs); the
      launch's value is the highest level any instance wrote during the launch,
      and a run's value the highest of its launches;
    - "mean": a level; the launch's value is its mean over the launch's core cycles
      (time-weighted: each value counts for the cycles until the next write),
      averaged over instances; a run's value weights launches by their cycles."""

    unit: str
    description: str = ""
    agg: str = "sum"

    def __post_init__(self) -> None:
        if self.agg not in AGGREGATIONS:
            raise ConfigError(f"Counter agg must be one of {', '.join(AGGREGATIONS)}, got {self.agg!r}")


@dataclass(frozen=True)
class EnergyStructure:
    """A hardware structure a plug-in adds, for the energy model.

    `access_pj` and `leakage_mw` are one number or one per technology node
    ({"40nm": 1.2, ...}); `source` says where the numbers come from (a paper's
    table, CACTI run, estimate with its derivation). `instances` per SM."""

    access_pj: float | Mapping[str, float]
    source: str
    leakage_mw: float | Mapping[str, float] = 0.0
    instances: int = 1
    description: str = ""

    def access_at(self, node: str) -> float:
        return _at(self.access_pj, node, "access_pj")

    def leakage_at(self, node: str) -> float:
        return _at(self.leakage_mw, node, "leakage_mw")


def _at(value: float | Mapping[str, float], node: str, what: str) -> float:
    if isinstance(value, Mapping):
        if node not in value:
            raise ConfigError(f"energy structure {what} has no value for technology node '{node}' "
                              f"(given for: {', '.join(value)})")
        return float(value[node])
    return float(value)


class PluginCounts:
    """A plug-in's declared counters as plain attributes (`self.counts.spills += 1`);
    setting an undeclared one raises. Levels ("max", "mean" counters) are tracked as
    they are written: their peak, and their integral over core cycles (`clock`)."""

    __slots__ = ("_names", "_values", "_agg", "_peak", "_area", "_since", "_clock")

    def __init__(self, declared: Mapping[str, Counter], clock: Any = None) -> None:
        object.__setattr__(self, "_names", tuple(declared))
        object.__setattr__(self, "_values", {n: 0 for n in declared})
        # only the levels: a "sum" counter's write costs one dict lookup more than before
        object.__setattr__(self, "_agg", {n: c.agg for n, c in declared.items() if c.agg != "sum"})
        object.__setattr__(self, "_peak", {n: 0 for n in self._agg})
        object.__setattr__(self, "_area", {n: 0 for n in self._agg})
        object.__setattr__(self, "_since", {n: 0 for n in self._agg})
        object.__setattr__(self, "_clock", clock)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no counter '{name}' is declared (declared: {', '.join(self._names) or 'none'})") \
                from None

    def __setattr__(self, name: str, value: Any) -> None:
        values = self._values
        if name not in values:
            raise AttributeError(f"no counter '{name}' is declared (declared: {', '.join(self._names) or 'none'})")
        agg = self._agg.get(name)
        if agg is not None:
            if value > self._peak[name]:
                self._peak[name] = value
            if agg == "mean":
                now = self._now()
                self._area[name] += values[name] * (now - self._since[name])
                self._since[name] = now
        values[name] = value

    def _now(self) -> int:
        return int(self._clock()) if self._clock is not None else 0

    def add(self, name: str, n: int | float = 1) -> None:
        setattr(self, name, getattr(self, name) + n)

    def as_dict(self) -> dict[str, int | float]:
        return dict(self._values)

    def aggregated(self) -> dict[str, int | float]:
        """What a launch's statistic is made of: "sum" counters' values, "max" counters'
        peaks since `mark()`, "mean" counters' integrals (value x core cycles) up to now."""
        out = dict(self._values)
        if self._agg:
            now = self._now()
            for n, agg in self._agg.items():
                out[n] = self._peak[n] if agg == "max" else \
                    self._area[n] + self._values[n] * (now - self._since[n])
        return out

    def mark(self) -> None:
        """A launch starts: peaks restart from the current levels."""
        for n in self._agg:
            self._peak[n] = self._values[n]

class Plugin:
    """Common base of every extension point's interface.

    Class attributes a plug-in may set:

    - `Params`: a dataclass or pydantic model of its parameters (None: none);
    - `events`: names from `EVENTS` it subscribes to (define `on_<event>` for each);
    - `counters`: {name: Counter} — its statistics, reported per launch (summed over
      instances, or a level's peak or mean: `Counter.agg`) in the stats record,
      results DB, console and HTML report;
    - `energy`: {name: EnergyStructure} — structures it adds to the energy model;
      count accesses with `port.count_energy(name, n)`;
    - `structures`: {name: instances per SM} — structures of the node's energy table
      it uses (e.g. {"replayq": 1}): they leak for the whole launch and
      `port.count_energy(name, n)` counts their accesses at the table's energy;
    - `stationarity`: one of `STATIONARITY` — whether wave sampling may project the
      middle of a launch it runs in (default "non_stationary": never);
    - `sampling_tracked`: names of its "sum" counters whose rate per warp
      instruction must be stable, as the IPC must, before waves are projected.

    The builder constructs it with its parameters and context keywords — always
    `port` (its `SMPort` or `GPUPort`) and `config` (the full resolved `GPUConfig`),
    plus what the extension point documents (e.g. `n_slots`). `self.port` and
    `self.config` are set before `__init__` runs, so they are usable there even by a
    subclass that does not take `**context` (it receives only the keywords its
    `__init__` names).
    """

    Params: Any = None
    events: frozenset[str] = frozenset()
    counters: Mapping[str, Counter] = {}
    energy: Mapping[str, EnergyStructure] = {}
    structures: Mapping[str, int] = {}
    stationarity: str = "non_stationary"
    sampling_tracked: tuple[str, ...] = ()

    def __init__(self, params: Any = None, **context: Any) -> None:
        self.params = params
        # the builder binds port and config before __init__; a plug-in built by hand gets them here
        self.port: Any = context.get("port", getattr(self, "port", None))
        self.config: Any = context.get("config", getattr(self, "config", None))
        self.counts = PluginCounts(type(self).counters, self._clock)

    def _clock(self) -> int:
        """The core cycle, for the counters' time-weighted levels (0 before a port is bound)."""
        port = getattr(self, "port", None)
        return port.now() if port is not None else 0

    @classmethod
    def config_problems(cls, config: Any, key: str) -> list[str]:
        """What in the resolved `config` this plug-in cannot run under, as messages
        naming `key` (its config key); checked when the simulator is built."""
        return []

    def watches(self, instr: Any) -> bool:
        """Whether `on_instr_issued` wants this static instruction (decided once per kernel)."""
        return True


def check_declarations(cls: type, where: str) -> None:
    """Raise `ConfigError` naming the plug-in when its `events`, `counters` or
    `energy` declarations are malformed or a subscribed handler is missing."""
    events = getattr(cls, "events", frozenset())
    for ev in events:
        if ev not in EVENTS:
            raise ConfigError(f"{where}: subscribes to unknown event '{ev}' (events: {', '.join(EVENTS)})")
        if not callable(getattr(cls, EVENTS[ev], None)):
            raise ConfigError(f"{where}: subscribes to '{ev}' but defines no {EVENTS[ev]}()")
    for name, c in dict(getattr(cls, "counters", {}) or {}).items():
        if not isinstance(c, Counter):
            raise ConfigError(f"{where}: counter '{name}' must be a tlpsim.timing.plugin.Counter, got {c!r}")
    for name, e in dict(getattr(cls, "energy", {}) or {}).items():
        if not isinstance(e, EnergyStructure):
            raise ConfigError(f"{where}: energy structure '{name}' must be an EnergyStructure, got {e!r}")
        if not e.source.strip():
            raise ConfigError(f"{where}: energy structure '{name}' must state the source of its numbers")
    structures = getattr(cls, "structures", {}) or {}
    if not isinstance(structures, Mapping):
        raise ConfigError(f"{where}: `structures` must map energy-table structure names to instances per SM, "
                          f"got {structures!r}")
    for name, n in structures.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ConfigError(f"{where}: `structures['{name}']` must be a number of instances per SM (int >= 0), "
                              f"got {n!r}")
        if name in dict(getattr(cls, "energy", {}) or {}):
            raise ConfigError(f"{where}: '{name}' is both its own energy structure (`energy`) and an energy-table "
                              "structure it uses (`structures`); keep one")
    check_sampling(cls, where)


def check_sampling(cls: type, where: str) -> None:
    """Raise `ConfigError` naming the plug-in when its `stationarity` or
    `sampling_tracked` declaration is malformed."""
    st = getattr(cls, "stationarity", "non_stationary")
    if st not in STATIONARITY:
        raise ConfigError(f"{where}: stationarity must be one of {', '.join(STATIONARITY)}, got {st!r}")
    tracked = getattr(cls, "sampling_tracked", ()) or ()
    if isinstance(tracked, str) or not all(isinstance(n, str) for n in tracked):
        raise ConfigError(f"{where}: sampling_tracked must be a tuple of counter names, got {tracked!r}")
    declared = dict(getattr(cls, "counters", {}) or {})
    for name in tracked:
        c = declared.get(name)
        if c is None:
            raise ConfigError(f"{where}: sampling_tracked names '{name}', which is not one of its counters "
                              f"({', '.join(declared) or 'none declared'})")
        if c.agg != "sum":
            raise ConfigError(f"{where}: sampling_tracked counter '{name}' is a '{c.agg}' level; only 'sum' "
                              "counters have a rate per instruction")


def stationarity_of(obj: Any) -> str:
    """A plug-in instance's declared stationarity ("non_stationary" when undeclared)."""
    return getattr(type(obj), "stationarity", "non_stationary")


def counts_of(obj: Any) -> dict[str, int | float]:
    """A plug-in instance's counters as a launch's statistic is made of them
    (`PluginCounts.aggregated`; {} for objects without declared counters)."""
    c = getattr(obj, "counts", None)
    return c.aggregated() if isinstance(c, PluginCounts) else {}


def aggregations_of(obj: Any) -> dict[str, str]:
    """{counter: "sum" | "max" | "mean"} of a plug-in instance's declared counters."""
    return {n: c.agg for n, c in (getattr(type(obj), "counters", {}) or {}).items()}


def plugin_key(cls: type) -> str:
    """`point.name` of a registered plug-in class (its statistics key)."""
    return f"{getattr(cls, 'plugin_point', 'plugin')}.{getattr(cls, 'plugin_name', cls.__name__)}"


def construct(cls: type, params: Any, context: Mapping[str, Any]) -> Any:
    """Build a plug-in with the context keywords its `__init__` accepts; `port` and
    `config` are attributes before `__init__` runs (and set again afterwards if its
    `__init__` cleared them)."""
    import inspect

    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):  # builtins / compiled classes: pass everything
        kwargs = dict(context)
    else:
        ps = sig.parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps.values()):
            kwargs = dict(context)
        else:
            kwargs = {k: v for k, v in context.items() if k in ps}
    obj = cls.__new__(cls)
    for k in ("port", "config"):
        if k in context:
            try:
                setattr(obj, k, context[k])
            except AttributeError:  # slotted classes without the attribute
                pass
    if isinstance(obj, cls):
        obj.__init__(params, **kwargs)
    for k in ("port", "config"):
        if getattr(obj, k, None) is None and k in context:
            try:
                setattr(obj, k, context[k])
            except AttributeError:  # slotted classes without the attribute
                pass
    return obj


__all__ = ["AGGREGATIONS", "BLOCK_REASONS", "Counter", "EVENTS", "EnergyStructure", "GPU_POINTS", "HOLD_BITS", "Plugin",
           "PluginCounts", "SM_POINTS", "STATIONARITY", "aggregations_of", "check_declarations", "check_sampling", "construct",
           "counts_of", "plugin_key", "stationarity_of"]
