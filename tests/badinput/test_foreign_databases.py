"""Another program's SQLite file given as a results database: every command refuses
it naming the file, and leaves it byte for byte as it was (no tlpsim table, no
journal-mode change). A reading command opens the database read-only."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest
from badinput_helpers import assert_user_error, cli

from tlpsim.sweep.store import ResultsDB


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def foreign(tmp_path):
    """Another program's database (a rollback-journal file with its own tables)."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO customers(name) VALUES ('Ada')")
    conn.close()
    return path


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('workloads = ["vecadd"]\nsizes = ["tiny"]\npresets = ["gtx480"]\n')
    return path


def _tables(path) -> set[str]:
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


@pytest.mark.parametrize("command", [("results",), ("results", "--json"), ("plot",)])
def test_reading_commands_refuse_a_foreign_database_unchanged(foreign, tmp_path, command):
    before = _digest(foreign)
    extra = ("-o", tmp_path / "f.png") if command[0] == "plot" else ()
    assert_user_error(cli(*command, foreign, *extra), f"not a tlpsim results database: {foreign}", "customers")
    assert _digest(foreign) == before and _tables(foreign) == {"customers"}
    assert not (tmp_path / "f.png").exists()


@pytest.mark.parametrize("dry_run", [False, True])
def test_sweep_refuses_a_foreign_database_unchanged(foreign, spec, dry_run):
    before = _digest(foreign)
    args = ("sweep", spec, "--db", foreign, "--workers", "1") + (("--dry-run",) if dry_run else ())
    assert_user_error(cli(*args), f"not a tlpsim results database: {foreign}")
    assert _digest(foreign) == before and _tables(foreign) == {"customers"}


def test_a_python_open_for_writing_refuses_it_too(foreign):
    before = _digest(foreign)
    with pytest.raises(Exception, match="not a tlpsim results database"):
        ResultsDB(foreign)
    assert _digest(foreign) == before


def test_reading_a_results_database_writes_nothing(tmp_path):
    path = tmp_path / "r.db"
    ResultsDB(path).close()
    before = _digest(path)
    res = cli("results", path)
    assert res.exit_code == 0, res.output
    assert _digest(path) == before


def test_an_empty_file_becomes_a_database_only_when_writing(tmp_path):
    empty = tmp_path / "e.db"
    empty.write_bytes(b"")
    assert_user_error(cli("results", empty), f"not a tlpsim results database: {empty}", "empty")
    assert empty.read_bytes() == b""
    with ResultsDB(empty) as db:  # sweep --db on a new (empty) file makes it a results database
        assert db.count() == 0
    assert _tables(empty) == {"meta", "runs"}
