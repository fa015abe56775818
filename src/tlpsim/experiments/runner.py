"""Running an experiment: plan its runs, simulate the ones the results database
does not hold (through the sweep store and backends: each finished run is
committed at once, so an interrupted experiment — Ctrl-C or kill -9 — resumes
where it stopped), re-plan while later runs depend on earlier results, then analyse
and write the outputs. `check_experiment` does the analysis from the database
alone."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tlpsim.experiments import get_experiment
from tlpsim.experiments.base import (
    Experiment,
    ExpRun,
    Outcome,
    Results,
    RunFailure,
    merge_runs,
)
from tlpsim.sweep.fingerprint import simulator_fingerprint
from tlpsim.sweep.store import ResultsDB

__all__ = ["DEFAULT_DB", "check_experiment", "default_out", "make", "run_experiment"]

DEFAULT_DB = "runs/results.sqlite"
MAX_STAGES = 8  # plans depend on earlier results at most this deep


def default_out(name: str, size: str) -> Path:
    return Path("runs") / f"{name}-{size}"


def make(name: str, size: str, plugins: tuple[str, ...] = ()) -> Experiment:
    from tlpsim.errors import TlpsimError
    from tlpsim.workloads.registry import SIZES

    if size not in SIZES:
        raise TlpsimError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    return get_experiment(name)(size, simulator_fingerprint(), plugins)


class _Store:
    """The digests of the experiment's runs, read from the database once each."""

    def __init__(self, db: ResultsDB, exp: Experiment) -> None:
        self.db = db
        self.exp = exp
        self.digests: dict[str, Any] = {}
        self.errors: dict[str, str] = {}   # key -> error of a failed run
        self.seen: set[str] = set()
        self.labels: dict[str, str] = {}
        self.cost: dict[str, float] = {}   # workload -> longest wall time of its runs so far (s)

    def load(self, runs: Iterable[ExpRun]) -> None:
        new = []
        for r in runs:
            self.labels.setdefault(r.key, r.label)
            if r.key not in self.seen:
                new.append(r.key)
        self.seen.update(new)
        for key, status, error, record in self.db.records(new):
            self.add(key, status, error, record)

    def add(self, key: str, status: str, error: str | None, record: dict | None) -> None:
        if status == "done" and record is not None:
            self.digests[key] = self.exp.digest(record)
            w = record.get("workload")
            if w is not None:
                self.cost[w] = max(self.cost.get(w, 0.0), float(record.get("wall_seconds") or 0.0))
            self.errors.pop(key, None)
        else:
            self.errors[key] = error or status

    def results(self, planned: set[str]) -> Results:
        errs = {f"{self.labels.get(k, k)} [{k}]": e for k, e in self.errors.items() if k in planned}
        return Results(self.digests, errs, planned)


def _plan(exp: Experiment, store: _Store, only: Iterable[str] | None) -> list[ExpRun]:
    """The plan given every stored result it can use: planning loads the stored runs it
    names, and those can make a later stage's runs plannable (a resumed experiment whose
    first stage is all stored goes on to the second), so plan again until it stops
    growing."""
    keys: set[str] = set()
    for _ in range(MAX_STAGES):
        runs = merge_runs(exp.plan(store.results(set()), only))
        store.load(runs)
        now = {r.key for r in runs}
        if now == keys:
            break
        keys = now
    return runs


def _remember(db: ResultsDB, exp: Experiment, runs: list[ExpRun]) -> None:
    """Label the runs with the paper's configuration names in the DB's meta table."""
    key = f"experiment:{exp.name}:{exp.size}"
    have = db.get_meta(key, {})
    labels = have.get("runs", {})
    for r in runs:
        labels[r.key] = {"label": r.label, "workload": r.params.workload, "uses": list(r.uses)}
    db.set_meta(key, {"code": exp.code, "runs": labels})


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    if not console.is_terminal:
        return None
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True)


def run_experiment(name: str, size: str = "small", *, only: Iterable[str] | None = None, workers: int | None = None,
                   dask: str | None = None, db_path: str | Path = DEFAULT_DB, out: str | Path | None = None,
                   retry_failed: bool = False, echo: Callable[[str], None] = print, progress: bool = True,
                   command: str = "", plugins: Iterable[str] = (), doc: str | Path | None = None,
                   sampling: dict | None = None, export: str | Path | None = None) -> Outcome:
    """Simulate what `name` needs at `size` and write its outputs to `out` (and the
    Markdown page `doc`); `plugins` (`--plugin` specs, already loaded) are loaded by
    every run; `export`: a folder that gets each run's file as it is stored
    (`tlpsim.sweep.archive`)."""
    from tlpsim.experiments.doc import run_meta
    from tlpsim.sweep.backends import make_backend

    exp = make(name, size, tuple(plugins))
    exp.sampling = sampling  # sampled timing for every run it plans (tlpsim.sampling); None: full detail
    only = _check_only(exp, only)
    _check_outputs(out or default_out(name, size), doc)
    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]
    backend = make_backend(workers, dask)
    outcome = Outcome([])
    attempted: set[str] = set()
    with ResultsDB(db_path) as db:
        if export:
            from tlpsim.sweep.archive import attach_export

            attach_export(db, export)
        store = _Store(db, exp)
        for stage in range(1, MAX_STAGES + 1):
            runs = _plan(exp, store, only)
            _remember(db, exp, runs)
            todo = [r for r in runs if r.key not in attempted and r.key not in store.digests
                    and (retry_failed or r.key not in store.errors)]
            if not todo:
                break
            # longest first (by the workload's runs so far), so no worker idles on a long last run
            todo.sort(key=lambda r: -sum(store.cost.get(w, 0.0) for w in r.params.workload.split("+")))
            echo(f"{exp.name} ({size}), stage {stage}: {len(runs)} runs planned, {len(todo)} to simulate on "
                 f"{backend.describe()}; results in {db_path}")
            attempted.update(r.key for r in todo)
            _simulate(exp, db, store, backend, todo, outcome, echo, progress)
        planned = {r.key for r in runs}
        outcome.reused = len((planned & set(store.digests)) - attempted)
        results = store.results(planned)
        exp.extra_runs(results, db, echo)
        outcome.missing = sorted(store.labels[k] for k in planned if k not in store.digests)
        run = {**run_meta(backend.describe(), time.perf_counter() - t0, load_start),
               "command": command or _command(), "ran": outcome.ran, "reused": outcome.reused,
               "failed": len(outcome.failed), "only": list(only or [])}
        if sampling:  # the page says the figures are sampled, and with what
            from tlpsim.sampling.spec import SamplingSpec

            run["sampling"] = SamplingSpec.from_dict(sampling).label()
        if sampling:  # the verdicts must be the full-detail ones before anyone cites them
            from tlpsim.experiments.sampled import compare_claims, full_detail_claims

            full = full_detail_claims(exp, db, only, _Store, _plan, MAX_STAGES)
            sampled_claims = exp.claims(exp.analyse(results))
            run["sampling_check"] = compare_claims(sampled_claims, full)
            echo(f"sampled claims vs full detail: {run['sampling_check']['status']}"
                 + (f" ({', '.join(run['sampling_check']['differ'])} differ)" if run["sampling_check"]["differ"]
                    else ""))
        if not only:  # the page describes the whole experiment's last run
            db.set_meta(_run_key(exp), run)
        _finish(exp, results, outcome, out or default_out(name, size), {**run, "db": str(db_path)}, doc, run)
    outcome.wall_seconds = time.perf_counter() - t0
    return outcome


def _check_outputs(out: str | Path, doc: str | Path | None) -> None:
    """Before simulating: the output folder and the page can be written (the runs
    themselves are safe in the database either way)."""
    from tlpsim.report.outputs import check_dir, check_file

    check_dir(out, "output folder", "--out")
    if doc is not None:
        check_file(doc, "Markdown page", "--doc")
        check_dir(Path(doc).with_suffix(""), "folder of the page's figures", "--doc")


def _run_key(exp: Experiment) -> str:
    return f"experiment:{exp.name}:{exp.size}:last_run:{exp.code}"


def _simulate(exp: Experiment, db: ResultsDB, store: _Store, backend: Any, todo: list[ExpRun], outcome: Outcome,
              echo: Callable[[str], None], progress: bool) -> None:
    by_key = {r.key: r for r in todo}
    bar = _progress(len(todo), progress)
    task = bar.add_task("simulating", total=len(todo)) if bar is not None else None
    if bar is not None:
        bar.start()
    try:
        for k, res in enumerate(backend.run([r.params.to_dict() for r in todo], None), 1):
            db.put(exp.name, res)
            store.add(res["key"], res["status"], res.get("error"), res.get("record"))
            run = by_key.get(res["key"])
            label = f"{run.params.workload}: {run.label}" if run else res["key"]
            if res["status"] == "done":
                outcome.ran += 1
                line = f"[{k}/{len(todo)}] {label} ({res['finished'] - res['started']:.1f} s)"
            else:
                first = (res.get("error") or "").splitlines()[0] if res.get("error") else ""
                outcome.failed.append(RunFailure(label, first))
                line = f"[{k}/{len(todo)}] FAILED {label}: {first}"
            if bar is not None:
                bar.update(task, advance=1, description=label[:48])
                if res["status"] != "done":
                    bar.console.print(line)
            else:
                echo(line)
    finally:
        if bar is not None:
            bar.stop()


def _finish(exp: Experiment, results: Results, outcome: Outcome, out: str | Path | None, meta: dict,
            doc: str | Path | None = None, run: dict | None = None) -> None:
    from tlpsim.experiments.outputs import write_outputs

    data = exp.analyse(results)
    outcome.claims = exp.claims(data)
    if doc is not None and out is None:
        out = tempfile.mkdtemp(prefix=f"tlpsim-{exp.name}-")  # the page's figures are drawn here, then copied
    if out is not None:
        outcome.files = write_outputs(exp, data, outcome, Path(out), meta)
    if doc is not None:
        from tlpsim.experiments.doc import write_doc

        outcome.files.append(write_doc(exp, outcome, outcome.files, doc, run, meta.get("command") or _command()))


def check_experiment(name: str, size: str = "small", *, db_path: str | Path = DEFAULT_DB,
                     only: Iterable[str] | None = None, out: str | Path | None = None,
                     doc: str | Path | None = None) -> Outcome:
    """The claims of `name` from the runs the database holds (nothing is simulated)."""
    from tlpsim.errors import TlpsimError

    exp = make(name, size)
    only = _check_only(exp, only)
    if out is not None or doc is not None:
        _check_outputs(out or Path(tempfile.gettempdir()), doc)
    if not Path(db_path).is_file():
        raise TlpsimError(f"no results database at {db_path}: run `tlpsim experiment run {name}` first "
                          f"(or give --db)")
    outcome = Outcome([])
    with ResultsDB(db_path, create=False) as db:
        store = _Store(db, exp)
        runs: list[ExpRun] = []
        for _ in range(MAX_STAGES):
            before = {r.key for r in runs}
            runs = _plan(exp, store, only)
            if {r.key for r in runs} == before:
                break
        planned = {r.key for r in runs}
        results = store.results(planned)
        exp.extra_runs(results, db, lambda s: None, simulate=False)
        outcome.reused = len(planned & set(store.digests))
        outcome.missing = sorted(store.labels[k] for k in planned if k not in store.digests)
        outcome.failed = [RunFailure(store.labels.get(k, k), e) for k, e in store.errors.items() if k in planned]
        _finish(exp, results, outcome, out, {"command": _command(), "db": str(db_path)}, doc,
                db.get_meta(_run_key(exp)))
    return outcome


def _check_only(exp: Experiment, only: Iterable[str] | None) -> list[str] | None:
    from tlpsim.errors import TlpsimError

    if not only:
        return None
    names = [a.name for a in exp.artefacts]
    bad = [o for o in only if o not in names]
    if bad:
        raise TlpsimError(f"--only {bad[0]!r}: {exp.name} has no figure or table of that name "
                          f"(it has: {', '.join(names)})")
    return list(only)


def _command() -> str:
    return " ".join(shlex.quote(a) for a in ["tlpsim"] + sys.argv[1:]) if sys.argv else ""
