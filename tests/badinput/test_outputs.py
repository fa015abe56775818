"""Output paths are checked before simulating; a write that fails at the end keeps
the results in a temporary file and says where."""

from __future__ import annotations

import json
import time
import warnings

import numpy as np
from badinput_helpers import assert_user_error, cli

import tlpsim


def test_unwritable_run_dir_is_refused_before_simulating(blocker):
    t0 = time.perf_counter()
    res = cli("run", "vecadd", "--size", "tiny", "--run-dir", blocker / "run")
    out = assert_user_error(res, f"cannot write the run directory {blocker}", "--run-dir", "nothing was run")
    assert "workload vecadd" not in out and time.perf_counter() - t0 < 5


def test_unwritable_default_run_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").write_text("a file where the runs/ directory goes\n")
    assert_user_error(cli("run", "vecadd", "--size", "tiny", "--mode", "functional"),
                      "cannot write the run directory runs", "not a directory")


def test_unwritable_stats_file_and_energy_plot(blocker, tmp_path):
    assert_user_error(cli("run", "vecadd", "--size", "tiny", "--run-dir", tmp_path / "r1", "--stats-out",
                          blocker / "s.json"), "cannot write the stats file", "--stats-out")
    assert_user_error(cli("run", "vecadd", "--size", "tiny", "--run-dir", tmp_path / "r2", "--energy-plot",
                          blocker / "e.png"), f"cannot write the energy plot {blocker / 'e.png'}", "not a directory")
    assert_user_error(cli("run", "vecadd", "--size", "tiny", "--run-dir", tmp_path / "r2", "--energy-plot",
                          tmp_path), "'--energy-plot'", "is a directory")
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()


def test_a_write_failing_at_the_end_keeps_the_results(tmp_path, monkeypatch):
    import tlpsim.report.rundir as rundir

    def full_disk(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rundir, "write_run_dir", full_disk)
    res = cli("run", "vecadd", "--size", "tiny", "--mode", "functional", "--run-dir", tmp_path / "run")
    out = assert_user_error(res, "could not write the run directory", "No space left on device",
                            "the results were saved to ")
    assert "workload vecadd" in out and "verify c: OK" in out  # the run was still reported
    saved = out.split("the results were saved to ")[1].split()[0]
    rec = json.loads(open(saved).read())
    assert rec["workload"] == "vecadd" and rec["verified"] is True and rec["launches"]


def test_report_output_checked(blocker, tmp_path):
    res = cli("run", "vecadd", "--size", "tiny", "--mode", "functional", "--run-dir", tmp_path / "run")
    assert res.exit_code == 0, res.output
    assert_user_error(cli("report", tmp_path / "run", "-o", blocker / "r.html"), "cannot write the report", "-o")


def test_sweep_database_and_run_dirs_checked_before_running(blocker, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nworkloads = ["vecadd"]\nsizes = ["tiny"]\n')
    assert_user_error(cli("sweep", spec, "--db", blocker / "x.db", "--workers", "1"),
                      "cannot open or create the results database", "--db")
    assert_user_error(cli("sweep", spec, "--db", tmp_path / "x.db", "--run-dirs", blocker / "rd", "--workers", "1"),
                      "cannot write the run directories' root", "--run-dirs")


def test_sweep_worker_keeps_the_run_when_its_run_directory_fails(blocker):
    from tlpsim.sweep.job import RunParams, run_job

    res = run_job(RunParams("vecadd", "tiny", mode="functional").to_dict(), run_root=str(blocker / "rd"))
    assert res["status"] == "done" and res["record"]["verified"]
    assert "run directory not written under" in res["error"]


def test_unwritable_trace_cache_warns_and_runs_uncached(blocker, monkeypatch):
    from tlpsim.functional.replay import CacheWarning

    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(blocker / "cache"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tlpsim.Device(mode="timing") as dev:
            assert dev.trace_cache is None
            k = tlpsim.RawKernel('extern "C" __global__ void k(int* a) { a[threadIdx.x] = 1; }', "k")
            a = tlpsim.zeros(32, np.int32)
            rec = k((1,), (32,), (a,))
            assert rec.stats.cycles > 0 and (a.get() == 1).all()
    msgs = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert any(f"trace cache directory {blocker / 'cache'}" in m and "not cached" in m for m in msgs), msgs
