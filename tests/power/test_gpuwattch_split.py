"""The power split against GPUWattch (docs/energy.md): every GPUWattch-derived entry of
the 40 nm table equals the GPUWattch figure it cites, every energy and leakage entry names
its source, GPUWattch's model maps our counters in its own units, and the RF + shared-memory
static share of a tiny run is the one the table's numbers give."""

import re
from importlib import resources

import pytest

import tlpsim
import tlpsim.power.model as power_model
from tlpsim.config.loader import load_config
from tlpsim.power.gpuwattch import (
    CONST_W,
    EVENT_PJ,
    IDLE_SM_W,
    LEAKAGE_CHIP_W,
    LEAKAGE_SM_W,
    gpuwattch_activity,
    gpuwattch_energy,
)
from tlpsim.power.table import node_table
from tlpsim.timing.stats import EnergyInputs
from tlpsim.workloads.registry import load_workloads

T = node_table("40nm")
CFG = load_config("gtx480")

# (structure, key, GPUWattch figure it is derived from, decimals kept in the table)
DERIVED = [
    ("rf_bank", "leakage_mw_per_bank", LEAKAGE_SM_W["rf_bank"] * 1e3 / 32, 3),
    ("smem", "leakage_mw_per_bank", LEAKAGE_SM_W["smem"] * 1e3 / 32, 3),
    ("smem", "crossbar_energy_pj", EVENT_PJ["SHRD_ACC"], 1),
    ("l1d", "access_energy_pj", EVENT_PJ["DC_RH"], 1),
    ("l1d", "write_energy_pj", EVENT_PJ["DC_WM"], 1),
    ("l1d", "leakage_mw_per_bank", LEAKAGE_SM_W["l1d"] * 1e3, 3),
    ("l1c", "access_energy_pj", EVENT_PJ["CC_H"], 1),
    ("l1c", "leakage_mw_per_bank", LEAKAGE_SM_W["l1c"] * 1e3 * 8 / 16, 3),     # per bit: 8 KB of GPUWattch's 16 KB
    ("l1i", "access_energy_pj", EVENT_PJ["IC_H"], 2),
    ("l1i", "leakage_mw_per_bank", LEAKAGE_SM_W["l1i"] * 1e3 * 2 / 16, 3),     # 2 KB of 16 KB
    ("decode", "access_energy_pj", EVENT_PJ["TOT_INST"], 3),
    ("scheduler", "access_energy_pj", EVENT_PJ["FP_INT"], 2),
    ("alu", "int_energy_pj", EVENT_PJ["SP_ACC"], 3),
    ("alu", "fp32_energy_pj", EVENT_PJ["FPU_ACC"], 2),
    ("alu", "sfu_energy_pj", EVENT_PJ["SFU_ACC"], 2),
    ("sm_core", "leakage_mw_per_bank", LEAKAGE_SM_W["sm_core"] * 1e3, 2),
    ("sm_idle", "leakage_mw_per_bank", IDLE_SM_W * 1e3, 1),
    ("gpu_const", "leakage_mw_per_bank", CONST_W * 1e3, 1),
    ("l2", "leakage_mw_per_bank", LEAKAGE_CHIP_W["l2"] * 1e3, 3),
    ("icnt", "flit_energy_pj", EVENT_PJ["NOC_A"], 1),
    ("icnt", "leakage_mw_per_bank", LEAKAGE_CHIP_W["icnt"] * 1e3, 3),
    ("dram", "read_byte_energy_pj", EVENT_PJ["MEM_RD"] / 64, 2),               # per 64-byte command
    ("dram", "write_byte_energy_pj", EVENT_PJ["MEM_WR"] / 64, 2),
    ("dram", "precharge_energy_pj", EVENT_PJ["MEM_PRE"], 2),
    ("dram", "leakage_mw_per_bank", LEAKAGE_CHIP_W["dram"] * 1e3 / 12, 3),     # 6 controllers x 2 chips
]


def _lines(node="40nm"):
    """(structure, key) -> the table line's comment."""
    out, struct = {}, None
    for ln in (resources.files("tlpsim.power") / "tables" / f"{node}.toml").read_text().splitlines():
        m = re.match(r"^\[(\w+)\]", ln)
        if m:
            struct = m.group(1)
        m = re.match(r"^(\w+)\s*=\s*[0-9.]+\s*#(.*)$", ln)
        if m:
            out[(struct, m.group(1))] = m.group(2)
    return out


@pytest.mark.parametrize("struct,key,figure,decimals", DERIVED, ids=[f"{s}.{k}" for s, k, _, _ in DERIVED])
def test_gpuwattch_entries_equal_the_figure_they_cite(struct, key, figure, decimals):
    assert T[struct][key] == round(figure, decimals)
    assert re.search(r"\[GW(-M)?\]", _lines()[(struct, key)])


@pytest.mark.parametrize("node", ["28nm", "40nm", "45nm"])
def test_every_energy_and_leakage_entry_names_its_source(node):
    tags = ("[J]", "[K]", "[H]", "[GW]", "[GW-M]", "est.")
    entries = {k: c for k, c in _lines(node).items() if k[1].endswith("_energy_pj") or k[1] == "leakage_mw_per_bank"}
    assert len(entries) > 40
    assert [k for k, c in entries.items() if not any(t in c for t in tags)] == []


def test_the_gpuwattch_figures_are_the_mcpat_run_times_the_scaling_coefficients():
    # a few figures checked against the McPAT output quoted in docs/energy.md
    assert EVENT_PJ["REG_RD_bank"] + EVENT_PJ["REG_RD_collector"] == pytest.approx(51.9059 * 0.14, abs=1e-4)
    assert EVENT_PJ["SHRD_ACC"] == pytest.approx(2119.4631, abs=1e-3)
    assert sum(LEAKAGE_SM_W.values()) == pytest.approx(2.16377 + 0.671831)   # McPAT's Core total
    assert (IDLE_SM_W, CONST_W) == (1.59, 11.0)


def _inputs(cycles=1000, **kw):
    sm = {"warp_insts": 100, "thread_insts": 2400, "issue_slots": 2 * 400, "rf_reads": 200, "rf_writes": 90,
          "smem_accesses": 10, "smem_bank_conflict_cycles": 4, "l1d_hits": 5, "l1d_pending_hits": 1,
          "l1d_misses": 4, "l1c_accesses": 6, "l1c_misses": 2, "ifetch_requests": 3,
          "opclass_insts": {"int": 40, "fp32": 30, "mem": 30}}
    mem = {"icnt_up_flits": 30, "icnt_down_flits": 50,
           "l2_slices": [{"accesses": 10, "hits": 6, "pending_hits": 2, "reads": 7, "writes": 3}] * 2,
           "dram_channels": [{"read_bursts": 3, "write_bursts": 1, "bytes": 256, "precharges": 1}] * 3}
    return EnergyInputs(cycles, [sm, sm], [], mem, 16, 256, 0, **kw)


def test_gpuwattch_counts_in_its_own_units():
    act = gpuwattch_activity(CFG, _inputs())
    ev = act.events
    assert ev["rf_bank"] == {"read": 2 * 200 * 32, "write": 2 * 90 * 32}      # per thread register
    assert ev["operand_collector"] == {"read": 2 * 200 * 32}
    assert ev["smem"] == {"pass": 2 * 14}
    assert ev["l1d"] == {"read_hit": 12, "read_miss": 8, "write_miss": 6}
    assert ev["l1c"] == {"hit": 8, "miss": 4} and ev["l1i"] == {"hit": 100, "miss": 6}
    assert ev["scheduler"] == {"inst": 2 * 70} and ev["decode"] == {"inst": 200}
    assert ev["alu"] == {"SP_ACC": 2 * 40 * 24.0, "FPU_ACC": 2 * 30 * 24.0}
    assert ev["l2"] == pytest.approx({"read_hit": 11.2, "read_miss": 2.8, "write_hit": 4.8, "write_miss": 1.2})
    assert ev["dram"] == {"read": 9, "write": 3, "precharge": 3}             # 768 bytes = 12 commands of 64
    assert act.on_cycles["sm_idle"] == 2 * 600 and act.on_cycles["gpu_const"] == 1000
    e = gpuwattch_energy(CFG, _inputs())
    s = 1000 / 700e6
    assert e.static_j["rf_bank"] == pytest.approx(2 * s * LEAKAGE_SM_W["rf_bank"])
    assert e.static_j["sm_idle"] == pytest.approx(1200 / 700e6 * 1.59)
    assert e.dynamic_j["dram"] == pytest.approx((9 * EVENT_PJ["MEM_RD"] + 3 * EVENT_PJ["MEM_WR"] +
                                                 3 * EVENT_PJ["MEM_PRE"]) * 1e-12)


def test_record_inputs_collects_what_the_model_prices_inside_the_block():
    model, a, b = power_model.EnergyModel(CFG), _inputs(), _inputs(cycles=2000)
    with power_model.record_inputs() as outer:
        with power_model.record_inputs() as inner:
            model(a)
        model(b)
    model(a)
    assert inner == [a] and outer == [a, b]
    assert power_model._RECORDERS == []


def test_rf_and_shared_memory_static_share_of_a_tiny_run():
    with power_model.record_inputs() as seen, tlpsim.Device(mode="timing", config=CFG):
        res = load_workloads()["hotspot"].execute("tiny")
    assert res.verified and len(res.launches) == len(seen) >= 1
    e, inputs = res.launches[0].stats.energy, seen[0]
    assert inputs.cycles == res.launches[0].stats.cycles
    t = inputs.cycles / 700e6
    # no gating on the GTX 480: every bank of 15 SMs leaks for the whole launch
    p_rs = 15 * 32 * (T["rf_bank"]["leakage_mw_per_bank"] + T["smem"]["leakage_mw_per_bank"]) * 1e-3
    rs = e.static_j["rf_bank"] + e.static_j["smem"]
    assert rs == pytest.approx(p_rs * t, rel=1e-12)
    # the rest of the static power lies between all SMs busy and all SMs idle
    sm_leak = sum(T[s]["leakage_mw_per_bank"] * n for s, n in
                  (("rf_bank", 32), ("smem", 32), ("l1d", 1), ("l1c", 1), ("l1i", 1), ("sm_core", 1))) * 1e-3
    chip = (6 * T["l2"]["leakage_mw_per_bank"] + T["icnt"]["leakage_mw_per_bank"] +
            12 * T["dram"]["leakage_mw_per_bank"] + T["gpu_const"]["leakage_mw_per_bank"]) * 1e-3
    p_min, p_max = 15 * sm_leak + chip, 15 * sm_leak + chip + 15 * T["sm_idle"]["leakage_mw_per_bank"] * 1e-3
    assert p_min * t <= e.total_static_j <= p_max * t
    share = rs / e.total_j
    assert rs / (e.total_dynamic_j + p_max * t) <= share <= rs / (e.total_dynamic_j + p_min * t)
    # and GPUWattch's model, on the same counters, gives its own share from its own figures
    g = gpuwattch_energy(CFG, inputs)
    assert g.static_j["rf_bank"] + g.static_j["smem"] == \
        pytest.approx(15 * t * (LEAKAGE_SM_W["rf_bank"] + LEAKAGE_SM_W["smem"]), rel=1e-12)


def test_gpuwattch_prices_kept_stores_as_l1_write_hits():
    # per SM: 5 stores a write-back line kept (DC_WH); 2 dirty-line writebacks among the L2's writes
    inp = _inputs()
    inp.per_sm[0] = {**inp.per_sm[0], "l1d_write_hits": 5, "l1d_writebacks": 2}
    inp.per_sm[1] = {**inp.per_sm[1], "l1d_write_hits": 5, "l1d_writebacks": 2}
    ev = gpuwattch_activity(CFG, inp).events
    assert ev["l1d"]["write_hit"] == 10 and ev["l1d"]["write_miss"] == 6 - 4
