"""The results table: database rows flattened to one dict per run (each override
key its own column, plus whole-run metrics), filtered by `--where` conditions,
and normalised against each run's baseline."""

from __future__ import annotations

import operator
import re

from tlpsim.errors import TlpsimError
from tlpsim.report.metrics import run_metrics
from tlpsim.sweep.job import RunParams, canonical
from tlpsim.sweep.spec import baseline_of
from tlpsim.sweep.store import params_key

BASE_COLUMNS = ("key", "workload", "size", "preset", "seed")
TAIL_COLUMNS = ("status", "cycles", "ipc", "wall_seconds", "error")

_OPS = {"!=": operator.ne, ">=": operator.ge, "<=": operator.le, "=": operator.eq, ">": operator.gt,
        "<": operator.lt}
_COND = re.compile(r"^\s*([^=!<>\s]+)\s*(!=|>=|<=|=|>|<)\s*(.*?)\s*$")


def flatten(row: dict, metrics: bool = False) -> dict:
    """A DB row as a flat dict; with `metrics`, every whole-run metric as well."""
    out = {c: row[c] for c in BASE_COLUMNS}
    for k, v in sorted(row["overrides"].items()):
        out[k] = v if isinstance(v, (str, int, float, bool)) else canonical(v)
    for c in TAIL_COLUMNS:
        out[c] = row.get(c)
    if row.get("stale"):
        out["status"] = "stale"
    samp = row["stats"].get("sampling") if isinstance(row.get("stats"), dict) else None
    if samp:  # a sampled run's cycles are projections: say so, with the interval
        out["sampled"] = f"{samp['spec']['mode']} [{samp['interval'][0]}, {samp['interval'][1]}]"
    if out["error"]:
        out["error"] = out["error"].splitlines()[0]
    if metrics and isinstance(row.get("stats"), dict) and row["stats"].get("stats"):
        for k, v in run_metrics(row["stats"]).items():
            out.setdefault(k, v)
    return out


_BOOLS = ("1", "0", "true", "false", "yes", "no")


def _coerce(text: str, like):
    if isinstance(like, bool):
        return text.lower() in ("1", "true", "yes")
    if isinstance(like, (int, float)):
        try:
            return float(text)
        except ValueError:
            return text
    return text


_GRAMMAR = "expected COLUMN OP VALUE with OP one of =, !=, <, <=, >, >= (e.g. --where workload=vecadd --where ipc>100)"


def parse_where(conds: tuple[str, ...] | list[str]) -> list[tuple[str, str, str]]:
    """(column, op, value) of each `--where` condition; a malformed one is an error
    naming it (`ipc>>3` would otherwise compare ipc with the text '>3' and keep
    nothing, silently)."""
    out = []
    for c in conds:
        m = _COND.match(c)
        if not m:
            raise TlpsimError(f"--where {c!r}: {_GRAMMAR}")
        col, op, value = m.groups()
        if not value:
            raise TlpsimError(f"--where {c!r}: no value after {op!r}; {_GRAMMAR}")
        if value[0] in "=<>" or value.startswith("!="):
            raise TlpsimError(f"--where {c!r}: {value!r} after {op!r} is not a value (one operator between "
                              f"column and value; '=' tests equality, not '=='); {_GRAMMAR}; quote a value that "
                              "starts with an operator character, e.g. error='<lambda>'")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append((col, op, value))
    return out


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def matches(row: dict, conds: list[tuple[str, str, str]]) -> bool:
    for col, op, text in conds:
        if col not in row:
            return False
        v = row[col]
        if v is None:
            return False
        try:
            if not _OPS[op](v, _coerce(text, v)):
                return False
        except TypeError:
            if not _OPS[op](str(v), text):
                return False
    return True


def check_columns(rows: list[dict], conds: list[tuple[str, str, str]]) -> None:
    """Every condition names a column of the table and a value of its type: an
    unknown column lists the known ones, a word compared with a numeric column
    (`ipc>fast`) or a non-boolean with a boolean one is an error, not 0 rows."""
    known = set().union(*(r.keys() for r in rows)) if rows else set()
    for col, op, text in conds:
        if rows and col not in known:
            raise TlpsimError(f"--where: no column {col!r} (columns: {', '.join(sorted(known))})")
        sample = next((r[col] for r in rows if r.get(col) is not None), None)
        cond = f"--where '{col}{op}{text}'"
        if isinstance(sample, bool):
            if text.lower() not in _BOOLS:
                raise TlpsimError(f"{cond}: column {col} is true or false; {text!r} is not (use true or false)")
        elif isinstance(sample, (int, float)) and _number(text) is None:
            raise TlpsimError(f"{cond}: column {col} holds numbers; {text!r} is not a number")


def select(db_rows: list[dict], where: tuple[str, ...] = (), metrics: bool = False) -> list[dict]:
    rows = [flatten(r, metrics) for r in db_rows]
    conds = parse_where(where)
    check_columns(rows, conds)
    return [r for r in rows if matches(r, conds)]


def columns(rows: list[dict]) -> list[str]:
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    return cols


def parse_baseline(text: str, stored: dict | None) -> dict:
    """`--normalize baseline` -> the sweep's stored baseline; `--normalize K=V,K=V` -> those values."""
    if text == "baseline":
        if not stored:
            raise TlpsimError("the database has no baseline (give [baseline] in the sweep spec, or "
                              "--normalize KEY=VALUE[,KEY=VALUE])")
        return stored
    out = {}
    for part in text.split(","):
        if "=" not in part:
            raise TlpsimError(f"--normalize {text!r}: expected 'baseline', 'none' or KEY=VALUE[,KEY=VALUE]")
        k, v = part.split("=", 1)
        out[k.strip()] = _literal(v.strip())
    return out


def _literal(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            continue
    return {"true": True, "false": False}.get(v.lower(), v)


def baseline_key(row: dict, baseline: dict) -> str | None:
    """The parameter point (`RunParams.params_key`) of a row's baseline run."""
    p = RunParams(row["workload"], row["size"], row["preset"], row["overrides"], row["seed"], row.get("mode", "timing"))
    b = baseline_of(p, baseline)
    return None if b is None else b.params_key()


def is_baseline(row: dict, baseline: dict) -> bool:
    """Whether a row is its own baseline run."""
    return baseline_key(row, baseline) == params_key(row)
