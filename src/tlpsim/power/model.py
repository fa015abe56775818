"""The energy model: counts x table.

dynamic(structure) = sum over its events of count x `<event>_energy_pj`
static(structure)  = powered instance-cycles x banks x `leakage_mw_per_bank` / core clock

Nothing else enters: every number comes from the Activity (the simulator's
counters) or the EnergyTable (the node's data file plus overrides), so a changed
table entry changes the result in proportion."""

from __future__ import annotations

from tlpsim.errors import ConfigError
from tlpsim.power.activity import Activity, launch_activity
from tlpsim.power.table import EnergyTable, load_table
from tlpsim.timing.stats import EnergyStats

__all__ = ["energy_of", "launch_energy"]

_PJ = 1e-12


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


def launch_energy(gpu, run, cycles: int, per_sm: list, sm_parts: list, mem: dict) -> EnergyStats:
    """Energy record of one launch (called when LaunchStats is built)."""
    cfg = gpu.cfg
    table = getattr(gpu, "_energy_table", None)
    if table is None:
        table = gpu._energy_table = load_table(cfg.power.technology_node, cfg.power.table)
    s, kres = cfg.sm, run.kres
    # a CTA's allocation with the baseline allocator's rounding (ideal gating powers exactly this)
    regs_thread = -(-kres.regs_per_thread // s.register_alloc_granularity) * s.register_alloc_granularity
    threads = -(-kres.threads_per_cta // s.warp_size) * s.warp_size
    smem = -(-kres.smem_per_cta // s.shared_alloc_granularity) * s.shared_alloc_granularity
    ops = gpu.sms[0].operands
    act = launch_activity(cfg, table, cycles, per_sm, sm_parts, mem, regs_per_cta=regs_thread * threads,
                          smem_per_cta=smem, gates_subarrays=ops.gates_subarrays, structures=ops.structures)
    return energy_of(act, table, cfg.power.technology_node)
