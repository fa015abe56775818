"""Driving a sweep: expand the spec, skip runs the database already holds, send
the rest to a backend, and store each result the moment it arrives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tlpsim.sweep.backends import make_backend
from tlpsim.sweep.job import RunParams
from tlpsim.sweep.spec import SweepSpec
from tlpsim.sweep.store import ResultsDB


@dataclass
class SweepSummary:
    total: int
    skipped: int      # already in the database
    ran: int
    failed: int       # of those that ran


def run_sweep(spec: SweepSpec, db_path: str, *, workers: int | None = None, dask: str | None = None,
              run_root: str | None = None, retry_failed: bool = False,
              echo: Callable[[str], None] = print, progress=None, export: str | None = None) -> SweepSummary:
    """Run every run of `spec` not yet in the database at `db_path`. `progress`,
    if given, is called with (done, total) after each stored run; `export`: a folder
    that gets each run's file as it is stored (`tlpsim.sweep.archive`)."""
    backend = make_backend(workers, dask)
    with ResultsDB(db_path) as db:
        if export:
            from tlpsim.sweep.archive import attach_export

            attach_export(db, export)
        db.record_sweep(spec)
        have = db.finished_keys(include_failed=not retry_failed)
        todo = [r for r in spec.runs if r.key() not in have]
        skipped = len(spec.runs) - len(todo)
        echo(f"sweep {spec.name}: {len(spec.runs)} runs, {skipped} already in {db_path}, {len(todo)} to run "
             f"on {backend.describe()}")
        ran = failed = 0
        for res in backend.run([_job(r) for r in todo], run_root):
            db.put(spec.name, res)
            ran += 1
            label = _label(res)
            if res["status"] == "done":
                rec = res["record"]
                cycles = sum(s["cycles"] for s in rec.get("stats", []))
                echo(f"[{ran}/{len(todo)}] done   {label}: {cycles} cycles "
                     f"({res['finished'] - res['started']:.1f} s)")
            else:
                failed += 1
                first = (res.get("error") or "").splitlines()[0] if res.get("error") else ""
                echo(f"[{ran}/{len(todo)}] FAILED {label}: {first}")
            if progress is not None:
                progress(ran, len(todo))
    return SweepSummary(len(spec.runs), skipped, ran, failed)


def _job(run: RunParams) -> dict:
    """A run's parameters for a worker, with the text of its plug-in files (a Dask
    worker on another host may not have them)."""
    job = run.to_dict()
    if run.plugins:
        from tlpsim.policies.external import sources

        job["plugin_sources"] = sources(run.plugins)
    return job


def _label(res: dict) -> str:
    return RunParams.from_dict(res["params"]).label()
