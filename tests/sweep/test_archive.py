"""A results database exported to a folder of per-run files and imported into
another: the runs arrive whole, a sweep over the imported database simulates
nothing again, exports add only new runs, and bad files are refused by name."""

from __future__ import annotations

import gzip
import json

from sweep_helpers import cli

from tlpsim.sweep.store import COLUMNS, ResultsDB


def _all_rows(path):
    with ResultsDB(path, create=False) as db:
        return {r[0]: r for r in db.conn.execute(f"SELECT {','.join(COLUMNS)} FROM runs")}


def test_exported_runs_import_whole_and_a_sweep_reuses_them(local_sweep, tmp_path):
    d, db, _ = local_sweep
    out = tmp_path / "archive"
    first = cli("results", str(db), "--export", str(out), cwd=d).stdout
    runs = _all_rows(db)
    assert f"{len(runs)} run(s) exported" in first and len(list(out.glob("*.json.gz"))) == len(runs)
    again = cli("results", str(db), "--export", str(out), cwd=d).stdout
    assert f"0 run(s) exported from {db}, {len(runs)} already there" in again
    new = tmp_path / "new.db"
    got = cli("results", str(new), "--import", str(out), cwd=d).stdout
    assert f"{len(runs)} run(s) imported" in got
    assert _all_rows(new) == runs                                   # every column of every run
    with ResultsDB(db, create=False) as a, ResultsDB(new, create=False) as b:
        assert b.get_meta("current") == a.get_meta("current") and b.get_meta("sweeps") == a.get_meta("sweeps")
    (tmp_path / "spec.toml").write_text((d / "spec.toml").read_text())
    sweep = cli("sweep", "spec.toml", "--workers", "1", "--db", str(new), cwd=tmp_path).stdout
    assert f"{len(runs)} runs, {len(runs)} already in" in sweep and ", 0 to run" in sweep, sweep
    assert _all_rows(new) == runs                                   # nothing simulated again
    assert "0 run(s) imported" in cli("results", str(new), "--import", str(out), cwd=d).stdout


def test_a_damaged_or_renamed_run_file_is_refused_by_name(local_sweep, tmp_path):
    d, db, _ = local_sweep
    out = tmp_path / "archive"
    cli("results", str(db), "--export", str(out), cwd=d)
    files = sorted(out.glob("*.json.gz"))
    files[0].write_bytes(b"not gzip")
    bad = cli("results", str(tmp_path / "a.db"), "--import", str(out), cwd=d, check=False)
    assert bad.returncode != 0 and files[0].name in bad.stderr and "not an exported run" in bad.stderr
    row = json.loads(gzip.decompress(files[1].read_bytes()))
    files[0].write_bytes(gzip.compress(json.dumps(row).encode()))  # run 1's record under run 0's name
    bad = cli("results", str(tmp_path / "b.db"), "--import", str(out), cwd=d, check=False)
    assert bad.returncode != 0 and "renamed?" in bad.stderr
    missing = cli("results", str(tmp_path / "c.db"), "--import", str(tmp_path / "nothing"), cwd=d, check=False)
    assert missing.returncode != 0 and "no such folder of exported runs" in missing.stderr


def test_a_sweep_with_export_keeps_each_run_as_it_is_stored(tmp_path):
    """`tlpsim sweep --export DIR` writes every run's file as the run is stored: the same
    bytes `tlpsim results DB --export` writes afterwards, for exactly the database's runs."""
    (tmp_path / "spec.toml").write_text('name = "two"\nworkloads = ["vecadd"]\nsizes = ["tiny"]\n'
                                        '[overrides]\n"sm.warp_scheduler" = ["lrr", "gto"]\n')
    cli("sweep", "spec.toml", "--workers", "1", "--db", "a.db", "--export", "live", cwd=tmp_path)
    live = sorted(p.name for p in (tmp_path / "live").glob("*.json.gz"))
    assert live == sorted(k + ".json.gz" for k in _all_rows(tmp_path / "a.db")) and len(live) == 2
    cli("results", "a.db", "--export", "after", cwd=tmp_path)
    for name in live:
        assert (tmp_path / "live" / name).read_bytes() == (tmp_path / "after" / name).read_bytes()
    meta = json.loads((tmp_path / "live" / "meta.json").read_text())
    assert meta["schema_version"] == 1 and "two" in meta["sweeps"]
