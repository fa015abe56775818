"""The results database as users meet it: a row corrupted by hand is skipped with a
warning naming the file, run key, row id and column (the other rows stay usable),
and a malformed `--where` is an error naming it instead of 0 rows."""

from __future__ import annotations

import copy
import csv
import io
import sqlite3

import pytest
from badinput_helpers import assert_user_error, cli

from tlpsim.sweep.job import RunParams, run_job
from tlpsim.sweep.store import ResultsDB, ResultsDBWarning


@pytest.fixture(scope="module")
def one_run() -> dict:
    """One real (tiny, timing-mode) run's worker result."""
    res = run_job(RunParams("vecadd", "tiny").to_dict())
    assert res["status"] == "done", res.get("error")
    return res


@pytest.fixture
def db(tmp_path, one_run):
    """A results DB of three runs (two schedulers and a seed) with lrr as baseline."""
    path = tmp_path / "r.db"
    with ResultsDB(path) as store:
        for sched, seed in (("lrr", 1), ("gto", 1), ("gto", 2)):
            p = RunParams("vecadd", "tiny", overrides={"sm.warp_scheduler": sched}, seed=seed)
            res = copy.deepcopy(one_run)
            res["params"], res["key"] = p.to_dict(), p.key()
            store.put("s", res)
        store.set_meta("baseline", {"sm.warp_scheduler": "lrr"})
    return path


def _corrupt(path, column: str, seed: int = 2) -> tuple[str, int]:
    with sqlite3.connect(path) as conn:
        key, rowid = conn.execute("SELECT key, rowid FROM runs WHERE seed=?", (seed,)).fetchone()
        conn.execute(f"UPDATE runs SET {column}='{{\"stats\": [1, 2' WHERE rowid=?", (rowid,))
    return key, rowid


@pytest.mark.parametrize("column", ["stats", "overrides"])
def test_results_skips_a_corrupt_row_naming_it(db, column):
    key, rowid = _corrupt(db, column)
    res = cli("results", db, "--csv", "--metrics")
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    warning = f"warning: {db}: run {key} (row {rowid}): column '{column}' is not valid JSON"
    assert res.output.count(warning) == 1 and f"DELETE FROM runs WHERE rowid={rowid}" in res.output, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(rows) == 2 and key not in {r["key"] for r in rows}


def test_plot_skips_a_corrupt_row(db, tmp_path):
    key, rowid = _corrupt(db, "stats")
    res = cli("plot", db, "-o", tmp_path / "f.png")
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert f"run {key} (row {rowid}): column 'stats' is not valid JSON" in res.output
    assert (tmp_path / "f.png").stat().st_size > 0


def test_records_leave_out_a_corrupt_row_so_it_counts_as_not_run(db):
    # experiments read runs through records(): a skipped run is simulated again
    key, rowid = _corrupt(db, "stats")
    with ResultsDB(db, create=False) as store:
        keys = [r["key"] for r in store.rows()] + [key]
        with pytest.warns(ResultsDBWarning, match=rf"run {key} \(row {rowid}\): column 'stats'.*it counts as not "
                                                  "simulated"):
            got = list(store.records(keys))
    assert len(got) == 2 and key not in {g[0] for g in got} and all(g[3]["stats"] for g in got)


def test_a_corrupt_meta_value_is_an_error_naming_it(db):
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value='{oops' WHERE key='baseline'")
    assert_user_error(cli("plot", db, "-o", db.with_suffix(".png")),
                      f"{db}: meta value 'baseline' is not valid JSON", "the runs are intact",
                      "DELETE FROM meta WHERE key='baseline'")


@pytest.mark.parametrize("cond, needle", [
    ("ipc>>3", "--where 'ipc>>3': '>3' after '>' is not a value"),
    ("ipc==3", "--where 'ipc==3': '=3' after '=' is not a value (one operator between column and value; "
               "'=' tests equality, not '==')"),
    ("ipc=<3", "'<3' after '=' is not a value"),
    ("ipc>", "--where 'ipc>': no value after '>'; expected COLUMN OP VALUE with OP one of =, !=, <, <=, >, >="),
    ("ipc 3", "--where 'ipc 3': expected COLUMN OP VALUE"),
    (">3", "--where '>3': expected COLUMN OP VALUE"),
    ("ipc>fast", "--where 'ipc>fast': column ipc holds numbers; 'fast' is not a number"),
    ("seed=one", "--where 'seed=one': column seed holds numbers; 'one' is not a number"),
    ("nosuch=1", "--where: no column 'nosuch' (columns: avg_resident_ctas, "),  # metrics are columns too
])
def test_malformed_where_is_an_error_naming_it(db, cond, needle):
    assert_user_error(cli("results", db, "--where", cond), needle)


def test_malformed_where_in_plot(db, tmp_path):
    assert_user_error(cli("plot", db, "--where", "ipc>>3", "-o", tmp_path / "f.png"), "'>3' after '>' is not a value")


def test_well_formed_where_still_filters(db):
    res = cli("results", db, "--csv", "--where", "sm.warp_scheduler='gto'", "--where", "seed>=2", "--where", "ipc>0")
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [(r["sm.warp_scheduler"], r["seed"]) for r in rows] == [("gto", "2")]


def test_plot_normalised_to_a_baseline_no_run_has(db, tmp_path):
    # was matplotlib's "number sections must be larger than 0" as an internal error
    assert_user_error(cli("plot", db, "--normalize", "bogus=1", "-o", tmp_path / "f.png"),
                      "--normalize: no run matches baseline bogus=1 (the runs set preset=gtx480; size=tiny; "
                      "sm.warp_scheduler=gto|lrr)", "or --normalize none")
    assert_user_error(cli("plot", db, "--normalize", "sm.warp_scheduler=nope", "-o", tmp_path / "f.png"),
                      "no run matches baseline sm.warp_scheduler=nope")
    assert not (tmp_path / "f.png").exists()
    res = cli("plot", db, "--normalize", "sm.warp_scheduler=gto", "-o", tmp_path / "f.png")
    assert res.exit_code == 0 and (tmp_path / "f.png").stat().st_size > 0, res.output
