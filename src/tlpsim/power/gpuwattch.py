"""GPUWattch's GTX 480 power model applied to our activity counters: the reference our
40 nm table is compared with (docs/energy.md, "Power split against GPUWattch";
benchmarks/power_split.py).

GPUWattch (Leng et al., ISCA 2013) as released in GPGPU-Sim (gpgpu-sim_distribution,
commit 90ec3399). Sources of the numbers below:
  [GW-X] configs/tested-cfgs/SM2_GTX480/gpuwattch_gtx480.xml: idle_core_power = 1.59 W
         (line 31), the scaling coefficients TOT_INST..NOC_A (lines 33-59), CONST_DYNAMICN = 11 W
         (line 62), 16 cores at 40 nm, 700 MHz, 380 K (lines 6, 20-22).
  [GW-W] src/gpuwattch/gpgpu_sim_wrapper.cc: an event's energy is McPAT's per-event energy
         x its scaling coefficient (update_coefficients, lines 477-608); the reported power is
         McPAT's runtime dynamic power + the constant dynamic power (power_metrics_calculations,
         lines 409-416; update_components_power, lines 679-692): McPAT's leakage is not reported.
  [GW-I] src/gpgpu-sim/power_interface.cc (mcpat_cycle, lines 90-93): idle SMs = SMs without
         a resident CTA, each drawing idle_core_power.
  [GW-M] McPAT of src/gpuwattch run on [GW-X] (docs/energy.md says how it was run): per-SM and chip
         leakage (subthreshold + gate) per component, and the per-event energies of [GW-W].

What is not reconstructed: the pipeline duty-cycle power (PIPEP), the texture cache (no
texture path here), NON_REG_OPs (operands not read from the RF). Counting follows
GPGPU-Sim's: register accesses per thread (a warp access counts warp_size), shared memory per
bank-conflict pass, L1/L2 per request, DRAM per 64-byte command, NoC per flit.
"""

from __future__ import annotations

from tlpsim.power.activity import Activity
from tlpsim.power.model import energy_of

__all__ = ["CONST_W", "EVENT_PJ", "IDLE_SM_W", "LEAKAGE_CHIP_W", "LEAKAGE_SM_W", "gpuwattch_energy"]

# [GW-W]/[GW-M]: McPAT per-event energy (pJ) x [GW-X] scaling coefficient
EVENT_PJ = {
    "REG_RD_bank": 26.7843 * 0.14,       # bank part of a thread-register read (REG_RD 0.14)
    "REG_RD_collector": 25.1216 * 0.14,  # crossbar + arbiter + operand collector part of the read
    "REG_WR": 28.5050 * 0.21,
    "SHRD_ACC": 301.0601 * 7.04,
    "DC_RH": 132.5475 * 22.14, "DC_RM": 90.2301 * 24.66, "DC_WH": 143.8719 * 1.53, "DC_WM": 65.4354 * 39.79,
    "CC_H": 132.5475 * 11.07, "CC_M": 90.2301 * 12.33,
    "IC_H": 29.6423 * 2.14, "IC_M": 96.5424 * 22.47,
    "TOT_INST": 1.8071 * 2.00, "FP_INT": 12.0109 * 4.57,
    "SP_ACC": 1.1323 * 2.38, "FPU_ACC": 46.2186 * 0.64, "SFU_ACC": 94.8075 * 0.51,
    "L2_RH": 203.4112 * 13.79, "L2_RM": 2.9006 * 35.18, "L2_WH": 321.5971 * 43.07, "L2_WM": 523.1308 * 28.72,
    "NOC_A": 6.3460 * 305.48,
    "MEM_RD": 81661.9054 * 0.33, "MEM_WR": 39662.1406 * 0.40, "MEM_PRE": 38475.0 * 0.11,
}
# [GW-M] leakage of one SM's components (W): "Register file banks", "Shared Memory", "Data
# Cache", "Constant Cache", "Instruction Cache"; sm_core = the Core total less these
_CORE_W = 2.16377 + 0.671831
LEAKAGE_SM_W = {"rf_bank": 0.60286 + 0.00168409, "smem": 0.413284 + 0.568881, "l1d": 0.0254597 + 0.00170356,
                "l1c": 0.0254597 + 0.00170356, "l1i": 0.0187221 + 0.00118634}
LEAKAGE_SM_W["sm_core"] = _CORE_W - sum(LEAKAGE_SM_W.values())
# [GW-M] chip-level leakage (W): Total L2s, Total NoCs, Total MCs (6 memory controllers)
LEAKAGE_CHIP_W = {"l2": 0.0818198 + 0.00733843, "icnt": 0.025925 + 0.00359925, "dram": 0.84662 + 0.0870563}
IDLE_SM_W = 1.59     # [GW-X] idle_core_power, per SM without a resident CTA [GW-I]
CONST_W = 11.0       # [GW-X] CONST_DYNAMICN: constant dynamic power of the chip while a kernel runs

_ALU = {"int": "SP_ACC", "branch": "SP_ACC", "fp32": "FPU_ACC", "fp64": "FPU_ACC", "sfu": "SFU_ACC"}
_TABLE = {
    "rf_bank": {"read_energy_pj": EVENT_PJ["REG_RD_bank"], "write_energy_pj": EVENT_PJ["REG_WR"]},
    "operand_collector": {"read_energy_pj": EVENT_PJ["REG_RD_collector"]},
    "smem": {"pass_energy_pj": EVENT_PJ["SHRD_ACC"]},
    "l1d": {"read_hit_energy_pj": EVENT_PJ["DC_RH"], "read_miss_energy_pj": EVENT_PJ["DC_RM"],
            "write_hit_energy_pj": EVENT_PJ["DC_WH"], "write_miss_energy_pj": EVENT_PJ["DC_WM"]},
    "l1c": {"hit_energy_pj": EVENT_PJ["CC_H"], "miss_energy_pj": EVENT_PJ["CC_M"]},
    "l1i": {"hit_energy_pj": EVENT_PJ["IC_H"], "miss_energy_pj": EVENT_PJ["IC_M"]},
    "decode": {"inst_energy_pj": EVENT_PJ["TOT_INST"]},
    "scheduler": {"inst_energy_pj": EVENT_PJ["FP_INT"]},
    "alu": {f"{k}_energy_pj": EVENT_PJ[k] for k in ("SP_ACC", "FPU_ACC", "SFU_ACC")},
    "l2": {"read_hit_energy_pj": EVENT_PJ["L2_RH"], "read_miss_energy_pj": EVENT_PJ["L2_RM"],
           "write_hit_energy_pj": EVENT_PJ["L2_WH"], "write_miss_energy_pj": EVENT_PJ["L2_WM"]},
    "icnt": {"flit_energy_pj": EVENT_PJ["NOC_A"]},
    "dram": {"read_energy_pj": EVENT_PJ["MEM_RD"], "write_energy_pj": EVENT_PJ["MEM_WR"],
             "precharge_energy_pj": EVENT_PJ["MEM_PRE"]},
    "sm_core": {}, "sm_idle": {"leakage_mw_per_bank": IDLE_SM_W * 1e3},
    "gpu_const": {"leakage_mw_per_bank": CONST_W * 1e3},
}
for _name, _w in {**LEAKAGE_SM_W, **LEAKAGE_CHIP_W}.items():
    _TABLE[_name]["leakage_mw_per_bank"] = _w * 1e3


def _sum(rows, key) -> float:
    return sum(r.get(key, 0) for r in rows)


def gpuwattch_activity(cfg, inputs) -> Activity:
    """The launch's events in GPUWattch's units, and its powered instance-cycles (one
    instance = one SM, or the whole chip for the L2, NoC, memory controllers and constant
    power; GPUWattch gates nothing)."""
    s, per_sm, mem = cfg.sm, inputs.per_sm, inputs.mem
    cycles, n_sms = inputs.cycles, len(inputs.per_sm)
    act = Activity(cycles=cycles, core_mhz=cfg.gpu.core_clock_mhz)
    reads, writes = _sum(per_sm, "rf_reads") * s.warp_size, _sum(per_sm, "rf_writes") * s.warp_size
    act.add("rf_bank", "read", reads)
    act.add("rf_bank", "write", writes)
    act.add("operand_collector", "read", reads)
    act.add("smem", "pass", _sum(per_sm, "smem_accesses") + _sum(per_sm, "smem_bank_conflict_cycles"))
    l2 = mem.get("l2_slices", [])
    act.add("l1d", "read_hit", _sum(per_sm, "l1d_hits") + _sum(per_sm, "l1d_pending_hits"))
    act.add("l1d", "read_miss", _sum(per_sm, "l1d_misses"))
    # a store a write-back line kept is a write hit; every other store reaches the L2 (no
    # write-allocate), where the L1's dirty-line writebacks are writes too but not stores
    act.add("l1d", "write_hit", _sum(per_sm, "l1d_write_hits"))
    act.add("l1d", "write_miss", _sum(l2, "writes") - _sum(per_sm, "l1d_writebacks"))
    act.add("l1c", "hit", _sum(per_sm, "l1c_accesses") - _sum(per_sm, "l1c_misses"))
    act.add("l1c", "miss", _sum(per_sm, "l1c_misses"))
    warp_insts = _sum(per_sm, "warp_insts")
    act.add("l1i", "hit", warp_insts / s.fetch_width)
    act.add("l1i", "miss", _sum(per_sm, "ifetch_requests"))
    act.add("decode", "inst", warp_insts)
    lane_frac = _sum(per_sm, "thread_insts") / (warp_insts * s.warp_size) if warp_insts else 0.0
    for row in per_sm:
        for oc, n in row.get("opclass_insts", {}).items():
            if oc in _ALU:
                act.add("scheduler", "inst", n)
                act.add("alu", _ALU[oc], n * s.warp_size * lane_frac)
    hit_frac = (_sum(l2, "hits") + _sum(l2, "pending_hits")) / _sum(l2, "accesses") if _sum(l2, "accesses") else 0.0
    for kind in ("read", "write"):
        n = _sum(l2, f"{kind}s")
        act.add("l2", f"{kind}_hit", n * hit_frac)
        act.add("l2", f"{kind}_miss", n * (1 - hit_frac))
    act.add("icnt", "flit", mem.get("icnt_up_flits", 0) + mem.get("icnt_down_flits", 0))
    dr, d = mem.get("dram_channels", []), cfg.dram
    atom = d.burst_length * d.bus_width_bytes * d.chips_per_partition   # GPGPU-Sim's dram_atom_size
    rb, wb = _sum(dr, "read_bursts"), _sum(dr, "write_bursts")
    if rb + wb:
        moved = _sum(dr, "bytes") / atom
        act.add("dram", "read", moved * rb / (rb + wb))
        act.add("dram", "write", moved * wb / (rb + wb))
    act.add("dram", "precharge", _sum(dr, "precharges"))
    sm_cycles = n_sms * cycles
    for name in LEAKAGE_SM_W:
        act.power(name, sm_cycles, sm_cycles)
    busy = min(_sum(per_sm, "issue_slots") / s.n_schedulers, sm_cycles)
    act.power("sm_idle", sm_cycles - busy, sm_cycles)
    for name in (*LEAKAGE_CHIP_W, "gpu_const"):
        act.power(name, cycles, cycles)
    return act


def gpuwattch_energy(cfg, inputs):
    """EnergyStats of one launch (`EnergyInputs`) under GPUWattch's GTX 480 model."""
    return energy_of(gpuwattch_activity(cfg, inputs), _TABLE, "gpuwattch_gtx480")
