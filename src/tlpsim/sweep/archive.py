"""A results database as a folder of files, one gzipped JSON file per run (named by
its key) and one for the database's meta values, so finished runs can be kept in
version control or copied to another machine, and a run spanning sessions resumes
there: exporting writes only the runs the folder lacks (a file, once written, is
never rewritten), importing adds only the runs the database lacks."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from tlpsim.errors import TlpsimError
from tlpsim.sweep.store import COLUMNS, ResultsDB

META_FILE = "meta.json"
_SUFFIX = ".json.gz"


class RunFolder:
    """The folder side of an export: writes a run's file unless the folder has it.
    Also a `ResultsDB.on_put` hook, so a sweep or experiment keeps each finished run
    there as it is stored (`--export DIR`)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise TlpsimError(f"{self.folder} is not a folder: give a folder to export the runs into")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.have = {p.name[:-len(_SUFFIX)] for p in self.folder.glob("*" + _SUFFIX)}

    def write(self, row: dict) -> bool:
        """Write one run (a dict of the database's COLUMNS); False if the folder has it."""
        if row["key"] in self.have:
            return False
        _write_atomic(self.folder / (row["key"] + _SUFFIX),
                      gzip.compress(json.dumps({c: row[c] for c in COLUMNS}).encode(), 9, mtime=0))
        self.have.add(row["key"])
        return True

    def write_meta(self, db: ResultsDB) -> None:
        meta = {k: json.loads(v) for k, v in db.conn.execute("SELECT key, value FROM meta")}
        _write_atomic(self.folder / META_FILE, (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode())


def export_runs(db: ResultsDB, folder: str | Path) -> tuple[int, int]:
    """Write every run of `db` the folder does not hold yet, and the meta values.
    Returns (runs written, runs already there)."""
    out = RunFolder(folder)
    written = kept = 0
    for (key,) in db.conn.execute("SELECT key FROM runs ORDER BY finished").fetchall():
        if key in out.have:
            kept += 1
            continue
        values = db.conn.execute(f"SELECT {','.join(COLUMNS)} FROM runs WHERE key=?", (key,)).fetchone()
        out.write(dict(zip(COLUMNS, values)))
        written += 1
    out.write_meta(db)
    return written, kept


def attach_export(db: ResultsDB, folder: str | Path) -> RunFolder:
    """`--export DIR` of a sweep, experiment or validation: the runs `db` already holds
    that the folder lacks are written now, and every run the command stores is written
    as it is stored, so a session that ends mid-run keeps what finished."""
    export_runs(db, folder)
    out = RunFolder(folder)

    def keep(row: dict) -> None:
        out.write(row)
        out.write_meta(db)  # the bookkeeping the command has added since (sweeps, current keys)

    db.on_put = keep
    return out


def import_runs(folder: str | Path, db: ResultsDB) -> tuple[int, int]:
    """Add the folder's runs that `db` lacks (each in its own transaction) and merge its
    meta values (entries the database lacks are added; its own are kept). Returns
    (runs added, runs already there)."""
    src = Path(folder)
    if not src.is_dir():
        raise TlpsimError(f"no such folder of exported runs: {src}")
    have = db.finished_keys()
    added = kept = 0
    for path in sorted(src.glob("*" + _SUFFIX)):
        key = path.name[:-len(_SUFFIX)]
        if key in have:
            kept += 1
            continue
        try:
            row = json.loads(gzip.decompress(path.read_bytes()))
            values = [row[c] for c in COLUMNS]
        except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
            raise TlpsimError(f"{path}: not an exported run ({type(exc).__name__}: {exc}); the {added} run(s) "
                              f"imported before it are kept") from None
        if row["key"] != key:
            raise TlpsimError(f"{path}: holds run {row['key']}, not {key} (renamed?); the {added} run(s) imported "
                              f"before it are kept")
        with db.conn:
            db.conn.execute(f"INSERT INTO runs({','.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})",
                            values)
        added += 1
    meta_path = src / META_FILE
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError as exc:
            raise TlpsimError(f"{meta_path}: not valid JSON ({exc}); the {added} run(s) were imported") from None
        for k, v in meta.items():
            if k == "schema_version":
                continue
            mine = db.get_meta(k)
            if mine is None:
                db.set_meta(k, v)
            elif isinstance(mine, dict) and isinstance(v, dict):
                db.set_meta(k, {**v, **mine})
    return added, kept


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
