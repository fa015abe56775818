"""`tlpsim experiment`: reproduce a paper (`list`, `run`, `check`)."""

from __future__ import annotations

import json
import sys

import click

from tlpsim.cli_errors import friendly as _friendly
from tlpsim.cli_plugins import plugin_option
from tlpsim.cli_sampling import sample_options
from tlpsim.report.console import table
from tlpsim.workloads.registry import SIZES


@click.group("experiment")
def experiment_group() -> None:
    """Paper reproductions: each runs its figures' simulations through the sweep store
    (resumable, deduplicated) and checks the paper's claims."""


@experiment_group.command("list")
def list_cmd() -> None:
    """The experiments, with their figures and tables."""
    from tlpsim.experiments import EXPERIMENTS, get_experiment

    for name in sorted(EXPERIMENTS):
        exp = get_experiment(name)()
        click.echo(f"{name}: {exp.title}")
        click.echo(f"  {exp.paper}")
        click.echo("  " + ", ".join(a.name for a in exp.artefacts))


def _only(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@experiment_group.command("run")
@click.argument("name")
@click.option("--size", default="small", show_default=True, type=click.Choice(SIZES), help="Workload input size.")
@click.option("--only", default=None, metavar="FIG[,FIG]", help="Only these figures/tables (e.g. fig12,fig13).")
@click.option("--workers", type=int, default=None, help="Local worker processes (default: CPU count).")
@click.option("--dask", "dask_address", default=None, metavar="tcp://HOST:PORT", help="Run on a Dask scheduler.")
@click.option("--db", "db_path", default=None, type=click.Path(dir_okay=False),
              help="Results database shared by experiments and sweeps (default: runs/results.sqlite).")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder for figures, tables, summary.json and index.html (default: runs/NAME-SIZE).")
@click.option("--retry-failed", is_flag=True, help="Simulate again the runs recorded as failed.")
@click.option("--doc", default=None, type=click.Path(dir_okay=False),
              help="Also write a Markdown page of the results (e.g. docs/experiments/NAME.md; its figures go to a "
                   "folder beside it; text outside the generated part is kept).")
@click.option("--export", "export_dir", default=None, type=click.Path(file_okay=False), help="Also keep each run, as it is stored, as DIR/<key>.json.gz (as `tlpsim results DB --export DIR` writes them): a session that ends mid-run keeps every finished run in the folder.")
@sample_options
@plugin_option
@_friendly
def run_cmd(name: str, size: str, only: str | None, workers: int | None, dask_address: str | None,
            db_path: str | None, out: str | None, retry_failed: bool, doc: str | None,
            plugins: tuple[str, ...] = (), sampling: dict | None = None, export_dir: str | None = None) -> None:
    """Simulate what experiment NAME needs (runs already in the database are reused)
    and write its figures, tables and claim table."""
    from tlpsim.experiments.runner import DEFAULT_DB, default_out, run_experiment
    from tlpsim.policies.external import activate
    from tlpsim.sweep.backends import check_workers

    check_workers(workers)
    specs = [lp.spec for lp in activate(plugins)]
    res = run_experiment(name, size, only=_only(only), workers=workers, dask=dask_address,
                         db_path=db_path or DEFAULT_DB, out=out or default_out(name, size),
                         retry_failed=retry_failed, echo=click.echo, plugins=specs, doc=doc, sampling=sampling,
                         export=export_dir)
    _print_claims(res.claims)
    click.echo(f"{res.ran} runs simulated, {res.reused} reused, {len(res.failed)} failed; "
               f"{res.wall_seconds:.0f} s; outputs in {out or default_out(name, size)}")
    for f in res.failed:
        click.echo(f"  failed: {f.label}: {f.error}", err=True)
    if res.failed:
        sys.exit(1)


@experiment_group.command("check")
@click.argument("name")
@click.option("--size", default="small", show_default=True, type=click.Choice(SIZES))
@click.option("--only", default=None, metavar="FIG[,FIG]", help="Only the claims of these figures' runs.")
@click.option("--db", "db_path", default=None, type=click.Path(dir_okay=False),
              help="Results database (default: runs/results.sqlite).")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Also rewrite the outputs (figures, tables, summary.json, index.html) here.")
@click.option("--json", "as_json", is_flag=True, help="The claims as JSON.")
@click.option("--doc", default=None, type=click.Path(dir_okay=False),
              help="Also write the Markdown page of the results (see `experiment run --doc`).")
@_friendly
def check_cmd(name: str, size: str, only: str | None, db_path: str | None, out: str | None, as_json: bool,
              doc: str | None) -> None:
    """Re-evaluate experiment NAME's claims from the results database (no simulation)."""
    from tlpsim.experiments.runner import DEFAULT_DB, check_experiment

    res = check_experiment(name, size, db_path=db_path or DEFAULT_DB, only=_only(only), out=out, doc=doc)
    if as_json:
        click.echo(json.dumps({"claims": [c.to_dict() for c in res.claims], "missing_runs": res.missing},
                              indent=1, default=float))
        return
    _print_claims(res.claims)
    if res.missing:
        click.echo(f"{len(res.missing)} planned runs are not in the database (run the experiment to add them): "
                   + ", ".join(res.missing[:6]) + (" ..." if len(res.missing) > 6 else ""))


def _print_claims(claims) -> None:
    from tlpsim.experiments.outputs import CLAIM_HEADS, claim_rows

    table(CLAIM_HEADS, claim_rows(claims))
    for c in claims:
        if c.detail:
            click.echo(f"  {c.id}: {c.detail}" + (f" — {c.note}" if c.note else ""))
