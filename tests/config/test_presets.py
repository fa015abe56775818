"""Built-in presets: each loads, and carries the numbers of the paper table it models."""

from __future__ import annotations

from pathlib import Path

import pytest

from tlpsim.config import PRESET_DIR, GPUConfig, PolicyChoice, list_presets, load_config, load_raw
from tlpsim.errors import ConfigError

PAPER_PRESETS = {"gtx480", "gtx980", "maxwell_gpuduet", "tesla_m2050", "fermi_rfv", "fermi_dmr"}


def test_list_presets():
    names = list_presets()
    assert PAPER_PRESETS <= set(names)
    assert names == sorted(names)


@pytest.mark.parametrize("preset", list_presets())
def test_preset_loads_and_validates(preset):
    cfg = load_config(preset)
    assert isinstance(cfg, GPUConfig)
    assert cfg.description
    assert cfg.gpu.name != "generic"
    assert cfg.problems() == []


@pytest.mark.parametrize("preset", list_presets())
def test_preset_files_cite_sources(preset):
    """The file opens with a comment naming its sources, and every table carries a
    comment (above its header or on one of its lines) saying where its values come from."""
    lines = (PRESET_DIR / f"{preset}.toml").read_text().splitlines()
    assert lines[0].startswith("#")
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.startswith("["):
            # comments directly above a header belong to that header's block
            lead = []
            while blocks[-1] and blocks[-1][-1].startswith("#"):
                lead.insert(0, blocks[-1].pop())
            blocks.append(lead)
        blocks[-1].append(line)
    for block in blocks[1:]:
        assert any("#" in ln for ln in block), f"{preset}: no source comment for {block[0] if block else '?'}"


@pytest.mark.parametrize("preset", ["gtx480", "gtx980"])
def test_base_presets_set_every_field(preset):
    """Base presets spell out every value (no silent defaults), except optional ones left unset."""
    raw = load_raw(preset)
    cfg = load_config(preset).to_dict()

    def walk(d_cfg, d_raw, path):
        for k, v in d_cfg.items():
            if v is None or v == {}:
                continue
            assert k in d_raw, f"{preset}: {path}{k} is not set in the preset"
            if isinstance(v, dict) and "impl" not in v and k != "table":
                walk(v, d_raw[k], f"{path}{k}.")

    walk(cfg, raw, "")


def test_unknown_preset_lists_the_available_ones():
    with pytest.raises(ConfigError) as err:
        load_config("gtx48")
    text = str(err.value)
    assert "gtx48" in text and "'gtx480'" in text
    for name in list_presets():
        assert name in text


def test_missing_file():
    with pytest.raises(ConfigError, match="not found"):
        load_config(Path("/nonexistent/x.toml"))


def test_extends_cycle(tmp_path: Path):
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(ConfigError, match="cycle"):
        load_config(tmp_path / "a.toml")


def test_unknown_key_in_a_file(tmp_path: Path):
    f = tmp_path / "bad.toml"
    f.write_text('extends = "gtx480"\n[l1d]\nsize_kib = 32\n')
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert "l1d.size_kib" in str(err.value) and "'l1d.size_kb'" in str(err.value)


def test_toml_syntax_error(tmp_path: Path):
    f = tmp_path / "bad.toml"
    f.write_text("[sm\n")
    with pytest.raises(ConfigError, match="TOML"):
        load_config(f)


def test_user_file_extending_a_preset(tmp_path: Path):
    f = tmp_path / "mine.toml"
    f.write_text('extends = "tesla_m2050"\n[sm]\nmax_ctas = 6\n')
    cfg = load_config(f, ["l1d.size_kb=64"])
    assert cfg.gpu.n_sms == 28 and cfg.sm.max_ctas == 6 and cfg.l1d.size_kb == 64
    assert cfg.dram.n_partitions == 8  # from tesla_m2050
    assert cfg.sm.latency.int.div == 145  # from gtx480 through two levels


# --------------------------------------------------------------------------- paper values


def test_gtx480_expars_table2_and_gpgpusim():
    c = load_config("gtx480")
    # EXPARS Table 2 (Fermi)
    assert c.gpu.n_sms == 15 and c.gpu.shader_clock_mhz == 1400.0
    assert (c.sm.max_threads, c.sm.max_ctas, c.sm.registers) == (1536, 8, 32768)
    assert c.sm.register_file_bytes == 128 * 1024
    assert c.sm.n_schedulers == 2 and c.sm.warp_scheduler.impl == "gto"
    assert c.sm.shared_bytes == 48 * 1024
    assert c.l1d.size_kb == 16 and c.l2.size_kb == 768
    assert c.dram.n_partitions == 6 and c.dram.banks == 16 and c.gpu.dram_clock_mhz == 924.0
    d = c.dram
    assert (d.tRRD, d.tRCD, d.tRP, d.tRC, d.tCL, d.tWR) == (6, 12, 12, 40, 12, 12)
    # GPGPU-Sim SM2_GTX480
    assert c.gpu.core_clock_mhz == 700.0 and c.gpu.icnt_clock_mhz == 700.0 and c.gpu.l2_clock_mhz == 700.0
    assert c.sm.max_warps == 48 and c.sm.rf_banks == 16 and c.sm.shared_banks == 32
    assert c.sm.shared_latency == 26 and c.l1d.hit_latency == 35 and c.l2.hit_latency == 120
    assert (c.l1d.n_sets, c.l1d.assoc, c.l1d.line_bytes, c.l1d.mshr_entries, c.l1d.mshr_max_merge) == (32, 4, 128, 64, 8)
    assert c.l1d.set_index == "hash" and c.l1d.write_policy == "local_wb_global_wt"
    assert c.n_l2_slices == 12 and c.l2_sets_per_slice == 64 and c.l2.mshr_entries == 256
    assert c.l1c.size_kb == 8 and c.l1i.size_kb == 2 and c.l1t.size_kb == 12
    assert c.sm.operand_collector.units.sp == 6 and c.sm.operand_collector.units.sfu == 8
    assert c.sm.operand_collector.in_ports.sp == 2
    assert (c.sm.pipelines.sp.count, c.sm.pipelines.sfu.count, c.sm.pipelines.dp.count) == (2, 1, 0)
    assert c.sm.pipelines.wb_width == 2
    lat, ini = c.sm.latency, c.sm.initiation
    assert list(lat.int.model_dump().values()) == [4, 13, 4, 5, 145, 32]
    assert list(ini.int.model_dump().values()) == [1, 2, 2, 1, 8, 4]
    assert list(lat.fp32.model_dump().values()) == [4, 13, 4, 5, 39]
    assert list(ini.fp32.model_dump().values()) == [1, 2, 1, 1, 4]
    assert list(lat.fp64.model_dump().values()) == [8, 19, 8, 8, 330]
    assert list(ini.fp64.model_dump().values()) == [8, 16, 8, 8, 130]
    assert (lat.sfu, ini.sfu) == (8, 8)
    assert (d.tCCD, d.tRAS, d.tWL, d.tCDLR, d.bank_groups, d.tCCDL, d.tRTPL) == (2, 28, 4, 5, 4, 3, 2)
    assert (d.rtw, d.wtr, d.atom_bytes) == (12, 11, 64)
    assert d.queue_size == 64 and d.return_queue_size == 116 and d.latency == 100
    assert c.icnt.flit_bytes == 40
    assert abs(c.dram_bandwidth_gbs - 177.4) < 0.1
    assert c.gpu.maxrregcount == 63


def test_gtx980_regless_table1():
    c = load_config("gtx980")
    assert c.gpu.n_sms == 16
    assert c.sm.max_warps == 64 and c.sm.max_threads == 2048 and c.sm.n_schedulers == 4
    assert c.sm.warp_scheduler == PolicyChoice(impl="gto")
    assert c.l1d.size_kb == 48 and c.l1d.mshr_entries == 32 and c.l1d.bypass_global
    assert c.l1d.requests_per_cycle == 1
    assert c.l2.size_kb == 2048 and c.dram.n_partitions == 4
    assert c.dram_bandwidth_gbs == pytest.approx(224.0)
    # gaps filled from SM6_TITANX
    assert c.sm.registers == 65536 and c.sm.max_ctas == 32 and c.sm.issue_width == 2
    assert c.sm.latency.sfu == 20 and c.sm.initiation.sfu == 4
    assert c.sm.operand_collector.specialized is False and c.sm.operand_collector.units.gen == 8
    assert (c.dram.tRCD, c.dram.tRAS, c.dram.tRC, c.dram.tCL) == (16, 37, 52, 16)
    assert c.gpu.maxrregcount is None


def test_maxwell_gpuduet_table1():
    c = load_config("maxwell_gpuduet")
    assert c.gpu.n_sms == 16 and c.sm.warp_size == 32
    assert c.n_l2_slices == 16 and c.dram.n_partitions * c.dram.chips_per_partition == 16
    assert c.gpu.core_clock_mhz == 1000.0 and c.sm.n_schedulers == 4 and c.sm.warp_scheduler.impl == "gto"
    assert (c.sm.max_ctas, c.sm.max_warps) == (32, 64)
    assert c.sm.register_file_bytes == 256 * 1024 and c.sm.shared_bytes == 98304
    assert (c.l1d.size_kb, c.l1d.n_sets, c.l1d.assoc, c.l1d.line_bytes, c.l1d.mshr_entries) == (32, 32, 8, 128, 256)
    assert c.icnt.topology == "crossbar" and c.icnt.flit_bytes == 32 and c.gpu.icnt_clock_mhz == 1200.0
    assert c.icnt_bandwidth_gbs == pytest.approx(614.4) and c.icnt.nominal_bandwidth_gbs == 614
    assert c.l2_slice_kb == 128 and c.l2.assoc == 8 and c.l2.mshr_entries == 256 and c.l2.hit_latency == 200
    assert c.gpu.dram_clock_mhz == 1200.0 and c.dram_bandwidth_gbs == pytest.approx(307.2)
    assert c.dram.nominal_bandwidth_gbs == 307 and c.dram.latency == 450


def test_tesla_m2050_lee_table1():
    c = load_config("tesla_m2050")
    assert c.gpu.n_sms == 28 and c.sm.warp_size == 32
    assert c.sm.max_threads == 1536 and c.sm.registers == 32768
    assert (c.gpu.shader_clock_mhz, c.gpu.icnt_clock_mhz, c.gpu.dram_clock_mhz) == (1400.0, 1400.0, 924.0)
    assert c.sm.shared_bytes == 48 * 1024 and c.l1c.size_kb == 8
    assert (c.l1t.size_kb, c.l1t.assoc, c.l1t.line_bytes) == (32, 16, 64)
    assert (c.l1d.size_kb, c.l1d.assoc, c.l1d.replacement, c.l1d.line_bytes) == (32, 8, "lru", 128)
    assert c.l2_slice_kb == 128 and c.n_l2_slices == 8 and c.l2.assoc == 8 and c.l2.line_bytes == 256
    assert c.icnt.topology == "crossbar" and c.icnt.flit_bytes == 32
    assert c.dram.scheduler == "frfcfs" and c.dram.n_partitions == 8 and c.dram.banks == 16
    d = c.dram
    assert (d.tCL, d.tRP, d.tRC, d.tRAS, d.tRCD, d.tRRD) == (12, 12, 40, 28, 12, 6)
    assert c.sm.max_ctas == 8 and c.gpu.max_ctas_per_sm is None
    assert c.gpu.cta_scheduler.impl == "round_robin" and c.power.technology_node == "45nm"


def test_fermi_rfv_thesis_2_8():
    c = load_config("fermi_rfv")
    assert c.gpu.n_sms == 16 and c.sm.register_file_bytes == 128 * 1024 and c.sm.rf_banks == 32
    assert c.sm.warp_scheduler == PolicyChoice(impl="two_level", params={"active_warps": 6})
    assert c.sm.n_schedulers == 2 and c.sm.issue_width == 1
    t = c.power.table
    assert c.power.technology_node == "40nm"
    assert t["rename_table"] == {"size_bytes": 1024, "banks": 4, "vdd": 0.96, "access_energy_pj": 1.14,
                                 "leakage_mw_per_bank": 0.27}
    assert t["rf_bank"]["access_energy_pj"] == 4.68 and t["rf_bank"]["leakage_mw_per_bank"] == 2.8
    assert t["rf_bank"]["size_bytes"] * c.sm.rf_banks == c.sm.register_file_bytes


def test_fermi_dmr_thesis_table_4_3():
    c = load_config("fermi_dmr")
    assert c.gpu.n_sms == 30 and c.sm.simt_width == 32 and c.sm.warp_size == 32
    assert c.sm.max_threads == 1024 and c.sm.max_warps == 32
    assert c.sm.register_file_bytes == 64 * 1024 and c.sm.rf_banks == 32 and c.sm.cuda_cores == 32
    assert c.sm.warp_scheduler.impl == "gto"


def test_expars_maxwell_column():
    c = load_config("expars_maxwell")
    assert (c.sm.max_threads, c.sm.max_ctas, c.sm.registers, c.sm.shared_bytes) == (2048, 32, 65536, 65536)


def test_h200_h100_hopper():
    h200, h100 = load_config("h200"), load_config("h100")
    for c in (h200, h100):
        s = c.sm
        assert (c.gpu.n_sms, c.gpu.core_clock_mhz, s.n_schedulers, s.sub_core_model) == (132, 1980.0, 4, True)
        assert (s.registers, s.max_threads, s.max_ctas, s.max_warps) == (65536, 2048, 32, 64)
        assert (s.register_alloc_unit, s.register_alloc_granularity, s.register_partitions) == ("warp", 256, 4)
        assert (s.shared_bytes, s.shared_alloc_granularity, s.shared_reserved_per_cta) == (233472, 128, 1024)
        assert (s.shared_cycles_per_conflict, s.shared_subcore_issue_cycles, s.shared_subcore_cycles_per_conflict) == (1, 4, 2)
    # the H200's L2 is 62,914,560 B (cudaGetDeviceProperties); the H100's 50 MB
    assert h200.l2.size_kb * 1024 == 62914560 and h100.l2.size_kb == 51200
    # 4.81 TB/s and 3.35 TB/s of HBM: channels x bytes x DDR x clock
    bw = [c.dram.n_partitions * c.dram.bus_width_bytes * c.dram.data_rate * c.gpu.dram_clock_mhz / 1e6
          for c in (h200, h100)]
    assert abs(bw[0] - 4.81) < 0.01 and abs(bw[1] - 3.35) < 0.01


def test_extends_unknown_preset_names_the_file(tmp_path: Path):
    f = tmp_path / "mine.toml"
    f.write_text('extends = "gtx490"\n')
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert "mine.toml" in str(err.value) and "'gtx480'" in str(err.value)
