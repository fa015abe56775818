"""The results database (SQLite): one row per run with its parameters, status,
error, timing and stats record. Only the sweep's driver process writes; each
finished run is one transaction (WAL journal), so killing the sweep at any point
— Ctrl-C or kill -9 — loses no finished run and leaves no half-written row.

A run's key includes the fingerprint of its plug-in code, so after a plug-in is
edited the same parameters are simulated again under a new key. The database
keeps the older row but remembers, per parameter point, the key the latest sweep
asked for (meta "current"); readers see only those rows unless they ask for the
stale ones too.

A row that cannot be read (a column edited by hand into invalid JSON) is skipped
with a `ResultsDBWarning` naming the file, run key, row id and column: the other
rows stay usable, and an experiment re-simulates the skipped run. A corrupt meta
value is an error naming its key (meta is the sweep's bookkeeping, not a run)."""

from __future__ import annotations

import json
import sqlite3
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tlpsim.errors import TlpsimError
from tlpsim.sweep.job import RunParams, canonical
from tlpsim.report.metrics import run_metrics

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    sweep TEXT NOT NULL,
    workload TEXT NOT NULL,
    size TEXT NOT NULL,
    preset TEXT NOT NULL,
    seed INTEGER NOT NULL,
    mode TEXT NOT NULL,
    overrides TEXT NOT NULL,       -- canonical JSON object of dotted-key overrides
    status TEXT NOT NULL,          -- done | failed
    error TEXT,
    verified INTEGER,
    cycles INTEGER,
    thread_insts INTEGER,
    warp_insts INTEGER,
    ipc REAL,
    wall_seconds REAL,             -- the worker's time for the whole run
    started REAL,
    finished REAL,
    host TEXT,
    worker TEXT,
    run_dir TEXT,
    stats TEXT                     -- the run's stats record (JSON), NULL if it failed before one existed
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
"""

COLUMNS = ("key", "sweep", "workload", "size", "preset", "seed", "mode", "overrides", "status", "error", "verified",
           "cycles", "thread_insts", "warp_insts", "ipc", "wall_seconds", "started", "finished", "host", "worker",
           "run_dir", "stats")


class ResultsDBWarning(UserWarning):
    """A results-database row that cannot be read; it is skipped."""


def params_key(row: dict) -> str:
    """`RunParams.params_key` of a database row (its parameter point, whatever the code)."""
    return RunParams(row["workload"], row["size"], row["preset"], row["overrides"], row["seed"],
                     row.get("mode", "timing")).params_key()


class ResultsDB:
    """A results database file. With `create`, a missing or empty file is made a
    results database; without it the file is opened read-only. Either way a SQLite
    file that is not a tlpsim results database (another program's) is refused before
    anything is written to it."""

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = Path(path)
        self._warned: set[tuple[int, str]] = set()
        # called with each run's row once it is stored (e.g. archive.RunFolder.write: --export)
        self.on_put: Callable[[dict], Any] | None = None
        if not create and not self.path.is_file():
            raise TlpsimError(f"no such results database: {self.path}")
        if self.path.is_dir():
            raise TlpsimError(f"results database {self.path} is a directory; give a file name (--db)")
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
            else:  # a reading command never writes, not even the journal mode
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                self.conn = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if tables or not create:
                self._check_ours(tables)
            if create:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=FULL")  # a committed run survives power loss too
                if not tables:
                    self.conn.executescript(_SCHEMA)
                    self.set_meta("schema_version", SCHEMA_VERSION)
        except TlpsimError:
            self.conn.close()
            raise
        except (sqlite3.OperationalError, OSError) as exc:  # before any run starts
            raise TlpsimError(f"cannot open or create the results database {self.path}: {exc} "
                              "(choose another with --db)") from None
        except sqlite3.DatabaseError as exc:
            raise TlpsimError(f"not a tlpsim results database: {self.path} ({exc})") from None

    def _check_ours(self, tables: set[str]) -> None:
        """Refuse a SQLite file that tlpsim did not make (or of another schema version)."""
        if not tables:
            raise TlpsimError(f"not a tlpsim results database: {self.path} (an empty SQLite file)")
        missing = sorted({"meta", "runs"} - tables)
        row = None if missing else self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            what = f"no table {missing[0]}" if missing else "no schema_version in its meta table"
            raise TlpsimError(f"not a tlpsim results database: {self.path} (a SQLite file with tables "
                              f"{', '.join(sorted(tables))}; {what}); it was left unchanged")
        if self.get_meta("schema_version") != SCHEMA_VERSION:
            raise TlpsimError(f"{self.path}: results database schema {row[0]}, this tlpsim reads {SCHEMA_VERSION}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ meta

    def set_meta(self, key: str, value: Any) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        if row is None:
            return default
        try:
            return json.loads(row[0])
        except (TypeError, ValueError) as exc:
            raise TlpsimError(f"{self.path}: meta value '{key}' is not valid JSON ({exc}); the runs are intact: "
                              f"remove it with sqlite3 {self.path} \"DELETE FROM meta WHERE key='{key}'\"") from None

    def _unreadable(self, key: str, rowid: int, column: str, exc: Exception, remedy: str) -> None:
        if (rowid, column) in self._warned:  # rows() runs twice for `tlpsim results`: one warning
            return
        self._warned.add((rowid, column))
        warnings.warn(f"{self.path}: run {key} (row {rowid}): column '{column}' is not valid JSON ({exc}); the run "
                      f"is skipped; {remedy}", ResultsDBWarning, stacklevel=3)

    def record_sweep(self, spec) -> None:
        """Remember the spec and its baseline (for `tlpsim plot --normalize baseline`)."""
        sweeps = self.get_meta("sweeps", {})
        sweeps[spec.name] = {"source": spec.source, "spec": spec.text, "baseline": spec.baseline,
                             "runs": len(spec.runs)}
        self.set_meta("sweeps", sweeps)
        self.set_meta("baseline", spec.baseline)
        # the spec's order of runs, so figures list configurations as the spec does
        order = self.get_meta("order", [])
        seen = set(order)
        self.set_meta("order", order + [r.key() for r in spec.runs if r.key() not in seen])
        # which run of each parameter point is current (the plug-in code may have changed)
        current = self.get_meta("current", {})
        current.update({r.params_key(): r.key() for r in spec.runs})
        self.set_meta("current", current)

    # ------------------------------------------------------------ runs

    def finished_keys(self, include_failed: bool = True) -> set[str]:
        q = "SELECT key FROM runs" + ("" if include_failed else " WHERE status='done'")
        return {r[0] for r in self.conn.execute(q)}

    def put(self, sweep: str, result: dict) -> None:
        """Store one worker result (see `job.run_job`) in its own transaction."""
        p = RunParams.from_dict(result["params"])
        rec = result.get("record")
        m = run_metrics(rec) if rec and rec.get("stats") else {}
        row = {
            "key": result["key"], "sweep": sweep, "workload": p.workload, "size": p.size, "preset": p.preset,
            "seed": p.seed, "mode": p.mode, "overrides": canonical(p.overrides), "status": result["status"],
            "error": result.get("error"), "verified": None if rec is None else int(bool(rec.get("verified"))),
            "cycles": m.get("cycles"), "thread_insts": m.get("thread_insts"), "warp_insts": m.get("warp_insts"),
            "ipc": m.get("ipc"), "wall_seconds": result["finished"] - result["started"], "started": result["started"],
            "finished": result["finished"], "host": result.get("host"), "worker": result.get("worker"),
            "run_dir": result.get("run_dir"), "stats": None if rec is None else json.dumps(rec, default=float),
        }
        with self.conn:  # one transaction: the row is there whole or not at all
            self.conn.execute(f"INSERT OR REPLACE INTO runs({','.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})",
                              [row[c] for c in COLUMNS])
        if self.on_put is not None:
            self.on_put(row)

    def rows(self, with_stats: bool = False, include_stale: bool = False) -> list[dict]:
        """One dict per run. Runs superseded by a later sweep of the same parameters
        with other plug-in code are left out, or with `include_stale` marked
        `stale: True`."""
        cols = COLUMNS if with_stats else tuple(c for c in COLUMNS if c != "stats")
        cur = self.conn.execute(f"SELECT rowid, {','.join(cols)} FROM runs "
                                "ORDER BY workload, size, seed, preset, overrides")
        current = self.get_meta("current", {})
        out = []
        for rowid, *values in cur:
            d = dict(zip(cols, values))
            column = "overrides"
            try:
                d["overrides"] = json.loads(d["overrides"])
                if not isinstance(d["overrides"], dict):
                    raise ValueError(f"a JSON object was expected, got {type(d['overrides']).__name__}")
                want = current.get(params_key(d))
                if want is not None and want != d["key"]:
                    if not include_stale:
                        continue
                    d["stale"] = True
                column = "stats"
                if with_stats and d.get("stats"):
                    d["stats"] = json.loads(d["stats"])
            except (TypeError, ValueError) as exc:
                # a sweep counts the row as done, so only removing it gets the run simulated again
                self._unreadable(d["key"], rowid, column, exc, f"to simulate it again, delete the row (sqlite3 "
                                 f"{self.path} \"DELETE FROM runs WHERE rowid={rowid}\") and run the sweep again")
                continue
            out.append(d)
        return out

    def stale_count(self) -> int:
        """Runs superseded by a later sweep of their parameters with other plug-in code."""
        return sum(1 for r in self.rows(include_stale=True) if r.get("stale"))

    def records(self, keys: list[str]):
        """(key, status, error, record or None) of the stored runs among `keys`, one
        at a time (records are parsed lazily: a large DB is never loaded whole)."""
        for k in range(0, len(keys), 500):
            chunk = keys[k:k + 500]
            q = f"SELECT rowid, key, status, error, stats FROM runs WHERE key IN ({','.join('?' * len(chunk))})"
            for rowid, key, status, error, stats in self.conn.execute(q, chunk).fetchall():
                try:
                    record = json.loads(stats) if stats else None
                except ValueError as exc:  # left out: the caller sees the run as not yet simulated
                    self._unreadable(key, rowid, "stats", exc, "it counts as not simulated (an experiment "
                                     "simulates it again and replaces the row)")
                    continue
                yield key, status, error, record

    def count(self, status: str | None = None) -> int:
        if status is None:
            return self.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM runs WHERE status=?", (status,)).fetchone()[0]
