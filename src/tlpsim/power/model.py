"""The energy model: counts x table.

dynamic(structure) = sum over its events of count x `<event>_energy_pj`
static(structure)  = powered instance-cycles x banks x `leakage_mw_per_bank` / core clock

Nothing else enters: every number comes from the Activity (the simulator's
counters) or the EnergyTable (the node's data file plus overrides), so a changed
table entry changes the result in proportion."""

from __future__ import annotations

import contextlib

from tlpsim.errors import ConfigError
from tlpsim.power.activity import Activity, launch_activity
from tlpsim.power.table import EnergyTable, load_table
from tlpsim.timing.stats import EnergyInputs, EnergyStats

__all__ = ["EnergyModel", "energy_of", "launch_energy", "plugin_energy_problems", "record_inputs"]

_PJ = 1e-12
_RECORDERS: list[list] = []


@contextlib.contextmanager
def record_inputs():
    """Collect the EnergyInputs of every launch an EnergyModel prices inside the block,
    so that other energy models can be applied to the same counters afterwards
    (benchmarks/power_split.py: ours against GPUWattch's)."""
    got: list = []
    _RECORDERS.append(got)
    try:
        yield got
    finally:
        _RECORDERS[:] = [r for r in _RECORDERS if r is not got]


def energy_of(act: Activity, table: EnergyTable, node: str = "") -> EnergyStats:
    """Energy of `act` under `table`."""
    seconds = act.cycles / (act.core_mhz * 1e6)
    dynamic, static = {}, {}
    for struct, events in act.events.items():
        entry = table.get(struct)
        if entry is None:
            raise ConfigError(f"activity names structure {struct!r}, which the {node or 'given'} energy table "
                              f"lacks (add [{struct}] to power/tables/{node or '<node>'}.toml)")
        e = 0.0
        for event, n in events.items():
            key = f"{event}_energy_pj"
            if key not in entry:
                raise ConfigError(f"energy table [{struct}] has no {key} for the {event!r} events it counted")
            e += n * entry[key]
        dynamic[struct] = e * _PJ
    core_s = 1.0 / (act.core_mhz * 1e6)
    on_fraction = {}
    for struct, on in act.on_cycles.items():
        entry = table.get(struct)
        if entry is None:
            raise ConfigError(f"structure {struct!r} is powered but the {node or 'given'} energy table lacks it")
        leak_w = entry.get("leakage_mw_per_bank", 0.0) * entry.get("banks", 1.0) * 1e-3
        static[struct] = on * core_s * leak_w
        cap = act.capacity_cycles.get(struct, 0)
        on_fraction[struct] = on / cap if cap else 0.0
    rec = EnergyStats(technology_node=node, seconds=seconds, dynamic_j=dynamic, static_j=static,
                      events={k: dict(v) for k, v in act.events.items()}, on_fraction=on_fraction)
    rec.total_dynamic_j = sum(dynamic.values())
    rec.total_static_j = sum(static.values())
    rec.total_j = rec.total_dynamic_j + rec.total_static_j
    rec.avg_power_w = rec.total_j / seconds if seconds else 0.0
    return rec


def launch_energy(cfg, table: EnergyTable, inputs: EnergyInputs) -> EnergyStats:
    """Energy record of one launch from the counters the timing model hands over."""
    s = cfg.sm
    # a CTA's allocation with the baseline allocator's rounding (ideal gating powers exactly this)
    regs_thread = -(-inputs.regs_per_thread // s.register_alloc_granularity) * s.register_alloc_granularity
    threads = -(-inputs.threads_per_cta // s.warp_size) * s.warp_size
    smem = -(-inputs.smem_per_cta // s.shared_alloc_granularity) * s.shared_alloc_granularity
    act = launch_activity(cfg, table, inputs.cycles, inputs.per_sm, inputs.sm_parts, inputs.mem,
                          regs_per_cta=regs_thread * threads, smem_per_cta=smem,
                          gates_subarrays=inputs.gates_subarrays, structures=inputs.structures)
    if inputs.plugin_structures or inputs.plugin_energy:
        table = _with_plugin_structures(cfg, table, inputs, act)
    return energy_of(act, table, cfg.power.technology_node)


def _with_plugin_structures(cfg, table: EnergyTable, inputs: EnergyInputs, act: Activity) -> dict:
    """The structures plug-ins declare (`Plugin.energy`): their table entries at this
    node, their accesses, and their leakage over the launch on every SM."""
    node = cfg.power.technology_node
    extended = dict(table)
    n_sms = len(inputs.per_sm)
    for name, struct in inputs.plugin_structures.items():
        if name in table:
            raise ConfigError(f"a plug-in declares energy structure '{name}', which the {node} table already has; "
                              f"rename it, or list the table's structure in the plug-in's `structures` to count it")
        extended[name] = {"access_energy_pj": struct.access_at(node), "leakage_mw_per_bank": struct.leakage_at(node),
                          "banks": 1.0, "source": struct.source}
        act.power(name, struct.instances * n_sms * inputs.cycles, struct.instances * n_sms * inputs.cycles)
    for name, n in inputs.plugin_energy.items():
        if name not in extended:
            raise ConfigError(f"a plug-in counted accesses of energy structure '{name}', which no plug-in declares "
                              f"and the {node} table lacks (declare it in the plug-in's `energy`)")
        act.add(name, "access", n)
    return extended


def plugin_energy_problems(table: EnergyTable, node: str, plugins: dict) -> list[str]:
    """What is wrong with the energy declarations of the chosen plug-ins ({point:
    (class, params)}): a new structure (`energy`) named like one of the table's, or a
    table structure (`structures`) the table lacks."""
    out = []
    for point, (cls, _) in plugins.items():
        if cls is None:
            continue
        who = f"{point} '{getattr(cls, 'plugin_name', cls.__name__)}'"
        for name in dict(getattr(cls, "energy", {}) or {}):
            if name in table:
                out.append(f"{who}: declares energy structure '{name}', which the {node} energy table already has "
                           f"(table structures: docs/plugins.md, 'Energy'); to count the table's entry, list it in "
                           f"`structures = {{'{name}': instances per SM}}` instead of `energy`, or rename it")
        for name in dict(getattr(cls, "structures", {}) or {}):
            if name not in table:
                out.append(f"{who}: uses energy-table structure '{name}', which the {node} table lacks "
                           f"(it has {', '.join(sorted(table))}); declare a new structure in `energy` instead")
            elif "access_energy_pj" not in table[name]:
                events = sorted(k[:-10] for k in table[name] if k.endswith("_energy_pj"))
                out.append(f"{who}: uses energy-table structure '{name}', but count_energy() counts 'access' events "
                           f"and [{name}] has none (its events: {', '.join(events) or 'none'}; the simulator "
                           "counts them itself)")
    return out


class EnergyModel:
    """The timing model's `energy_model` for one config: loads the node's table once."""

    def __init__(self, cfg) -> None:
        self.cfg = cfg
        self.table = load_table(cfg.power.technology_node, cfg.power.table)

    def check_plugins(self, plugins: dict) -> None:
        """ConfigError naming the plug-in if its energy declarations clash with the table."""
        problems = plugin_energy_problems(self.table, self.cfg.power.technology_node, plugins)
        if problems:
            raise ConfigError("; ".join(problems))

    def __call__(self, inputs: EnergyInputs) -> EnergyStats:
        for got in _RECORDERS:
            got.append(inputs)
        return launch_energy(self.cfg, self.table, inputs)
