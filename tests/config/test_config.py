"""The typed config tree: field metadata, validation, overrides, serialisation, hashing."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from tlpsim.config import (
    POLICY_KEYS, GPUConfig, PolicyChoice, SMConfig, all_keys, list_presets, load_config,
)
from tlpsim.config.overrides import _kind
from tlpsim.config.types import unit_of
from tlpsim.errors import ConfigError


def _models(model: type[BaseModel], seen=None):
    seen = set() if seen is None else seen
    if model in seen:
        return
    seen.add(model)
    yield model
    for info in model.model_fields.values():
        kind, inner = _kind(info.annotation)
        if kind == "section":
            yield from _models(inner, seen)


# --------------------------------------------------------------------------- metadata


def test_every_field_has_a_description():
    missing = [f"{m.__name__}.{n}" for m in _models(GPUConfig) for n, f in m.model_fields.items()
               if not (f.description and f.description.strip())]
    assert not missing, missing


@pytest.mark.parametrize("suffix,unit", [("_mhz", "MHz"), ("_kb", "KiB"), ("_bytes", "bytes"),
                                         ("_gbs", "GB/s"), ("latency", "cycles"), ("_cycles", "cycles")])
def test_units_by_name(suffix, unit):
    for m in _models(GPUConfig):
        for n, f in m.model_fields.items():
            kind, _ = _kind(f.annotation)
            if n.endswith(suffix) and kind == "value":
                u = unit_of(f)
                assert u is not None and unit in u, f"{m.__name__}.{n} has unit {u!r}, expected {unit!r}"


def test_dram_timings_have_units():
    from tlpsim.config import DRAMConfig
    for n, f in DRAMConfig.model_fields.items():
        if n.startswith("t"):
            assert unit_of(f) == "DRAM cycles", n


def test_models_are_frozen_and_reject_unknown_keys():
    cfg = GPUConfig()
    with pytest.raises(Exception):
        cfg.sm.max_ctas = 4  # type: ignore[misc]
    with pytest.raises(Exception):
        SMConfig(max_ctaz=3)  # type: ignore[call-arg]


def test_policy_keys_match_the_tree():
    keys = set(all_keys(GPUConfig))
    for point, key in POLICY_KEYS.items():
        assert key in keys
        section, name = key.split(".")
        assert _kind(getattr(GPUConfig.model_fields[section].annotation, "model_fields")[name].annotation)[0] \
            == "policy", point


def test_registry_and_config_agree_on_keys():
    from tlpsim.policies.registry import EXTENSION_POINTS
    assert EXTENSION_POINTS == POLICY_KEYS


def test_default_config_is_fermi():
    cfg = GPUConfig()
    assert cfg.sm.max_threads == 1536 and cfg.sm.registers == 32768 and cfg.l1d.size_kb == 16
    assert cfg.n_l2_slices == 12 and cfg.l2_sets_per_slice == 64


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("override,key", [
    ("sm.max_ctas=0", "sm.max_ctas"),
    ("gpu.n_sms=0", "gpu.n_sms"),
    ("l1d.assoc=-1", "l1d.assoc"),
    ("gpu.core_clock_mhz=0", "gpu.core_clock_mhz"),
    ("sm.latency.int.add=0", "sm.latency.int.add"),
    ("dram.tRCD=-2", "dram.tRCD"),
    ("sm.pipelines.sp.count=100", "sm.pipelines.sp.count"),
    ("sm.operand_collector.units.gen=-1", "sm.operand_collector.units.gen"),
    ("gpu.maxrregcount=300", "gpu.maxrregcount"),
    ("dram.scheduler=fifo", "dram.scheduler"),
    ("sm.max_ctas=three", "sm.max_ctas"),
    ("l1d.enabled=maybe", "l1d.enabled"),
])
def test_out_of_range_names_the_key(override, key):
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", [override])
    assert key in str(err.value)


@pytest.mark.parametrize("override,mentions", [
    ("sm.max_threads=1024", ["sm.max_threads", "sm.max_warps"]),
    ("sm.n_schedulers=5", ["sm.max_warps", "sm.n_schedulers"]),
    ("l1d.size_kb=17", ["l1d.size_kb", "l1d.assoc"]),
    ("l1d.sector_bytes=48", ["l1d.line_bytes", "l1d.sector_bytes"]),
    ("l2.size_kb=700", ["l2.size_kb"]),
    ("gpu.max_ctas_per_sm=9", ["gpu.max_ctas_per_sm", "sm.max_ctas"]),
    ("dram.bank_groups=3", ["dram.banks", "dram.bank_groups"]),
    ("sm.initiation.fp64.div=400", ["sm.initiation.fp64.div", "sm.latency.fp64.div"]),
    ("sm.pipelines.sfu.count=0", ["sm.pipelines.sfu.count"]),
    ("sm.operand_collector.units.sp=0", ["sm.operand_collector.units.sp"]),
    ("dram.nominal_bandwidth_gbs=300", ["dram.nominal_bandwidth_gbs", "gpu.dram_clock_mhz"]),
    ("icnt.subnets=1", ["icnt.subnets", "not modelled"]),           # values that would change nothing
    ("icnt.num_vcs=2", ["icnt.num_vcs", "not modelled"]),
    ("icnt.internal_speedup=0.5", ["icnt.internal_speedup"]),
    ("l2.sectored=false", ["l2.sector_replies", "l2.sector_write_acks", "l2.sectored"]),
])
def test_cross_field_checks_name_the_keys(override, mentions):
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", [override])
    for m in mentions:
        assert m in str(err.value), (m, str(err.value))


def test_several_errors_are_reported_together():
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", ["sm.max_ctas=0", "gpu.n_sms=0"])
    assert "sm.max_ctas" in str(err.value) and "gpu.n_sms" in str(err.value)


# --------------------------------------------------------------------------- overrides


def test_unknown_key_names_it_and_suggests():
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", ["sm.max_cta=3"])
    text = str(err.value)
    assert "sm.max_cta" in text and "did you mean" in text and "'sm.max_ctas'" in text


def test_unknown_key_in_wrong_section_suggests_the_right_one():
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", {"gpu.max_ctas": 3})
    assert "'sm.max_ctas'" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", ["l1d.sizekb=32"])
    assert "'l1d.size_kb'" in str(err.value)


def test_unknown_section_lists_sections():
    with pytest.raises(ConfigError) as err:
        load_config("gtx480", ["zzz.qqq=1"])
    assert "zzz.qqq" in str(err.value) and "sections" in str(err.value)


def test_key_below_a_value_is_an_error():
    with pytest.raises(ConfigError, match="sm.max_ctas"):
        load_config("gtx480", ["sm.max_ctas.x=1"])


def test_malformed_override_string():
    with pytest.raises(ConfigError, match="key=value"):
        load_config("gtx480", ["sm.max_ctas"])


def test_overrides_of_every_kind():
    cfg = load_config("gtx480", [
        "sm.max_ctas=3",                 # int
        "l1d.size_kb=32",                # int (cache size)
        "gpu.core_clock_mhz=1.4GHz",     # clock with a unit
        "gpu.icnt_clock_mhz=800",        # float from an int string
        "sm.shared_bytes=32KiB",         # size with a unit
        "l1d.enabled=false",             # bool
        "dram.scheduler=fcfs",           # literal choice
        "gpu.name=my gpu",               # string
        "gpu.max_ctas_per_sm=2",         # optional int
        "sm.warp_scheduler=lrr",         # policy choice by name
        "power.table.rf_bank.leakage_mw_per_bank=2.8",  # energy-table override
        "sm.latency.fp32.mad=6",         # nested table
        "icnt.internal_speedup=1.5",
    ])
    assert cfg.sm.max_ctas == 3
    assert cfg.l1d.size_kb == 32
    assert cfg.gpu.core_clock_mhz == 1400.0
    assert cfg.gpu.icnt_clock_mhz == 800.0
    assert cfg.sm.shared_bytes == 32768
    assert cfg.l1d.enabled is False
    assert cfg.dram.scheduler == "fcfs"
    assert cfg.gpu.name == "my gpu"
    assert cfg.gpu.max_ctas_per_sm == 2
    assert cfg.sm.warp_scheduler == PolicyChoice(impl="lrr")
    assert cfg.power.table == {"rf_bank": {"leakage_mw_per_bank": 2.8}}
    assert cfg.sm.latency.fp32.mad == 6
    assert cfg.icnt.internal_speedup == 1.5


def test_overrides_as_mapping_with_typed_values():
    cfg = load_config("gtx480", {"sm.max_ctas": 4, "l1d.bypass_global": True, "gpu.max_ctas_per_sm": 2})
    assert (cfg.sm.max_ctas, cfg.l1d.bypass_global, cfg.gpu.max_ctas_per_sm) == (4, True, 2)


def test_optional_field_back_to_none():
    cfg = load_config("gtx480", ["gpu.maxrregcount=none"])
    assert cfg.gpu.maxrregcount is None


def test_policy_param_override_keeps_the_impl():
    cfg = load_config("fermi_rfv", ["sm.warp_scheduler.active_warps=8"])
    assert cfg.sm.warp_scheduler.impl == "two_level"
    assert cfg.sm.warp_scheduler.params == {"active_warps": 8}


def test_policy_param_override_on_a_bare_name():
    cfg = load_config("gtx480", ["sm.warp_scheduler=two_level", "sm.warp_scheduler.active_warps=8",
                                 "sm.warp_scheduler.inner=lrr", "sm.warp_scheduler.frac=0.5"])
    assert cfg.sm.warp_scheduler == PolicyChoice(impl="two_level",
                                                 params={"active_warps": 8, "inner": "lrr", "frac": 0.5})


def test_policy_impl_override_only_changes_the_name():
    cfg = load_config("fermi_rfv", ["sm.warp_scheduler.impl=two_level_v2"])
    assert cfg.sm.warp_scheduler == PolicyChoice(impl="two_level_v2", params={"active_warps": 6})


def test_policy_name_override_drops_params():
    cfg = load_config("fermi_rfv", ["sm.warp_scheduler=gto"])
    assert cfg.sm.warp_scheduler.params == {}


def test_policy_inline_table_override():
    cfg = load_config("gtx480", ['sm.operand_storage={impl="regless", osu_registers=512}'])
    assert cfg.sm.operand_storage == PolicyChoice(impl="regless", params={"osu_registers": 512})


def test_lee_fig4_knob():
    for n in range(1, 9):
        assert load_config("tesla_m2050", {"gpu.max_ctas_per_sm": n}).gpu.max_ctas_per_sm == n


def test_with_overrides_and_get():
    base = load_config("gtx480")
    cfg = base.with_overrides(["sm.max_ctas=3"])
    assert cfg.sm.max_ctas == 3 and base.sm.max_ctas == 8
    assert cfg.get("sm.max_ctas") == 3
    assert load_config("fermi_rfv").get("sm.warp_scheduler.active_warps") == 6
    with pytest.raises(ConfigError, match="did you mean"):
        cfg.get("sm.max_cta")
    with pytest.raises(ConfigError, match="gpu.n_sms"):
        base.with_overrides({"gpu.n_sms": -1})


# --------------------------------------------------------------------------- policy choices


def test_policy_choice_string_and_table_forms():
    a = PolicyChoice.model_validate("gto")
    b = PolicyChoice.model_validate({"impl": "two_level", "active_warps": 8})
    c = PolicyChoice.model_validate({"impl": "two_level", "params": {"active_warps": 8}})
    assert a.impl == "gto" and a.params == {}
    assert b == c and b.params == {"active_warps": 8} and b.get("active_warps") == 8
    assert str(b) == "two_level(active_warps=8)"
    assert b.model_dump() == {"impl": "two_level", "active_warps": 8}
    assert hash(b) == hash(c)


def test_policy_choice_in_toml(tmp_path: Path):
    f = tmp_path / "p.toml"
    f.write_text('extends = "gtx480"\n[sm]\nwarp_scheduler = { impl = "two_level", active_warps = 8 }\n'
                 '[gpu]\ncta_scheduler = "lcs"\n')
    cfg = load_config(f)
    assert cfg.sm.warp_scheduler == PolicyChoice(impl="two_level", params={"active_warps": 8})
    assert cfg.gpu.cta_scheduler == PolicyChoice(impl="lcs")


def test_policy_choice_errors():
    with pytest.raises(ConfigError, match="sm.warp_scheduler.*impl"):
        load_config("gtx480", ['sm.warp_scheduler={active_warps=8}'])
    with pytest.raises(ConfigError, match="sm.warp_scheduler"):
        load_config("gtx480", ['sm.warp_scheduler=not a name'])


def test_policy_choices_listing():
    cfg = load_config("fermi_rfv")
    choices = cfg.policy_choices()
    assert set(choices) == set(POLICY_KEYS)
    assert choices["warp_scheduler"] == ("sm.warp_scheduler", PolicyChoice(impl="two_level",
                                                                           params={"active_warps": 6}))


# --------------------------------------------------------------------------- serialisation and hashing


@pytest.mark.parametrize("preset", list_presets())
def test_round_trip_through_toml(preset, tmp_path: Path):
    cfg = load_config(preset, ["gpu.max_ctas_per_sm=2"])
    text = cfg.to_toml()
    tomllib.loads(text)  # valid TOML
    path = tmp_path / "resolved.toml"
    path.write_text(text)
    again = load_config(path)
    assert again == cfg
    assert again.config_hash() == cfg.config_hash()
    assert GPUConfig.model_validate(cfg.to_dict()) == cfg


def test_round_trip_keeps_policy_params_and_tables():
    cfg = load_config("fermi_rfv", ['sm.operand_storage={impl="rfv", table={size=1024, banks=4}}'])
    again = GPUConfig.model_validate(tomllib.loads(cfg.to_toml()))
    assert again == cfg
    assert again.sm.operand_storage.params == {"table": {"size": 1024, "banks": 4}}
    assert again.power.table["rf_bank"]["access_energy_pj"] == 4.68


def test_config_hash_is_stable_and_sensitive():
    a, b = load_config("gtx480"), load_config("gtx480")
    assert a.config_hash() == b.config_hash() and hash(a) == hash(b)
    assert len(a.config_hash()) == 16 and int(a.config_hash(), 16) >= 0
    assert a.with_overrides(["l1d.size_kb=32"]).config_hash() != a.config_hash()
    assert a.with_overrides(["sm.warp_scheduler.active_warps=4"]).config_hash() != a.config_hash()
    assert a.with_overrides(["dram.tCL=13"]).config_hash() != a.config_hash()
    # the description is documentation, not configuration
    assert a.with_overrides({"description": "x"}).config_hash() == a.config_hash()
    # override order of independent keys does not matter
    assert a.with_overrides(["sm.max_ctas=4", "l1d.assoc=2"]).config_hash() == \
        a.with_overrides(["l1d.assoc=2", "sm.max_ctas=4"]).config_hash()


def test_config_hash_pinned():
    # a changed value here means every results directory keyed by the hash changes: do it on purpose
    assert GPUConfig().config_hash() == GPUConfig.model_validate(GPUConfig().to_dict()).config_hash()
    import hashlib
    import json
    data = load_config("gtx480").to_dict()
    data.pop("description")
    expect = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    assert load_config("gtx480").config_hash() == expect


# --------------------------------------------------------------------------- unit-bearing values


@pytest.mark.parametrize("text,nbytes", [("49152", 49152), ("48KiB", 49152), ("48KB", 49152), ("48K", 49152),
                                         ("128B", 128), ("1MiB", 1 << 20), ("0.5KiB", 512)])
def test_sizes_in_bytes(text, nbytes):
    assert load_config("gtx480", {"sm.shared_bytes": text}).sm.shared_bytes == nbytes


@pytest.mark.parametrize("key,text,kib", [("l1d.size_kb", "32", 32), ("l1d.size_kb", "32KiB", 32),
                                          ("l1d.size_kb", "32768B", 32), ("l2.size_kb", "1.5MiB", 1536)])
def test_sizes_in_kib(key, text, kib):
    assert load_config("gtx480", {key: text}).get(key) == kib


@pytest.mark.parametrize("text,mhz", [("700", 700.0), ("700MHz", 700.0), ("1.4GHz", 1400.0),
                                      ("924000000Hz", 924.0), ("1.5e3", 1500.0)])
def test_clocks(text, mhz):
    assert load_config("gtx480", {"gpu.core_clock_mhz": text}).gpu.core_clock_mhz == pytest.approx(mhz)


@pytest.mark.parametrize("key,text", [("sm.shared_bytes", "48 parsecs"), ("l1d.size_kb", "100B"),
                                      ("gpu.core_clock_mhz", "fast")])
def test_bad_unit_values_name_the_key(key, text):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config("gtx480", {key: text})


def test_single_override_string():
    assert load_config("gtx480", "sm.max_ctas=5").sm.max_ctas == 5


def test_section_inline_table_merges():
    cfg = load_config("tesla_m2050", ["l1d={size_kb=64, assoc=16}"])
    assert (cfg.l1d.size_kb, cfg.l1d.assoc, cfg.l1d.mshr_entries) == (64, 16, 64)
    assert cfg.l1d.hit_latency == load_config("tesla_m2050").l1d.hit_latency
