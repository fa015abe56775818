"""Bad command-line arguments: every one ends in a message naming the argument and
what it takes, exit status 2, no traceback — before anything is simulated."""

from __future__ import annotations

import pytest
from badinput_helpers import assert_user_error, cli


@pytest.mark.parametrize("args, needles", [
    (("run", "nope"), ("unknown workload 'nope'; available: ", "vecadd")),
    (("run", "vecadd", "--size", "huge"), ("Invalid value for '--size': 'huge' is not one of 'tiny', 'small', "
                                           "'study', 'paper'",)),
    (("run", "vecadd", "--mode", "fast"), ("Invalid value for '--mode'",)),
    (("run", "vecadd", "--seed", "-1"), ("Invalid value for '--seed': -1 is not in the range "
                                         "0<=x<=9223372036854775807",)),
    (("run", "vecadd", "--budget-factor", "0"), ("Invalid value for '--budget-factor'",)),
    (("run", "vecadd", "--time-limit", "soon"), ("Invalid value for '--time-limit'",)),
    (("run", "vecadd", "--size", "tiny", "--set", "sm.max_ctas"), ("override 'sm.max_ctas' is not of the form "
                                                                   "key=value (e.g. sm.max_ctas=4)",)),
    (("run", "vecadd", "--size", "tiny", "--set", "=3"), ("override '=3' has an empty key",)),
    (("run", "vecadd", "--size", "tiny", "--mode", "functional", "--set", "sm.max_ctas=2"),
     ("--set sm.max_ctas applies to the timing model; add --mode timing",)),
    (("run", "vecadd", "--frobnicate"), ("No such option '--frobnicate'",)),
    (("trace", "nope"), ("unknown workload 'nope'",)),
    (("analyze", "nope"), ("unknown workload 'nope'",)),
    (("workloads", "--config", "nope"), ("unknown preset 'nope'",)),
    (("experiment", "check", "nope"), ("unknown experiment 'nope'",)),
    (("experiment", "check", "lcs_bcs", "--only", "figX"), ("--only 'figX': lcs_bcs has no figure or table of "
                                                            "that name",)),
    (("plot", "x.db", "--normalize", "oops"), ("no such results database: x.db",)),
    (("nope",), ("No such command 'nope'",)),
])
def test_bad_arguments(args, needles, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_user_error(cli(*args), *needles)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # no run written


@pytest.mark.parametrize("args, missing", [
    (("report", "{}/run"), "no such run directory: {}/run"),
    (("results", "{}/r.db"), "no such results database: {}/r.db"),
    (("plot", "{}/r.db"), "no such results database: {}/r.db"),
    (("sweep", "{}/s.toml"), "sweep spec not found: {}/s.toml"),
    (("ptx", "{}/k.ptx"), "no such file: {}/k.ptx"),
    (("compile", "{}/k.cu"), "no such file: {}/k.cu"),
    (("analyze", "{}/k.cu"), "no such file: {}/k.cu"),
    (("run", "vecadd", "--config", "{}/c.toml"), "config file not found: {}/c.toml"),
    (("experiment", "check", "lcs_bcs", "--db", "{}/r.db"), "no results database at {}/r.db"),
])
def test_nonexistent_files_are_named(tmp_path, args, missing):
    assert_user_error(cli(*(a.format(tmp_path) for a in args)), missing.format(tmp_path))


def test_results_db_that_is_not_a_database(tmp_path):
    f = tmp_path / "r.db"
    f.write_bytes(b"not sqlite at all\n" * 100)
    assert_user_error(cli("results", f), f"not a tlpsim results database: {f}")
    assert_user_error(cli("results", tmp_path), f"Invalid value for 'DB': File '{tmp_path}' is a directory")
