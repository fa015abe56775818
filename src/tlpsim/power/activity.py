"""Activity of one launch in energy-table terms: how many times each structure's
events happened, and for how many instance-cycles each structure was powered.

Everything is derived from counters the timing model already keeps (SMStats, the
operand storage's OperandStats, the L1 tag arrays, and the L2 / crossbar / DRAM
records in LaunchStats.components); nothing here touches the simulation.

Events per structure (the table key is `<event>_energy_pj`):

    rf_bank            access      128-bit entries read or written: 32-lane register accesses
                                   x warp_size x 32 / access_bits (a full warp register is
                                   moved whatever the active mask, as in Fermi)
                       wakeup      subarrays woken (plug-ins that gate subarrays)
    operand_collector  access      the same entries, crossing the bank <-> collector crossbar
    smem               access      bank words: warp accesses x warp_size x active-lane fraction
                       crossbar    passes through the crossbar: warp accesses + conflict replays
    l1d                access      line accesses (hits, misses, pending hits)
                       fill        sectors filled
                       write       stores (write-through, no allocate): one per L2 write request
    l1c                access/fill line accesses / lines filled
    l1i                access      fetches: warp instructions / sm.fetch_width
    decode             access      warp instructions
    scheduler          access      issued warp instructions
    alu                int/fp32/fp64/sfu/ldst   active lanes: warp instructions of the class
                                   x warp_size x active-lane fraction (the SM's thread/warp
                                   instruction ratio; branches count as int)
    l2                 tag         tag lookups; read / write: data-array sectors
    icnt               flit        flits, both directions
    dram               activate, precharge; read_byte / write_byte: bytes on the data bus
    <added structure>  access      OperandStats.events[name]

Static: instance-cycles powered. RF and shared memory follow the CTAs resident
(resident CTA-cycles x the CTA's allocation / the instance size) under ideal gating
(power.gate_unused), or the plug-in's subarray on-cycles; the other SM structures
are powered for the whole launch on every SM, or only in cycles with resident warps
under power.gate_idle_sms; L2, crossbar and DRAM for the whole launch. Two constant
powers of GPUWattch's: `sm_idle` in SM-cycles without resident warps (none under
power.gate_idle_sms) and `gpu_const` (the chip) for the whole launch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Activity", "launch_activity"]

_ALU_CLASS = {"int": "int", "branch": "int", "fp32": "fp32", "fp64": "fp64", "sfu": "sfu", "mem": "ldst",
              "atomic": "ldst"}


@dataclass
class Activity:
    """Event counts and powered instance-cycles of one launch (whole GPU)."""

    cycles: int                                   # core cycles of the launch
    core_mhz: float
    events: dict = field(default_factory=dict)    # structure -> {event: count}
    on_cycles: dict = field(default_factory=dict)  # structure -> instance-cycles powered
    capacity_cycles: dict = field(default_factory=dict)  # structure -> instance-cycles if never gated

    def add(self, struct: str, event: str, n: float) -> None:
        if n:
            ev = self.events.setdefault(struct, {})
            ev[event] = ev.get(event, 0) + n

    def power(self, struct: str, on: float, capacity: float) -> None:
        self.on_cycles[struct] = self.on_cycles.get(struct, 0) + on
        self.capacity_cycles[struct] = self.capacity_cycles.get(struct, 0) + capacity


def _sum(rows, key) -> float:
    return sum(r.get(key, 0) for r in rows)


def launch_activity(cfg, table: dict, cycles: int, per_sm: list, sm_parts: list, mem: dict, *,
                    regs_per_cta: int, smem_per_cta: int, gates_subarrays: bool = False,
                    structures: dict | None = None) -> Activity:
    """Activity of a launch from its counter deltas.

    per_sm: SMStats dicts; sm_parts: `SM.part_counters()` dicts; mem: MemorySystem.counters();
    regs_per_cta / smem_per_cta: the allocation of one CTA (registers, bytes)."""
    s, g = cfg.sm, cfg.gpu
    n_sms = len(per_sm)
    act = Activity(cycles=cycles, core_mhz=g.core_clock_mhz)
    warp_insts = _sum(per_sm, "warp_insts")
    lane_frac = _sum(per_sm, "thread_insts") / (warp_insts * s.warp_size) if warp_insts else 0.0

    # register file and operand collectors
    entries = s.warp_size * 32 / table["rf_bank"]["access_bits"]
    reg_accesses = _sum(per_sm, "rf_reads") + _sum(per_sm, "rf_writes")
    act.add("rf_bank", "access", reg_accesses * entries)
    act.add("operand_collector", "access", reg_accesses * entries)
    ops = [p["ops"] for p in sm_parts]
    act.add("rf_bank", "wakeup", _sum(ops, "subarray_wakeups"))
    for o in ops:
        for name, n in o.get("events", {}).items():
            act.add(name, "access", n)

    # shared memory, L1s, front end
    smem = _sum(per_sm, "smem_accesses")
    act.add("smem", "access", smem * s.warp_size * lane_frac)
    act.add("smem", "crossbar", smem + _sum(per_sm, "smem_bank_conflict_cycles"))
    l2 = mem.get("l2_slices", [])
    if cfg.l1d.enabled:
        act.add("l1d", "access", _sum(per_sm, "l1d_accesses"))
        act.add("l1d", "fill", _sum([p["l1d"] for p in sm_parts], "fill_sectors"))
        # the stores the L1 took: those sent on to the L2 (its writes, less the L1's own
        # dirty-line writebacks) and those a write-back line kept
        act.add("l1d", "write", _sum(l2, "writes") - _sum(per_sm, "l1d_writebacks") + _sum(per_sm, "l1d_write_hits"))
    act.add("l1c", "access", _sum(per_sm, "l1c_accesses"))
    act.add("l1c", "fill", _sum([p["l1c"] for p in sm_parts], "fills"))
    act.add("l1i", "access", warp_insts / s.fetch_width)
    act.add("decode", "access", warp_insts)
    act.add("scheduler", "access", _sum(per_sm, "issued"))
    for row in per_sm:
        for oc, n in row.get("opclass_insts", {}).items():
            unit = _ALU_CLASS.get(oc)
            if unit:
                act.add("alu", unit, n * s.warp_size * lane_frac)

    # memory side
    act.add("l2", "tag", _sum(l2, "accesses"))
    act.add("l2", "read", _sum(l2, "data_reads"))
    act.add("l2", "write", _sum(l2, "data_writes"))
    act.add("icnt", "flit", mem.get("icnt_up_flits", 0) + mem.get("icnt_down_flits", 0))
    dr = mem.get("dram_channels", [])
    rb, wb = _sum(dr, "read_bursts"), _sum(dr, "write_bursts")
    moved = _sum(dr, "bytes")
    if rb + wb:
        act.add("dram", "read_byte", moved * rb / (rb + wb))
        act.add("dram", "write_byte", moved * wb / (rb + wb))
    act.add("dram", "activate", _sum(dr, "activates"))
    act.add("dram", "precharge", _sum(dr, "precharges"))

    # static: powered instance-cycles
    sm_cycles = cycles * n_sms
    # SM-cycles with resident warps (issue slots are counted only then)
    busy = _sum(per_sm, "issue_slots") / s.n_schedulers
    sm_on = min(busy, sm_cycles) if cfg.power.gate_idle_sms else sm_cycles
    cta_cycles = _sum(per_sm, "resident_cta_cycles")
    rf_banks = s.register_file_bytes / table["rf_bank"]["size_bytes"]
    if gates_subarrays:
        # subarrays of the config's RF geometry (port.rf_geometry()) -> table banks powered
        rf_on = _sum(ops, "subarray_on_cycles") * s.rf_subarray_bytes / table["rf_bank"]["size_bytes"]
    elif cfg.power.gate_unused:
        rf_on = min(cta_cycles * regs_per_cta * 4 / table["rf_bank"]["size_bytes"], rf_banks * sm_cycles)
    else:
        rf_on = rf_banks * sm_on
    act.power("rf_bank", rf_on, rf_banks * sm_cycles)
    smem_banks = s.shared_bytes / table["smem"]["size_bytes"]
    smem_on = (min(cta_cycles * smem_per_cta / table["smem"]["size_bytes"], smem_banks * sm_cycles)
               if cfg.power.gate_unused else smem_banks * sm_on)
    act.power("smem", smem_on, smem_banks * sm_cycles)
    sized = {"l1d": cfg.l1d.size_kb * 1024 if cfg.l1d.enabled else 0, "l1c": cfg.l1c.size_kb * 1024,
             "l1i": cfg.l1i.size_kb * 1024}
    for name, nbytes in sized.items():
        n = nbytes / table[name]["size_bytes"]
        act.power(name, n * sm_on, n * sm_cycles)
    for name in ("operand_collector", "decode", "scheduler", "alu", "sm_core"):
        act.power(name, sm_on, sm_cycles)
    # GPUWattch's idle-SM power: SM-cycles without resident warps (a gated idle SM draws none)
    act.power("sm_idle", 0 if cfg.power.gate_idle_sms else sm_cycles - min(busy, sm_cycles), sm_cycles)
    act.power("gpu_const", cycles, cycles)
    for name, count in (structures or {}).items():
        act.power(name, count * sm_on, count * sm_cycles)
    n = cfg.l2.size_kb * 1024 / table["l2"]["size_bytes"] * cycles
    act.power("l2", n, n)
    act.power("icnt", cycles, cycles)
    n = cfg.dram.n_partitions * cfg.dram.chips_per_partition * cycles
    act.power("dram", n, n)
    return act
