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


def export_runs(db: ResultsDB, folder: str | Path) -> tuple[int, int]:
    """Write every run of `db` the folder does not hold yet, and the meta values.
    Returns (runs written, runs already there)."""
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise TlpsimError(f"{out} is not a folder: give a folder to export the runs into")
    out.mkdir(parents=True, exist_ok=True)
    have = {p.name[:-len(_SUFFIX)] for p in out.glob("*" + _SUFFIX)}
    written = kept = 0
    for values in db.conn.execute(f"SELECT {','.join(COLUMNS)} FROM runs ORDER BY finished"):
        row = dict(zip(COLUMNS, values))
        if row["key"] in have:
            kept += 1
            continue
        _write_atomic(out / (row["key"] + _SUFFIX), gzip.compress(json.dumps(row).encode(), 9, mtime=0))
        written += 1
    meta = {k: json.loads(v) for k, v in db.conn.execute("SELECT key, value FROM meta")}
    _write_atomic(out / META_FILE, (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode())
    return written, kept


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
