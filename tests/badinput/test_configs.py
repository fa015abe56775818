"""Bad configurations — from `--set`, `--config FILE` or a preset name — are refused
before anything is simulated, naming the key (or file and line) and what it takes."""

from __future__ import annotations

import pytest
from badinput_helpers import assert_user_error, cli

RUN = ("run", "vecadd", "--size", "tiny")


@pytest.mark.parametrize("override, needles", [
    ("sm.max_ctaz=3", ("unknown configuration key 'sm.max_ctaz'; did you mean 'sm.max_ctas'",)),
    ("nosection.x=1", ("unknown configuration key 'nosection.x'", "the sections are: description, gpu, sm,")),
    ("sm.max_ctas=abc", ("sm.max_ctas: Input should be a valid integer", "(got 'abc')")),
    ("sm.max_ctas=-1", ("sm.max_ctas: Input should be greater than or equal to 1", "(got '-1')")),
    ("icnt.flit_bytes=1", ("icnt.flit_bytes: Input should be greater than or equal to 4",)),
    ("sm.warp_scheduler=nope", ("invalid configuration (preset 'gtx480', sm.warp_scheduler=nope): "
                                "sm.warp_scheduler: unknown warp_scheduler 'nope'",
                                "(registered warp_scheduler choices: ccws, gto, lrr,")),
    ("sm.warp_scheduler.nope=3", ("sm.warp_scheduler: warp_scheduler 'gto' takes no parameters (got nope)",)),
    ("sm.max_ctas", ("override 'sm.max_ctas' is not of the form key=value",)),
    ("=3", ("override '=3' has an empty key",)),
])
def test_bad_set_names_the_key(override, needles):
    assert_user_error(cli(*RUN, "--set", override), *needles)


def test_unknown_preset_lists_the_presets():
    assert_user_error(cli(*RUN, "--config", "gtx48"), "unknown preset 'gtx48'; did you mean 'gtx480'",
                      "(available: ")
    assert_user_error(cli("workloads", "--config", "nope"), "unknown preset 'nope'")


@pytest.mark.parametrize("body, needles", [
    ('[sm]\nmax_ctas = \n', ("TOML syntax error: Invalid value (at line 3, column 12)")),
    ('[smx]\nmax_ctas = 3\n', ("unknown configuration key 'smx'",)),
    ('[sm]\nmax_ctas = "x"\n', ("sm.max_ctas: Input should be a valid integer",)),
    ('[sm]\nmax_ctas = 0\n', ("sm.max_ctas: Input should be greater than or equal to 1",)),
    ('[sm]\nwarp_scheduler = "nope"\n', ("sm.warp_scheduler: unknown warp_scheduler 'nope'",)),
    ('[icnt]\ninput_buffer_flits = 1\n', ("icnt.input_buffer_flits (1) must be at least 4 flits",)),
])
def test_bad_config_file_names_the_key(tmp_path, body, needles):
    f = tmp_path / "my.toml"
    f.write_text('extends = "gtx480"\n' + body)
    out = assert_user_error(cli(*RUN, "--config", f, "--run-dir", tmp_path / "run"), *needles)
    assert "my.toml" in out and not (tmp_path / "run").exists()


def test_missing_or_binary_config_file(tmp_path):
    assert_user_error(cli(*RUN, "--config", tmp_path / "none.toml"), f"config file not found: {tmp_path / 'none.toml'}")
    f = tmp_path / "binary.toml"
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe" * 10)
    assert_user_error(cli(*RUN, "--config", f), f"{f}: not a UTF-8 text file (byte 0xff at offset 8)")


@pytest.mark.parametrize("override, key, need", [
    ("icnt.input_buffer_flits=1", "icnt.input_buffer_flits (1)", 4),
    ("icnt.output_buffer_flits=3", "icnt.output_buffer_flits (3)", 4),
    ("icnt.flit_bytes=4", "icnt.output_buffer_flits (32)", 34),
])
def test_interconnect_buffer_smaller_than_a_packet_names_key_and_minimum(override, key, need):
    # was: "internal error: ValueError: queue sm0.out: 1 flits cannot hold a largest packet"
    assert_user_error(cli(*RUN, "--set", override),
                      f"{key} must be at least {need} flits: a buffer holds whole packets", "icnt.flit_bytes = ")


def test_interconnect_buffer_of_exactly_one_packet_runs(tmp_path):
    res = cli(*RUN, "--set", "icnt.input_buffer_flits=4", "--set", "icnt.output_buffer_flits=4",
              "--run-dir", tmp_path / "run")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("flit_bytes", [4, 7, 32, 40, 68, 136, 137, 1024])
def test_config_minimum_is_the_crossbars(flit_bytes):
    from tlpsim.config.memsys import MAX_PACKET_BYTES, InterconnectConfig
    from tlpsim.timing.flits import FlitQueue

    need = FlitQueue("q", 10_000, flit_bytes).max_packet_flits
    assert -(-MAX_PACKET_BYTES // flit_bytes) == need
    InterconnectConfig(flit_bytes=flit_bytes, input_buffer_flits=need, output_buffer_flits=need)
    if need > 1:
        with pytest.raises(ValueError):
            FlitQueue("q", need - 1, flit_bytes)
        with pytest.raises(ValueError, match=f"must be at least {need} flits"):
            InterconnectConfig(flit_bytes=flit_bytes, input_buffer_flits=need - 1)


@pytest.mark.parametrize("override, needle", [
    # each was a ValueError from the timing model's builder, after the config had loaded
    ("l1d.size_kb=1", "l1d.set_index = 'hash' does not fit l1d.size_kb: 2 sets of l1d.line_bytes (128) bytes (the "
                      "Fermi hash set index needs 32 or 64 sets"),
    ("l1d.assoc=1", "l1d.set_index = 'hash' does not fit l1d.size_kb: 128 sets"),
    ("l2.hit_latency=0", "l2.hit_latency: Input should be greater than or equal to 1"),
    ("dram.address_mapping=0", "dram.address_mapping: address mapping '0': names 1 bits, expected 64 (GPGPU-Sim's "
                               "gpgpu_mem_addr_mapping syntax"),
    ("dram.address_mapping=dramid@x;0", "dram.address_mapping: invalid literal for int()"),
    ("dram.banks=4", "dram.banks (4) disagrees with dram.address_mapping, whose B bits decode 16 banks"),
    ("l2.sector_bytes=4", "l2.sector_bytes (4) must be a multiple of 32, the memory system's sector, when "
                          "l2.sectored is true"),
    ("l1d.line_bytes=16", "l1d.line_bytes (16) must be at least 32"),
])
def test_config_the_timing_model_cannot_build_is_refused_at_load(override, needle):
    assert_user_error(cli(*RUN, "--set", override), f"invalid configuration (preset 'gtx480', overrides {override}): ",
                      needle)
