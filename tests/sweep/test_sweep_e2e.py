"""End to end: a sweep on 2 local workers interrupted by real signals (Ctrl-C to
its process group, then kill -9 of its driver), resumed, and checked to hold
every run exactly once; a sweep run equals `tlpsim run`; failures are recorded
per run; `results` and `plot` read the database."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from sweep_helpers import SPEC, cli, cli_popen, deterministic

from tlpsim.sweep.job import RunParams
from tlpsim.sweep.spec import parse_spec
from tlpsim.sweep.store import ResultsDB


def _rows(db: Path) -> dict[str, tuple]:
    if not db.exists():
        return {}
    with sqlite3.connect(db) as c:
        try:
            return {r[0]: r[1:] for r in c.execute("SELECT key, started, worker, status FROM runs")}
        except sqlite3.OperationalError:  # the driver has not created the table yet
            return {}


def _interrupt_after(d: Path, db: Path, n_rows: int, sig: int, group: bool, total: int) -> tuple[dict, str]:
    """Start the sweep, wait until the DB holds `n_rows` runs, then send `sig`."""
    proc = cli_popen("sweep", "spec.toml", "--workers", "2", "--db", db.name, cwd=d)
    deadline = time.time() + 240
    while len(_rows(db)) < n_rows:
        assert proc.poll() is None, f"sweep ended before it was interrupted: {proc.communicate()}"
        assert time.time() < deadline, "sweep made no progress"
        time.sleep(0.01)
    if group:
        os.killpg(proc.pid, sig)  # Ctrl-C reaches the whole foreground process group
    else:
        os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    rows = _rows(db)
    assert n_rows <= len(rows) < total, f"the sweep was not interrupted part-way ({len(rows)} of {total})"
    return rows, proc.returncode, out + err


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def test_interrupted_sweep_resumes_with_every_run_exactly_once(tmp_path):
    # workloads of ~0.5 s a run: the signals land part-way even on a loaded machine
    spec = SPEC.replace('["vecadd", "reduction"]', '["bfs", "pathfinder"]')
    (tmp_path / "spec.toml").write_text(spec)
    db = tmp_path / "r.db"
    expected = {r.key() for r in parse_spec(spec, "spec.toml").runs}
    total = len(expected)
    assert total == 16

    # Ctrl-C: the driver stops its workers and exits 130
    rows1, code, out = _interrupt_after(tmp_path, db, 2, signal.SIGINT, True, total)
    assert code == 130, out
    assert "interrupted" in out

    # kill -9 of the driver alone: its workers notice and exit; nothing committed is lost
    rows2, code, _ = _interrupt_after(tmp_path, db, len(rows1) + 2, signal.SIGKILL, False, total)
    assert code == -signal.SIGKILL
    assert all(rows2[k] == v for k, v in rows1.items()), "a run finished before Ctrl-C was rewritten"
    workers = {int(v[1]) for k, v in rows2.items() if k not in rows1}
    deadline = time.time() + 30  # workers poll for their driver; a loaded machine slows them
    while not all(_gone(p) for p in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert all(_gone(p) for p in workers), "worker processes outlived their killed driver"

    done = cli("sweep", "spec.toml", "--workers", "2", "--db", db.name, cwd=tmp_path)
    assert f"{total} runs, {len(rows2)} already in r.db, {total - len(rows2)} to run" in done.stdout
    final = _rows(db)
    assert set(final) == expected
    assert all(v[2] == "done" for v in final.values())
    assert all(final[k] == v for k, v in rows2.items()), "a finished run was run again"
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM runs").fetchone() == (total, total)
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    again = cli("sweep", "spec.toml", "--workers", "2", "--db", db.name, cwd=tmp_path)
    assert f"0 ran (0 failed), {total} skipped" in again.stdout


def test_sweep_run_equals_tlpsim_run(local_sweep, tmp_path):
    _, db, _ = local_sweep
    p = RunParams("reduction", "tiny", "gtx480", {"sm.warp_scheduler": "gto", "gpu.max_ctas_per_sm": 4}, 2)
    with ResultsDB(db, create=False) as store:
        row = next(r for r in store.rows(with_stats=True) if r["key"] == p.key())
    cli("run", "reduction", "--size", "tiny", "--mode", "timing", "--seed", "2", "--set", "sm.warp_scheduler=gto",
        "--set", "gpu.max_ctas_per_sm=4", "--run-dir", "one", cwd=tmp_path)
    rec = json.loads((tmp_path / "one" / "stats.json").read_text())
    assert row["status"] == "done"
    assert deterministic(rec["stats"]) == deterministic(row["stats"]["stats"])
    assert rec["config"] == row["stats"]["config"]
    assert deterministic(rec["launches"]) == deterministic(row["stats"]["launches"])
    assert row["cycles"] == sum(s["cycles"] for s in rec["stats"])


def test_failing_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    # a CTA of reduce_partial needs 1 KiB of shared memory: it never fits in 512 B
    (tmp_path / "spec.toml").write_text('workloads = ["reduction", "vecadd"]\nsizes = ["tiny"]\n'
                                        '[overrides]\n"sm.shared_bytes" = [512, 49152]\n')
    proc = cli("sweep", "spec.toml", "--workers", "1", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert "4 ran (1 failed)" in proc.stdout
    with ResultsDB(tmp_path / "spec.db", create=False) as store:
        rows = {(r["workload"], r["overrides"]["sm.shared_bytes"]): r for r in store.rows()}
    bad = rows[("reduction", 512)]
    assert bad["status"] == "failed"
    assert bad["error"].startswith("KernelError: a CTA of kernel reduce_partial never fits on an SM")
    assert bad["cycles"] is None
    assert [rows[k]["status"] for k in [("reduction", 49152), ("vecadd", 512), ("vecadd", 49152)]] == ["done"] * 3
    # failed runs are finished: skipped on a re-run unless asked for
    assert "4 runs, 4 already in spec.db, 0 to run" in cli("sweep", "spec.toml", cwd=tmp_path).stdout
    retry = cli("sweep", "spec.toml", "--retry-failed", cwd=tmp_path, check=False)
    assert "4 runs, 3 already in spec.db, 1 to run" in retry.stdout


def test_results_table_filters_and_exports(local_sweep):
    d, db, _ = local_sweep
    out = cli("results", db.name, "--csv", "--where", "workload=vecadd", "--where", "sm.warp_scheduler!=lrr",
              cwd=d).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2  # 2 seeds
    assert {(r["workload"], r["sm.warp_scheduler"]) for r in rows} == {("vecadd", "gto")}
    with ResultsDB(db, create=False) as store:
        by_key = {r["key"]: r for r in store.rows()}
    for r in rows:
        assert int(r["cycles"]) == by_key[r["key"]]["cycles"]
    cut = sorted(r["cycles"] for r in by_key.values())[len(by_key) // 2]
    js = json.loads(cli("results", db.name, "--json", "--where", f"cycles<{cut}", cwd=d).stdout)
    assert js and all(r["cycles"] < cut for r in js) and all(r["stats"]["stats"] for r in js)
    assert len(js) == sum(1 for r in by_key.values() if r["cycles"] < cut)
    bad = cli("results", db.name, "--where", "nosuch=1", cwd=d, check=False)
    assert bad.returncode == 2 and "no column 'nosuch'" in bad.stderr


def test_plot_writes_a_png(local_sweep):
    d, db, _ = local_sweep
    out = cli("plot", db.name, "--metric", "ipc", "--normalize", "baseline", "-o", "fig.png", cwd=d).stdout
    assert "3 groups x 2 bars" in out  # reduction, vecadd, GM x 2 schedulers
    png = (d / "fig.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_plot_values_are_ratios_to_each_runs_baseline_with_a_geomean_group(local_sweep):
    from tlpsim.sweep.plots import bar_data
    from tlpsim.report.metrics import geomean

    _, db, _ = local_sweep
    with ResultsDB(db, create=False) as store:
        rows = store.rows(with_stats=True)
        baseline = store.get_meta("baseline")
    assert baseline == {"sm.warp_scheduler": "lrr"}
    data = bar_data(rows, "ipc", baseline)
    assert data.groups == ["reduction", "vecadd", "GM"] and data.missing == []
    assert data.variants == ["warp_scheduler=lrr", "warp_scheduler=gto"]  # the baseline first
    ipc = {(r["workload"], r["seed"], r["overrides"]["sm.warp_scheduler"]): r["ipc"] for r in rows}
    for wl in ("reduction", "vecadd"):
        for sched in ("lrr", "gto"):
            want = geomean([ipc[(wl, s, sched)] / ipc[(wl, s, "lrr")] for s in (1, 2)])
            assert data.values[(wl, f"warp_scheduler={sched}")] == pytest.approx(want)
    for var in data.variants:
        assert data.values[("GM", var)] == pytest.approx(geomean([data.values[(w, var)] for w in ("reduction", "vecadd")]))
    assert all(data.values[(g, "warp_scheduler=lrr")] == 1.0 for g in data.groups)
