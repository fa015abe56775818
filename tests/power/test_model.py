"""The accounting itself: energy = counts x table, static = powered instance-cycles x
leakage / clock, checked exactly on hand-made activity."""

import pytest

from tlpsim.errors import ConfigError
from tlpsim.power.activity import Activity
from tlpsim.power.model import energy_of
from tlpsim.timing.stats import EnergyStats

TABLE = {
    "rf_bank": {"access_energy_pj": 4.0, "wakeup_energy_pj": 10.0, "leakage_mw_per_bank": 2.0, "banks": 1.0},
    "dram": {"read_byte_energy_pj": 20.0, "activate_energy_pj": 1000.0, "leakage_mw_per_bank": 0.0, "banks": 1.0},
    "rename_table": {"access_energy_pj": 1.0, "leakage_mw_per_bank": 0.5, "banks": 4.0},
}


def _activity():
    act = Activity(cycles=1000, core_mhz=500.0)   # 2 us
    act.add("rf_bank", "access", 800)
    act.add("rf_bank", "wakeup", 3)
    act.add("dram", "read_byte", 64)
    act.add("dram", "activate", 2)
    act.add("rename_table", "access", 50)
    act.power("rf_bank", 1000 * 32 / 4, 1000 * 32)   # a quarter of 32 banks powered
    act.power("rename_table", 1000, 1000)
    act.power("dram", 1000 * 2, 1000 * 2)
    return act


def test_dynamic_is_counts_times_table():
    e = energy_of(_activity(), TABLE, "test")
    assert e.dynamic_j["rf_bank"] == pytest.approx((800 * 4.0 + 3 * 10.0) * 1e-12)
    assert e.dynamic_j["dram"] == pytest.approx((64 * 20.0 + 2 * 1000.0) * 1e-12)
    assert e.dynamic_j["rename_table"] == pytest.approx(50 * 1.0 * 1e-12)
    assert e.total_dynamic_j == pytest.approx(sum(e.dynamic_j.values()))


def test_static_is_leakage_times_powered_time():
    e = energy_of(_activity(), TABLE, "test")
    cycle_s = 1 / 500e6
    assert e.seconds == pytest.approx(2e-6)
    assert e.static_j["rf_bank"] == pytest.approx(8000 * cycle_s * 2.0e-3)      # 8 banks for 2 us at 2 mW
    assert e.static_j["rename_table"] == pytest.approx(1000 * cycle_s * 4 * 0.5e-3)  # 4 banks of 0.5 mW
    assert e.static_j["dram"] == 0.0
    assert e.on_fraction == {"rf_bank": 0.25, "rename_table": 1.0, "dram": 1.0}


def test_totals_and_average_power():
    e = energy_of(_activity(), TABLE, "test")
    assert e.total_j == pytest.approx(e.total_dynamic_j + e.total_static_j)
    assert e.avg_power_w == pytest.approx(e.total_j / 2e-6)
    assert e.share("rf_bank") == pytest.approx((e.dynamic_j["rf_bank"] + e.static_j["rf_bank"]) / e.total_j)
    assert e.technology_node == "test"


def test_changing_one_entry_changes_only_its_term():
    base = energy_of(_activity(), TABLE, "test")
    table = {k: dict(v) for k, v in TABLE.items()}
    table["rf_bank"]["access_energy_pj"] *= 2
    table["rename_table"]["leakage_mw_per_bank"] *= 3
    e = energy_of(_activity(), table, "test")
    assert e.dynamic_j["rf_bank"] - base.dynamic_j["rf_bank"] == pytest.approx(800 * 4.0 * 1e-12)
    assert e.static_j["rename_table"] == pytest.approx(3 * base.static_j["rename_table"])
    for k in ("dram",):
        assert e.dynamic_j[k] == base.dynamic_j[k] and e.static_j[k] == base.static_j[k]
    assert e.static_j["rf_bank"] == base.static_j["rf_bank"]


def test_an_event_without_a_table_entry_is_an_error():
    act = Activity(cycles=10, core_mhz=700.0)
    act.add("rf_bank", "teleport", 1)
    with pytest.raises(ConfigError, match=r"\[rf_bank\] has no teleport_energy_pj"):
        energy_of(act, TABLE, "test")
    act = Activity(cycles=10, core_mhz=700.0)
    act.add("warp_cache", "access", 1)
    with pytest.raises(ConfigError, match=r"structure 'warp_cache', which the test energy table lacks"):
        energy_of(act, TABLE, "test")


def test_run_level_aggregate_adds_launches():
    a = energy_of(_activity(), TABLE, "test")
    act = _activity()
    act.cycles = 3000
    b = energy_of(act, TABLE, "test")
    run = EnergyStats.combine([a, b])
    assert run.seconds == pytest.approx(8e-6)
    assert run.total_j == pytest.approx(a.total_j + b.total_j)
    assert run.static_j["rf_bank"] == pytest.approx(a.static_j["rf_bank"] + b.static_j["rf_bank"])
    assert run.events["rf_bank"] == {"access": 1600, "wakeup": 6}
    assert run.avg_power_w == pytest.approx(run.total_j / 8e-6)
    assert run.on_fraction["rf_bank"] == pytest.approx(0.25)
