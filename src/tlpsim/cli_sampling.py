"""The `--sample` options shared by `tlpsim run`, `sweep` and `experiment run`, and the
body of `tlpsim validate --sampling` (its options are in cli_validate)."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tlpsim.errors import TlpsimError
from tlpsim.sampling.spec import SAMPLE_MODES, SamplingSpec


def sample_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Adds --sample and --sample-tolerance; the command receives `sampling`, a
    SamplingSpec dict (None: full detail, the default)."""

    @click.option("--sample", "sample_mode", default="off", show_default=True, type=click.Choice(SAMPLE_MODES),
                  help="Sampled timing (docs/sampling.md): 'kernels' projects repeated launches from "
                       "representatives, 'waves' projects the middle CTA waves of a launch once its IPC is "
                       "stable, 'all' both. Results carry a confidence interval and the detail share.")
    @click.option("--sample-tolerance", default=0.02, show_default=True,
                  type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
                  help="Relative spread of per-wave IPC that counts as stable (and of instruction counts "
                       "within a kernel group).")
    @functools.wraps(f)
    def wrapper(*args: Any, sample_mode: str = "off", sample_tolerance: float = 0.02, **kwargs: Any) -> Any:
        spec = SamplingSpec(sample_mode, sample_tolerance)
        return f(*args, sampling=spec.to_dict() if spec.on else None, **kwargs)

    return wrapper


def validate_sampling(workloads: str | None, size: str, db_path: str, mode: str, tolerance: float,
                      session_limit: float | None, doc: str | None, as_json: bool, configs: str | None = None,
                      export_dir: str | None = None, runs: str = "both") -> None:
    from tlpsim.validate import sampling_page as report
    from tlpsim.sampling.spec import SamplingSpec
    from tlpsim.validate.sampling_runs import plan, run_validation
    from tlpsim.workloads.registry import SIZES

    if size not in SIZES:
        raise TlpsimError(f"--size must be one of {', '.join(SIZES)}, not {size!r}")
    spec = SamplingSpec(mode, tolerance)
    names = [n.strip() for n in (workloads or "").split(",") if n.strip()] or None
    Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    echo = (lambda s: click.echo(s, err=True)) if as_json else click.echo
    cfgs = [c.strip() for c in (configs or "").split(",") if c.strip()] or None
    rows = run_validation(db_path, size, spec, names, echo=echo, limit_s=session_limit, configs=cfgs,
                          export=export_dir, runs=runs)
    wall = time.perf_counter() - t0
    planned = len(plan(None, size=size))  # the whole validation, whatever subset this session ran
    command = "tlpsim validate --sampling " + " ".join(sys.argv[sys.argv.index("--sampling") + 1:]) \
        if "--sampling" in sys.argv else "tlpsim validate --sampling"
    if as_json:
        click.echo(json.dumps({"summary": report.summary(rows), "rows": rows}, indent=1, default=str))
    s = report.summary(rows)
    echo(f"{s['pairs']} pairs compared ({s['failed']} failed): mean |error| {s['mean_abs_error_pct']:.2f} %, "
         f"max {s['max_abs_error_pct']:.2f} %, coverage {s['coverage'] * 100:.0f} %, timing speed-up "
         f"{s['timing_speedup_geomean']:.2f}x (geomean), end-to-end {s['e2e_speedup_geomean']:.2f}x, "
         f"{s['detail_speedup_geomean']:.2f}x by the detail share")
    if doc:
        page = Path(doc)
        fig = page.parent / "figures" / "sampling_scatter.png"
        report.scatter(rows, fig)
        report.write_page(page, report.markdown(rows, planned, size, spec, command, wall,
                                                str(fig.relative_to(page.parent))))
        echo(f"written: {page}, {fig}")
