"""Energy tables: every node's data file loads, documents each entry's source, and
overrides are checked against it (an unknown key is an error naming it)."""

import re
from importlib import resources

import pytest

from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.power.table import available_nodes, load_table, node_table, override_problems


def test_the_nodes_the_papers_need_exist():
    assert {"28nm", "40nm", "45nm"} <= set(available_nodes())


@pytest.mark.parametrize("node", ["28nm", "40nm", "45nm"])
def test_every_entry_carries_a_source_comment(node):
    text = (resources.files("tlpsim.power") / "tables" / f"{node}.toml").read_text()
    entries = [ln for ln in text.splitlines() if re.match(r"^\w+\s*=", ln)]
    assert entries
    assert [ln for ln in entries if "#" not in ln] == []


@pytest.mark.parametrize("node", ["28nm", "40nm", "45nm"])
def test_tables_have_the_same_structures_and_keys(node):
    ref, t = node_table("40nm"), node_table(node)
    assert {s: set(e) for s, e in t.items()} == {s: set(e) for s, e in ref.items()}


def test_thesis_table_2_2_figures_at_40nm():
    t = node_table("40nm")
    # the bank's access energy is the thesis's; its leakage GPUWattch's (test_gpuwattch_split.py);
    # the fermi_rfv preset restores the thesis's 2.8 mW (tests/config/test_presets.py)
    assert (t["rf_bank"]["access_energy_pj"], t["rf_bank"]["size_bytes"]) == (4.68, 4096)
    assert (t["rename_table"]["access_energy_pj"], t["rename_table"]["leakage_mw_per_bank"],
            t["rename_table"]["banks"]) == (1.14, 0.27, 4)
    assert t["rf_bank"]["subarrays"] == 4 and t["rf_bank"]["access_bits"] == 128


def test_28nm_dynamic_entries_are_the_40nm_ones_scaled():
    a, b = node_table("40nm"), node_table("28nm")
    for struct, entry in a.items():
        for key, v in entry.items():
            if key.endswith("_energy_pj"):
                assert b[struct][key] == pytest.approx(round(v * 0.70, 3)), (struct, key)
            else:
                assert b[struct][key] == v, (struct, key)


def test_override_replaces_only_the_named_entry():
    base = node_table("40nm")
    t = load_table("40nm", {"rf_bank": {"access_energy_pj": 9.0}, "dram": {"activate_energy_pj": 1500}})
    assert t["rf_bank"]["access_energy_pj"] == 9.0 and t["dram"]["activate_energy_pj"] == 1500.0
    t["rf_bank"]["access_energy_pj"] = base["rf_bank"]["access_energy_pj"]
    t["dram"]["activate_energy_pj"] = base["dram"]["activate_energy_pj"]
    assert t == base
    assert node_table("40nm") == base  # the cached file data was not modified


def test_unknown_structure_and_key_are_named():
    problems = override_problems("40nm", {"rf_bnk": {"x": 1}, "rf_bank": {"leakage_mw": 2.8, "banks": -1}})
    assert len(problems) == 3
    assert problems[0].startswith("power.table.rf_bnk: unknown structure (did you mean 'rf_bank'?)")
    assert problems[1].startswith("power.table.rf_bank.leakage_mw: unknown key (did you mean 'leakage_mw_per_bank'?)")
    assert problems[2] == "power.table.rf_bank.banks = -1: must be a non-negative number"
    with pytest.raises(ConfigError, match=r"power\.table\.rf_bnk"):
        load_table("40nm", {"rf_bnk": {}})


def test_config_rejects_bad_overrides_and_nodes():
    with pytest.raises(ConfigError, match=r"power\.table\.l2\.tag_pj: unknown key \(did you mean 'tag_energy_pj'\?\)"):
        load_config("gtx480", ["power.table.l2.tag_pj=3"])
    with pytest.raises(ConfigError, match=r"no energy table for this node \(available: 28nm, 40nm, 45nm"):
        load_config("gtx480", ["power.technology_node=7nm"])
    cfg = load_config("gtx480", ["power.table.l2.tag_energy_pj=3"])
    assert cfg.power.table == {"l2": {"tag_energy_pj": 3}}


def test_presets_name_existing_nodes_and_keys():
    for preset in ("gtx480", "gtx980", "tesla_m2050", "fermi_rfv", "fermi_dmr"):
        cfg = load_config(preset)
        load_table(cfg.power.technology_node, cfg.power.table)


def test_wakeup_latency_is_a_validated_sm_field():
    assert load_config("gtx480").sm.rf_subarray_wakeup_cycles == 1
    assert load_config("gtx480", ["sm.rf_subarray_wakeup_cycles=10"]).sm.rf_subarray_wakeup_cycles == 10
    with pytest.raises(ConfigError, match="rf_subarray_wakeup_cycles"):
        load_config("gtx480", ["sm.rf_subarray_wakeup_cycles=-1"])
