"""Bad sweep specs are refused before any run starts, naming the spec file and the
line, key or run at fault (`--dry-run` checks the spec without simulating)."""

from __future__ import annotations

import pytest
from badinput_helpers import assert_user_error, cli

HEAD = 'name = "s"\nworkloads = ["vecadd"]\nsizes = ["tiny"]\n'


@pytest.mark.parametrize("body, needle", [
    ('name = "s"\nworkloads = ["vecadd"\nsizes = ["tiny"]\n', "TOML syntax error: Unclosed array (at line 3, column 1)"),
    (HEAD + '[overrides]\n"sm.nope" = [1, 2]\n', "run 'vecadd tiny gtx480 sm.nope=1': unknown configuration key "
                                                "'sm.nope'"),
    (HEAD + '[overrides]\n"sm.max_ctas" = ["x", 3]\n', "sm.max_ctas: Input should be a valid integer"),
    (HEAD + '[overrides]\n"sm.max_ctas" = []\n', "[overrides] 'sm.max_ctas' is an empty list: an axis needs at "
                                                 "least one value"),
    (HEAD + '[axes]\n"sm.max_ctas" = [1]\n', "unknown key(s) axes (a sweep spec has: baseline, mode, name,"),
    (HEAD + '[policies]\nnope = ["x"]\n', "[policies] 'nope' is not an extension point"),
    (HEAD + '[policies]\nwarp_scheduler = ["nope"]\n', "sm.warp_scheduler: unknown warp_scheduler 'nope'"),
    (HEAD + '[baseline]\n"sm.nope" = 1\n', "unknown configuration key 'sm.nope'"),
    ('workloads = ["nope"]\n', "unknown workload 'nope'; available: "),
    ('workloads = ["vecadd"]\nsizes = ["huge"]\n', "unknown size 'huge'; choose from tiny, small, study, paper"),
    ('workloads = ["vecadd"]\npresets = ["gtx48"]\n', "unknown preset 'gtx48'"),
    ('workloads = [1]\n', "'workloads' must be a list of names (strings), got 1"),
    ('workloads = ["vecadd"]\npresets = [1]\n', "'presets' must be a list of names (strings), got 1"),
    ('workloads = ["vecadd"]\nseeds = ["a"]\n', "'seeds': a seed is a whole number >= 0, got 'a'"),
    ('workloads = ["vecadd"]\nseeds = [1.5]\n', "'seeds': a seed is a whole number >= 0, got 1.5"),
    ('workloads = ["vecadd"]\nseeds = [-1]\n', "'seeds': a seed is a whole number >= 0, got -1"),
    ('name = 3\nworkloads = ["vecadd"]\n', "'name' must be a string, got 3"),
    ('overrides = 3\nworkloads = ["vecadd"]\n', "'overrides' must be a table ([overrides] or overrides = { ... })"),
    ('policies = 3\nworkloads = ["vecadd"]\n', "'policies' must be a table"),
    ('baseline = 3\nworkloads = ["vecadd"]\n', "'baseline' must be a table"),
    ('runs = 3\n', "'runs' must be an array of tables ([[runs]] sections), got 3"),
    ('runs = [3]\n', "'runs' must be an array of tables"),
    ('[[runs]]\nworkload = 3\n', "[[runs]] #1: 'workload' must be a name (a string), got 3"),
    ('[[runs]]\nworkload = "vecadd"\nseed = "x"\n', "[[runs]] #1: a seed is a whole number >= 0, got 'x'"),
    ('[[runs]]\nworkload = "vecadd"\noverrides = 3\n', "[[runs]] #1: 'overrides' must be a table"),
    ('[[runs]]\nworkload = "vecadd"\nbogus = 1\n', "[[runs]] #1: needs 'workload' and may have"),
    (HEAD + '[baseline]\nsize = 3\n', "[baseline] 'size' must be a name (a string), got 3"),
    ('sizes = ["tiny"]\n', "the sweep has no runs (give 'workloads' or [[runs]])"),
    # a seed SQLite cannot store (was an OverflowError from the results database)
    ('workloads = ["vecadd"]\nseeds = [99999999999999999999]\n',
     "'seeds': seed 99999999999999999999 is too large; a seed is at most 2**63 - 1 = 9223372036854775807"),
    ('[[runs]]\nworkload = "vecadd"\nseed = 9223372036854775808\n', "[[runs]] #1: seed 9223372036854775808 is too"),
    # one config key set twice (the [policies] choice silently replaced the [overrides] axis)
    (HEAD + '[overrides]\n"sm.warp_scheduler" = ["lrr"]\n[policies]\nwarp_scheduler = ["gto"]\n',
     '[policies] warp_scheduler and [overrides] "sm.warp_scheduler" both set sm.warp_scheduler'),
])
def test_bad_spec_names_the_file_and_what_is_wrong(tmp_path, body, needle):
    spec = tmp_path / "spec.toml"
    spec.write_text(body)
    out = assert_user_error(cli("sweep", spec, "--dry-run"), f"{spec}: ", needle)
    assert not (tmp_path / "spec.db").exists(), out


def test_binary_or_missing_spec(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_bytes(b"\xff\xfe\x00\x01" * 4)
    assert_user_error(cli("sweep", spec), f"{spec}: not a UTF-8 text file (byte 0xff at offset 0)")
    assert_user_error(cli("sweep", tmp_path / "none.toml"), f"sweep spec not found: {tmp_path / 'none.toml'}")


def test_a_bad_spec_runs_nothing(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('workloads = ["vecadd"]\nsizes = ["tiny"]\n[overrides]\n"sm.max_ctas" = [2, "x"]\n')
    assert_user_error(cli("sweep", spec, "--workers", "1"), "run 'vecadd tiny gtx480 sm.max_ctas=x'")
    assert not (tmp_path / "spec.db").exists()
