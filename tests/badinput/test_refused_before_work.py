"""Mistakes on the command line that used to cost a whole simulation (an internal
error after it), or pass without a word: each is refused at once, naming the option,
with exit status 2 and nothing simulated or written."""

from __future__ import annotations

import time

import pytest
from badinput_helpers import assert_user_error, cli

import tlpsim
from tlpsim.sweep.backends import LocalPool


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('workloads = ["vecadd"]\nsizes = ["tiny"]\n')
    return path


def test_an_unknown_energy_plot_format_is_refused_before_simulating(tmp_path):
    start = time.monotonic()
    out = assert_user_error(cli("run", "vecadd", "--size", "tiny", "--run-dir", tmp_path / "r", "--energy-plot",
                                tmp_path / "e.xyz"),
                            f"cannot write the energy plot {tmp_path / 'e.xyz'} (--energy-plot): '.xyz' is not a "
                            "figure format; use one of ", "png", "svg", "nothing was run")
    assert "workload vecadd" not in out and time.monotonic() - start < 10
    assert not (tmp_path / "r").exists()


def test_an_unknown_figure_format_of_plot_and_analyze(tmp_path):
    assert_user_error(cli("plot", tmp_path / "r.db", "-o", tmp_path / "f.xyz"),
                      f"cannot write the figure {tmp_path / 'f.xyz'} (-o): '.xyz' is not a figure format")
    assert_user_error(cli("analyze", "vecadd", "--plot", tmp_path / "p.xyz"), "(--plot): '.xyz' is not a figure")


def test_an_energy_plot_in_functional_mode_is_refused(tmp_path):
    assert_user_error(cli("run", "vecadd", "--size", "tiny", "--mode", "functional", "--run-dir", tmp_path / "r",
                          "--energy-plot", tmp_path / "e.png"),
                      "--energy-plot applies to the timing model", "add --mode timing")
    assert not (tmp_path / "r").exists() and not (tmp_path / "e.png").exists()


@pytest.mark.parametrize("workers", ["0", "-3"])
def test_sweep_and_experiment_workers_below_one(spec, workers):
    assert_user_error(cli("sweep", spec, "--workers", workers), f"--workers must be at least 1, got {workers}")
    assert not spec.with_suffix(".db").exists()
    assert_user_error(cli("experiment", "run", "lcs_bcs", "--workers", workers, "--db", spec.with_suffix(".db")),
                      f"--workers must be at least 1, got {workers}")
    assert not spec.with_suffix(".db").exists()


def test_a_local_pool_of_no_workers_is_an_error():
    with pytest.raises(tlpsim.TlpsimError, match="--workers must be at least 1, got 0"):
        LocalPool(0)
    assert LocalPool(None).workers >= 1 and LocalPool(3).workers == 3


def test_one_set_key_given_twice_with_two_values(tmp_path):
    assert_user_error(cli("run", "vecadd", "--size", "tiny", "--run-dir", tmp_path / "r", "--set", "sm.max_ctas=1",
                          "--set", "sm.max_ctas=8"),
                      "--set sm.max_ctas is given twice (--set sm.max_ctas=1 and --set sm.max_ctas=8); give it once")
    assert not (tmp_path / "r").exists()


def test_the_same_set_twice_is_harmless():
    from tlpsim.config.overrides import parse_overrides

    assert parse_overrides(["sm.max_ctas=2", "sm.max_ctas=2", "l1d.size_kb=32"]) == {"sm.max_ctas": "2",
                                                                                  "l1d.size_kb": "32"}


@pytest.mark.parametrize("value, needle", [
    ("abc", "TLPSIM_CHUNK_THREADS='abc' is not a whole number"),
    ("1.5", "TLPSIM_CHUNK_THREADS='1.5' is not a whole number"),
    ("0", "TLPSIM_CHUNK_THREADS='0' must be at least 1"),
])
def test_a_bad_chunk_threads_variable_names_it(tmp_path, monkeypatch, value, needle):
    monkeypatch.setenv("TLPSIM_CHUNK_THREADS", value)
    assert_user_error(cli("run", "vecadd", "--size", "tiny", "--mode", "functional", "--run-dir", tmp_path / "r"),
                      f"environment variable {needle}")
    with pytest.raises(tlpsim.TlpsimError, match=needle.replace("(", r"\(")):
        tlpsim.Device()
