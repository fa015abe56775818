"""CLI commands for runs at scale: `report` (HTML page of a run directory),
`sweep` (run a spec on a local pool or a Dask cluster into a results DB),
`results` (the DB as a table) and `plot` (normalised grouped bars)."""

from __future__ import annotations

import csv
import json
import signal
import sys
from pathlib import Path

import click

from tlpsim.cli_errors import friendly as _friendly
from tlpsim.cli_plugins import plugin_option
from tlpsim.cli_sampling import sample_options
from tlpsim.errors import TlpsimError
from tlpsim.report.console import table


@click.command("report")
@click.argument("run_dir", type=click.Path())
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="HTML file to write (default: RUN_DIR/report.html).")
@_friendly
def report_cmd(run_dir: str, output: str | None) -> None:
    """Write a self-contained HTML report of a run directory: summary, timelines,
    per-SM cycle breakdown, utilisation, caches and energy."""
    from tlpsim.report.html import render_report
    from tlpsim.report.rundir import load_run_dir

    from tlpsim.report.outputs import OutputError, check_file

    rec = load_run_dir(run_dir)
    out = check_file(output or Path(run_dir) / "report.html", "report", "-o")
    try:
        out.write_text(render_report(rec), encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"could not write the report {out}: {exc.strerror or exc}") from None
    click.echo(f"report written to {out}")


@click.command("sweep")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--db", default=None, type=click.Path(dir_okay=False),
              help="Results database (SQLite; default: the spec's name with .db).")
@click.option("--workers", type=int, default=None, help="Local worker processes (default: CPU count).")
@click.option("--dask", "dask_address", default=None, metavar="tcp://HOST:PORT",
              help="Run on this Dask scheduler instead of a local pool.")
@click.option("--run-dirs", default=None, type=click.Path(file_okay=False),
              help="Also write a run directory per run under this directory.")
@click.option("--retry-failed", is_flag=True, help="Run again the runs recorded as failed.")
@click.option("--dry-run", is_flag=True, help="List the runs (and which are done) without running them.")
@click.option("--export", "export_dir", default=None, type=click.Path(file_okay=False), help="Also keep each run, as it is stored, as DIR/<key>.json.gz (as `tlpsim results DB --export DIR` writes them): a session that ends mid-run keeps every finished run in the folder.")
@sample_options
@plugin_option
@_friendly
def sweep_cmd(spec: str, db: str | None, workers: int | None, dask_address: str | None, run_dirs: str | None,
              retry_failed: bool, dry_run: bool, plugins: tuple[str, ...] = (), sampling: dict | None = None,
              export_dir: str | None = None) -> None:
    """Run a sweep: every combination in SPEC (TOML) not yet in the results database.
    Re-running skips finished runs (a run whose plug-in code changed runs again);
    interrupting loses none."""
    from tlpsim.policies.external import activate
    from tlpsim.sweep.backends import check_workers
    from tlpsim.sweep.runner import run_sweep
    from tlpsim.sweep.spec import load_spec
    from tlpsim.sweep.store import ResultsDB

    check_workers(workers)
    s = load_spec(spec, tuple(lp.spec for lp in activate(plugins)), progress=lambda m: click.echo(m, err=True))
    if sampling:  # every run of the sweep sampled (another key than its full-detail run)
        if any(r.mode != "timing" for r in s.runs):
            raise TlpsimError("--sample samples the timing simulation; the spec has functional-mode runs")
        for r in s.runs:
            r.sampling = dict(sampling)
    db_path = db or str(Path(spec).with_suffix(".db"))
    if run_dirs and not dry_run:
        from tlpsim.report.outputs import check_dir

        check_dir(run_dirs, "run directories' root", "--run-dirs")
    if dry_run:
        have: set[str] = set()
        if Path(db_path).exists():  # read-only: a dry run creates and changes nothing
            with ResultsDB(db_path, create=False) as store:
                have = store.finished_keys()
        table(("key", "run", "in DB"), [[r.key(), r.label(), "yes" if r.key() in have else ""] for r in s.runs])
        return
    previous = signal.signal(signal.SIGTERM, _terminate)  # SIGTERM ends it as Ctrl-C does
    try:
        summary = run_sweep(s, db_path, workers=workers, dask=dask_address, run_root=run_dirs,
                            retry_failed=retry_failed, echo=click.echo, export=export_dir)
    except KeyboardInterrupt as exc:
        _interrupted(s, spec, db_path, db, isinstance(exc, _Terminated))
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo(f"sweep {s.name}: {summary.ran} ran ({summary.failed} failed), {summary.skipped} skipped; "
               f"results in {db_path}")
    if summary.failed:
        sys.exit(1)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the sweep's driver is, so it stops as on Ctrl-C."""


def _terminate(signum, frame) -> None:
    raise _Terminated


def _interrupted(s, spec: str, db_path: str, db_option: str | None, terminated: bool) -> None:
    """Say what an interrupted sweep kept and how to resume it; exit 130 (Ctrl-C) or 143 (SIGTERM)."""
    from tlpsim.sweep.store import ResultsDB

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut this message short
    kept = "?"
    try:
        with ResultsDB(db_path, create=False) as store:
            kept = str(len(store.finished_keys() & {r.key() for r in s.runs}))
    except Exception:  # noqa: BLE001 - the message matters more than the count
        pass
    resume = f"tlpsim sweep {spec}" + (f" --db {db_option}" if db_option else "")
    click.echo(f"interrupted{' by SIGTERM' if terminated else ''}: {kept} of {len(s.runs)} runs of sweep {s.name} "
               f"are kept in {db_path}; resume with: {resume}", err=True)
    sys.exit(143 if terminated else 130)


@click.command("results")
@click.argument("db", type=click.Path(dir_okay=False))
@click.option("--csv", "as_csv", is_flag=True, help="CSV on stdout.")
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout (with the stats record of each run).")
@click.option("--where", multiple=True, metavar="COL OP VALUE",
              help="Keep rows where e.g. workload=vecadd, sm.warp_scheduler!=lrr, ipc>100 (repeatable).")
@click.option("--metrics", is_flag=True,
              help="Add every whole-run metric (hit rates, utilisation, plug-in counters, ...) as columns.")
@click.option("--all", "show_all", is_flag=True,
              help="Also list runs superseded by a later sweep with edited plug-in code (status 'stale').")
@click.option("--export", "export_dir", type=click.Path(file_okay=False), default=None,
              help="Write each run the folder lacks as DIR/<key>.json.gz (and the meta values), e.g. to keep "
                   "finished runs in version control or carry them to another machine.")
@click.option("--import", "import_dir", type=click.Path(file_okay=False), default=None,
              help="Add the runs of a folder written by --export that DB lacks (DB is created if missing); a "
                   "sweep or experiment then reuses them.")
@_friendly
def results_cmd(db: str, as_csv: bool, as_json: bool, where: tuple, metrics: bool, show_all: bool = False,
                export_dir: str | None = None, import_dir: str | None = None) -> None:
    """The results database as a table: one row per run."""
    from tlpsim.sweep.store import ResultsDB
    from tlpsim.sweep.table import columns, select

    if export_dir or import_dir:
        from tlpsim.sweep.archive import export_runs, import_runs

        if import_dir:
            with ResultsDB(db) as store:
                added, kept = import_runs(import_dir, store)
            click.echo(f"{db}: {added} run(s) imported from {import_dir}, {kept} already there")
        if export_dir:
            with ResultsDB(db, create=False) as store:
                written, kept = export_runs(store, export_dir)
            click.echo(f"{export_dir}: {written} run(s) exported from {db}, {kept} already there")
        return

    with ResultsDB(db, create=False) as store:
        db_rows = store.rows(with_stats=metrics or as_json or any(_needs_stats(w) for w in where),
                             include_stale=show_all)
        stale = 0 if show_all else store.stale_count()
    rows = select(db_rows, where, metrics=metrics or any(_needs_stats(w) for w in where))
    if as_json:
        stats = {r["key"]: r.get("stats") for r in db_rows}
        click.echo(json.dumps([{**r, "stats": stats.get(r["key"])} for r in rows], indent=1, default=float))
        return
    cols = columns(rows)
    if as_csv:
        w = csv.DictWriter(sys.stdout, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return
    table(cols, [[_fmt(r.get(c)) for c in cols] for r in rows])
    click.echo(f"{len(rows)} run(s)" + (f"; {stale} stale run(s) simulated with older plug-in code not shown "
                                        "(--all lists them)" if stale else ""))


def _needs_stats(cond: str) -> bool:
    from tlpsim.sweep.table import BASE_COLUMNS, TAIL_COLUMNS, parse_where

    col = parse_where([cond])[0][0]
    return col not in BASE_COLUMNS + TAIL_COLUMNS and ("." not in col or col.startswith("plugin."))


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


@click.command("plot")
@click.argument("db", type=click.Path(dir_okay=False))
@click.option("--metric", default="ipc", show_default=True, help="Whole-run metric (ipc, cycles, l1d_hit_rate, ...).")
@click.option("--normalize", default="baseline", show_default=True,
              help="'baseline' (the sweep's), 'none', or KEY=VALUE[,KEY=VALUE] naming the baseline.")
@click.option("--where", multiple=True, metavar="COL OP VALUE", help="Plot only matching runs (repeatable).")
@click.option("-o", "--output", default="fig.png", show_default=True, type=click.Path(dir_okay=False))
@click.option("--title", default="", help="Figure title.")
@_friendly
def plot_cmd(db: str, metric: str, normalize: str, where: tuple, output: str, title: str) -> None:
    """Grouped bar chart of a metric per workload and configuration, normalised to
    the baseline, with a geometric-mean group (PNG, SVG or PDF by extension)."""
    from tlpsim.report.outputs import check_figure
    from tlpsim.sweep.plots import bar_data, grouped_bars
    from tlpsim.sweep.store import ResultsDB
    from tlpsim.sweep.table import parse_baseline, select

    check_figure(output, "figure", "-o")
    with ResultsDB(db, create=False) as store:
        db_rows = store.rows(with_stats=True)
        stored = store.get_meta("baseline")
        order = store.get_meta("order", [])
    baseline = None if normalize == "none" else parse_baseline(normalize, stored)
    keep = {r["key"] for r in select(db_rows, where)}
    chosen = [r for r in db_rows if r["key"] in keep]
    if baseline:  # baselines stay available even when --where filters them out of the bars
        data = bar_data(chosen + [r for r in db_rows if r["key"] not in keep and _is_baseline(r, baseline)],
                        metric, baseline, order)
    else:
        data = bar_data(chosen, metric, None, order)
    grouped_bars(data, output, title)
    click.echo(f"figure written to {output} ({len(data.groups)} groups x {len(data.variants)} bars)")
    for m in data.missing:
        click.echo(f"  left out: {m}", err=True)


def _is_baseline(row: dict, baseline: dict) -> bool:
    from tlpsim.sweep.table import is_baseline

    return is_baseline(row, baseline)


COMMANDS = (report_cmd, sweep_cmd, results_cmd, plot_cmd)
