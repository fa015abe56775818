"""Output paths: checked before any simulation starts, and results kept when
writing fails anyway.

A run can take hours; discovering only at the end that its run directory, stats
file or plot cannot be written loses all of it. Commands probe every output
location first (`check_dir`, `check_file`: the directory is created if needed and
a temporary file is written and removed in it, which also catches read-only file
systems and paths under a regular file, whatever the user's privileges). If a
write still fails at the end (disk full, directory removed meanwhile),
`keep_results` saves the record to a temporary file and the error says where.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from tlpsim.errors import TlpsimError
from tlpsim.paths import writable_dir

__all__ = ["OutputError", "check_dir", "check_figure", "check_file", "figure_formats", "keep_results", "writable_dir"]


class OutputError(TlpsimError):
    """An output location cannot be written."""


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_dir(path: str | os.PathLike, what: str, option: str = "") -> Path:
    """Raise OutputError naming `what` (e.g. "run directory") unless files can be
    created in `path`."""
    why = writable_dir(path)
    if why is not None:
        hint = f"; choose another with {option}" if option else ""
        raise OutputError(f"cannot write the {what} {path}: {why}{hint} (checked before simulating; "
                          "nothing was run)")
    return Path(path)


def check_file(path: str | os.PathLike, what: str, option: str = "") -> Path:
    """Raise OutputError unless the file `path` can be written (its directory is
    probed; an existing file must be a writable regular file)."""
    p = Path(path)
    hint = f"; choose another with {option}" if option else ""
    if p.is_dir():
        raise OutputError(f"cannot write the {what} {p}: it is a directory{hint}")
    why = writable_dir(p.parent if str(p.parent) else ".")
    if why is None and p.exists() and not os.access(p, os.W_OK):
        why = "permission denied"
    if why is not None:
        raise OutputError(f"cannot write the {what} {p}: {why}{hint} (checked before simulating; nothing was run)")
    return p


def figure_formats() -> list[str]:
    """The file extensions matplotlib can write (it picks the format by extension)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return sorted(FigureCanvasBase.get_supported_filetypes())


def check_figure(path: str | os.PathLike, what: str, option: str = "") -> Path:
    """`check_file` for a figure, and its format (by extension) one matplotlib
    writes: a .xyz would otherwise fail only when the figure is saved, after the work."""
    p = check_file(path, what, option)
    ext = p.suffix[1:]
    if ext and ext.lower() not in figure_formats():
        hint = f" ({option})" if option else ""
        raise OutputError(f"cannot write the {what} {p}{hint}: '.{ext}' is not a figure format; use one of "
                          f"{', '.join(figure_formats())} (checked before simulating; nothing was run)")
    return p


def keep_results(record, what: str, exc: BaseException) -> OutputError:
    """Save `record` (JSON-able) to a temporary file after writing `what` failed with
    `exc`; returns the error to raise, which says where the results are."""
    try:
        fd, tmp = tempfile.mkstemp(prefix="tlpsim-results-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1, default=float)
        where = f"the results were saved to {tmp}"
    except OSError as exc2:  # even the temporary directory is unusable: say so, keep nothing half-written
        where = f"saving them to a temporary file failed too ({_reason(exc2)})"
    reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
    return OutputError(f"could not write the {what} ({reason}); {where}")


def check_run_outputs(run_dir: str | None, stats_out: str | None = None, energy_plot: str | None = None) -> None:
    """`tlpsim run`'s outputs, before it simulates: the run directory (an explicit one
    must be new or empty), the stats file and the energy plot."""
    from tlpsim.report.rundir import check_new

    check_new(run_dir)
    check_dir(Path(run_dir).parent if run_dir else Path("runs"), "run directory", "--run-dir")
    if stats_out:
        check_file(stats_out, "stats file", "--stats-out")
    if energy_plot:
        check_figure(energy_plot, "energy plot", "--energy-plot")


def write_run_outputs(outcome, run_dir: str | None, stats_out: str | None) -> tuple[Path | None, OutputError | None]:
    """Write the run directory and the stats file. A failure does not lose the run:
    the record goes to a temporary file and the returned error says where (the
    caller reports the run first, then raises it)."""
    import json as _json

    from tlpsim.report.rundir import write_run_dir

    out = None
    try:
        out = write_run_dir(outcome, path=run_dir)
        if stats_out:
            Path(stats_out).parent.mkdir(parents=True, exist_ok=True)
            Path(stats_out).write_text(_json.dumps(outcome.record, indent=1, default=float))
    except OSError as exc:
        what = f"stats file {stats_out}" if out is not None else f"run directory {run_dir or 'under runs/'}"
        return out, keep_results(outcome.record, what, exc)
    return out, None
