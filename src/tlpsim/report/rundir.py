"""Run directories: everything needed to understand and reproduce one run.

    runs/<workload>-<size>-<preset>-<key>/
        params.json     what was asked for (workload, size, preset, overrides, seed, mode)
        config.toml     the fully resolved GPU config (timing mode; `load_config` reads it back)
        stats.json      the record: launches, checks and one LaunchStats per launch
        timeline.json   the sampled series of every launch (also inside stats.json)
        error.json      instead of stats.json when the run ended in an error: the error and
                        the record of the launches that finished
        versions.json   tlpsim, Python, key packages, CUDA toolkit, host, command line
        plugins/        a copy of each plug-in file the run loaded (--plugin, spec, TLPSIM_PLUGINS)

An existing directory is never overwritten: the default name gets a numeric
suffix, and an explicit directory that already holds a run is an error."""

from __future__ import annotations

import json
import os
import platform
import socket
import sys
import time
from importlib import metadata
from pathlib import Path

from tlpsim.errors import TlpsimError

FILES = ("params.json", "config.toml", "stats.json", "timeline.json", "versions.json")
_PACKAGES = ("numpy", "pydantic", "click", "rich", "matplotlib", "dask", "distributed")


def default_name(params) -> str:
    return f"{params.workload}-{params.size}-{params.preset if params.mode == 'timing' else 'functional'}-{params.key()[:8]}"


def _fresh(root: Path, name: str) -> Path:
    path = root / name
    k = 2
    while path.exists():  # a re-run of the same parameters gets its own directory
        path = root / f"{name}.{k}"
        k += 1
    return path


def versions() -> dict:
    import tlpsim

    out = {"tlpsim": tlpsim.__version__, "python": platform.python_version(), "platform": platform.platform(),
           "host": socket.gethostname(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "argv": sys.argv}
    pk = {}
    for name in _PACKAGES:
        try:
            pk[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    out["packages"] = pk
    out["timing_core"] = tlpsim._core.status().to_dict()  # compiled (mypyc) or the Python sources
    try:
        from tlpsim.frontend.toolkit import toolkit_version

        out["cuda_toolkit"] = toolkit_version()
    except Exception as exc:  # noqa: BLE001 - a missing toolkit must not lose the run's results
        out["cuda_toolkit"] = f"unknown ({type(exc).__name__})"
    src = Path(tlpsim.__file__).resolve().parents[2]
    head = src / ".git"
    if head.exists():  # a source checkout: name the commit (worktrees have a .git file)
        out["source"] = str(src)
        out["git_commit"] = _git_commit(src)
    return out


def _git_commit(src: Path) -> str | None:
    import subprocess

    try:
        proc = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              check=False)
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _dump(path: Path, data) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=float))
    os.replace(tmp, path)


def check_new(path: str | os.PathLike | None) -> None:
    """Fail early (before simulating) when an explicit run directory holds files."""
    if path is not None:
        out = Path(path)
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise TlpsimError(f"run directory {out} exists and is not empty; choose another --run-dir "
                              "(tlpsim never overwrites a run)")


def write_run_dir(outcome, root: str | os.PathLike = "runs", path: str | os.PathLike | None = None) -> Path:
    """Write a run's files; returns the directory. `path` forces the location (it
    must not hold a run already); otherwise a fresh directory under `root`."""
    if path is not None:
        check_new(path)
        out = Path(path)
    else:
        out = _fresh(Path(root), default_name(outcome.params))
    out.mkdir(parents=True, exist_ok=True)
    rec = outcome.record
    _dump(out / "params.json", outcome.params.to_dict())
    if outcome.config is not None:
        header = f"resolved config of run {out.name} ({outcome.params.label()})"
        (out / "config.toml").write_text(outcome.config.to_toml(header=header))
    _dump(out / "timeline.json", [{"kernel": s["kernel"], **s.get("timeline", {})} for s in rec.get("stats", [])])
    _dump(out / "versions.json", versions())
    _copy_plugins(out, outcome.params.plugins)
    _dump(out / "stats.json", rec)  # last: its presence marks a complete run directory
    return out


def write_failed_run_dir(outcome, path: str | os.PathLike | None = None, root: str | os.PathLike = "runs") -> Path:
    """The run directory of a run that ended in an error: params, config, versions and
    plug-ins as for a complete one, and `error.json` (the error and the record of the
    launches that finished) instead of `stats.json`, which marks a complete run."""
    out = Path(path) if path is not None else _fresh(Path(root), default_name(outcome.params))
    out.mkdir(parents=True, exist_ok=True)
    _dump(out / "params.json", outcome.params.to_dict())
    if outcome.config is not None:
        header = f"resolved config of failed run {out.name} ({outcome.params.label()})"
        (out / "config.toml").write_text(outcome.config.to_toml(header=header))
    _dump(out / "versions.json", versions())
    _copy_plugins(out, outcome.params.plugins)
    _dump(out / "error.json", outcome.record)
    return out


def _copy_plugins(out: Path, specs) -> None:
    """The source of each plug-in file as the run executed it, under plugins/."""
    from tlpsim.policies.external import sources

    texts = sources(specs)
    if not texts:
        return
    (out / "plugins").mkdir(exist_ok=True)
    used: set[str] = set()
    for k, (path, text) in enumerate(texts.items()):
        name = Path(path).name
        if name in used:  # two plug-ins of one name from different directories
            name = f"{k}-{name}"
        used.add(name)
        (out / "plugins" / name).write_text(text, encoding="utf-8")


#: what the report reads of each timing-statistics entry (the rest is optional)
STATS_KEYS = ("kernel", "cycles", "warp_insts", "thread_insts", "ipc", "ctas_per_sm_limit", "limited_by",
              "avg_resident_warps", "l1d_hit_rate", "l2_hit_rate", "dram_reads", "dram_writes", "per_sm")


def check_record(rec: object, source: str | os.PathLike) -> None:
    """Raise unless `rec` has the structure of a tlpsim statistics record (`tlpsim
    run`/`exec`'s stats.json): a hand-made or truncated file is refused naming what
    it lacks, not rendered as an empty report or a traceback."""
    def bad(what: str) -> TlpsimError:
        return TlpsimError(f"{source} is not a tlpsim statistics record: {what}")

    if not isinstance(rec, dict):
        raise bad(f"a JSON object was expected, got {type(rec).__name__}")
    missing = [k for k in ("workload", "mode", "launches") if k not in rec]
    if missing:
        raise bad(f"no {', '.join(repr(k) for k in missing)} (it has: {', '.join(map(repr, rec)) or 'nothing'})")
    if rec["mode"] not in ("functional", "timing"):
        raise bad(f"'mode' is {rec['mode']!r}, not 'functional' or 'timing'")
    for name, need in (("launches", ("kernel",)), ("stats", STATS_KEYS)):
        items = rec.get(name) or []
        if not isinstance(items, list):
            raise bad(f"'{name}' is {type(items).__name__}, not a list")
        for k, item in enumerate(items):
            if not isinstance(item, dict):
                raise bad(f"{name}[{k}] is {type(item).__name__}, not an object")
            lacks = [key for key in need if key not in item]
            if lacks:
                raise bad(f"{name}[{k}] has no {', '.join(repr(key) for key in lacks)}")
            if name == "stats" and not (isinstance(item["per_sm"], list)
                                        and all(isinstance(sm, dict) for sm in item["per_sm"])):
                raise bad(f"stats[{k}]['per_sm'] is not a list of objects")


def load_run_dir(path: str | os.PathLike) -> dict:
    """The stats record of a run directory (with `versions` and `params` added)."""
    d = Path(path)
    if not d.is_dir():
        raise TlpsimError(f"no such run directory: {d}")
    stats = d / "stats.json"
    if not stats.is_file():
        raise TlpsimError(f"{d} is not a run directory (no stats.json; the run may not have finished)")
    try:
        rec = json.loads(stats.read_text())
        check_record(rec, stats)
        for name in ("versions", "params"):
            f = d / f"{name}.json"
            if f.is_file():
                rec.setdefault(name, json.loads(f.read_text()))
    except json.JSONDecodeError as exc:
        raise TlpsimError(f"{stats}: not valid JSON ({exc})") from None
    rec["run_dir"] = str(d)
    return rec
