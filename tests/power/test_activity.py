"""Deriving a launch's activity from counter records (hand-made here): event counts,
unit conversions and powered instance-cycles under each gating mode."""


from tlpsim.config.loader import load_config
from tlpsim.power.activity import launch_activity
from tlpsim.power.table import load_table

CFG = load_config("gtx480")
TABLE = load_table("40nm")


def _sm(**kw):
    row = {"warp_insts": 100, "thread_insts": 100 * 32 * 3 // 4, "issued": 100, "issue_slots": 2 * 400,
           "rf_reads": 200, "rf_writes": 90, "smem_accesses": 10, "smem_bank_conflict_cycles": 4,
           "l1d_accesses": 20, "l1c_accesses": 6, "resident_cta_cycles": 2 * 400,
           "opclass_insts": {"int": 40, "fp32": 30, "mem": 30, "barrier": 0}}
    row.update(kw)
    return row


def _parts(**ops):
    o = {"reads": 0, "writes": 0, "subarray_on_cycles": 0, "subarray_wakeups": 0, "events": {}}
    o.update(ops)
    return {"ops": o, "l1d": {"fill_sectors": 12, "fills": 3}, "l1c": {"fills": 2, "fill_sectors": 4}}


MEM = {"icnt_up_flits": 30, "icnt_down_flits": 50,
       "l2_slices": [{"accesses": 10, "data_reads": 16, "data_writes": 8, "writes": 3}] * 2,
       "dram_channels": [{"read_bursts": 3, "write_bursts": 1, "bytes": 128, "activates": 2, "precharges": 1}] * 3}


GATED = load_config("gtx480", ["power.gate_unused=true"])


def _act(cfg=GATED, per_sm=None, parts=None, **kw):
    per_sm = per_sm or [_sm(), _sm()]
    parts = parts or [_parts(), _parts()]
    kw.setdefault("regs_per_cta", 8192)
    kw.setdefault("smem_per_cta", 3072)
    return launch_activity(cfg, TABLE, 1000, per_sm, parts, MEM, **kw)


def test_register_accesses_become_128_bit_entries():
    ev = _act().events
    # 32 lanes x 32 bits / 128 = 8 entries per warp register, reads + writes, two SMs
    assert ev["rf_bank"] == {"access": 2 * (200 + 90) * 8}
    assert ev["operand_collector"] == {"access": 2 * (200 + 90) * 8}


def test_sm_events():
    ev = _act().events
    assert ev["smem"] == {"access": 2 * 10 * 32 * 0.75, "crossbar": 2 * (10 + 4)}
    assert ev["l1d"] == {"access": 40, "fill": 24, "write": 6}       # writes = L2 write requests
    assert ev["l1c"] == {"access": 12, "fill": 4}
    assert ev["l1i"] == {"access": 200 / CFG.sm.fetch_width}
    assert ev["decode"] == {"access": 200} and ev["scheduler"] == {"access": 200}
    assert ev["alu"] == {"int": 2 * 40 * 24.0, "fp32": 2 * 30 * 24.0, "ldst": 2 * 30 * 24.0}


def test_memory_side_events():
    ev = _act().events
    assert ev["l2"] == {"tag": 20, "read": 32, "write": 16}
    assert ev["icnt"] == {"flit": 80}
    assert ev["dram"] == {"read_byte": 384 * 3 / 4, "write_byte": 384 / 4, "activate": 6, "precharge": 3}


def test_ideal_gating_powers_the_resident_ctas_allocation():
    act = _act()
    # 2 CTAs x 400 cycles per SM, 8192 registers x 4 B per CTA, 4 KB banks
    assert act.on_cycles["rf_bank"] == 2 * 800 * 8192 * 4 / 4096
    assert act.capacity_cycles["rf_bank"] == 2 * 1000 * 32
    assert act.on_cycles["smem"] == 2 * 800 * 3072 / 1536
    assert act.capacity_cycles["smem"] == 2 * 1000 * 32
    assert act.on_cycles["sm_core"] == 2000 and act.on_cycles["l2"] == 6 * 1000
    assert act.on_cycles["dram"] == 12 * 1000                           # 6 channels x 2 chips
    assert act.on_cycles["l1d"] == 2000 and act.on_cycles["l1i"] == 2000  # one 16 KB / 2 KB instance per SM


def test_without_gating_everything_is_powered():
    assert CFG.power.gate_unused is False    # Fermi does not gate; Lee et al.'s preset turns it on
    assert load_config("tesla_m2050").power.gate_unused is True
    act = _act(cfg=CFG)
    assert act.on_cycles["rf_bank"] == act.capacity_cycles["rf_bank"] == 2 * 1000 * 32
    assert act.on_cycles["smem"] == 2 * 1000 * 32


def test_idle_sm_power_in_cycles_without_resident_warps():
    act = _act(cfg=CFG)
    # 2 SMs x 1000 cycles, 400 of them with resident warps on each: GPUWattch's idle-SM power
    # for the other 1200 SM-cycles, its constant power for the launch
    assert act.on_cycles["sm_idle"] == 2 * 600 and act.capacity_cycles["sm_idle"] == 2000
    assert act.on_cycles["gpu_const"] == act.capacity_cycles["gpu_const"] == 1000


def test_idle_sm_gating_uses_cycles_with_resident_warps():
    act = _act(cfg=load_config("gtx480", ["power.gate_idle_sms=true"]))
    assert act.on_cycles["sm_core"] == 2 * 400 and act.capacity_cycles["sm_core"] == 2000
    assert act.on_cycles["rf_bank"] == 2 * 400 * 32
    assert act.on_cycles["sm_idle"] == 0                                # a gated idle SM draws nothing
    assert act.on_cycles["l2"] == 6 * 1000 and act.on_cycles["gpu_const"] == 1000   # chip-level parts stay on


def test_subarray_gating_reported_by_the_operand_storage():
    parts = [_parts(subarray_on_cycles=4 * 1000 * 10, subarray_wakeups=5), _parts(subarray_on_cycles=0)]
    act = _act(parts=parts, gates_subarrays=True)
    assert act.on_cycles["rf_bank"] == 1000 * 10    # 4 subarrays of a bank = one bank powered
    assert act.events["rf_bank"]["wakeup"] == 5


def test_structures_a_mechanism_adds():
    parts = [_parts(events={"rename_table": 70}), _parts(events={"rename_table": 30, "operand_cache": 5})]
    act = _act(parts=parts, structures={"rename_table": 1, "operand_cache": 2})
    assert act.events["rename_table"] == {"access": 100} and act.events["operand_cache"] == {"access": 5}
    assert act.on_cycles["rename_table"] == 2000 and act.on_cycles["operand_cache"] == 4000


def test_no_l1d_no_l1d_energy():
    act = _act(cfg=load_config("gtx480", ["l1d.enabled=false"]))
    assert "l1d" not in act.events and act.on_cycles["l1d"] == 0


def test_l1d_writes_are_the_stores_it_took_not_its_writebacks():
    # an L1 write-back line kept 4 stores; 1 dirty line went to the L2 as a write, not a store
    ev = _act(per_sm=[_sm(l1d_write_hits=4, l1d_writebacks=1), _sm()]).events
    assert ev["l1d"]["write"] == 6 - 1 + 4
