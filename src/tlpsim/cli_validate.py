"""`tlpsim validate`: the timing model against GPGPU-Sim's reference runs
(tlpsim.validate), or with `--hardware NAME` against a real GPU's measurements
(tlpsim.validate.hw_runner)."""

from __future__ import annotations

import os
import shlex
import sys
import time
from typing import Any

import click

from tlpsim.cli_errors import friendly as _friendly


@click.command("validate")
@click.option("--config", "preset", default=None,
              help="GPU preset or TOML file (default: gtx480, whose reference runs are GPGPU-Sim's; with --hardware "
                   "the preset of that name, e.g. h200).")
@click.option("--hardware", default=None, metavar="NAME",
              help="Validate against real-GPU measurements instead (reference/hardware/NAME, e.g. h200): kernel "
                   "time per launch at small and a paper subset, occupancy sweeps, microbenchmarks.")
@click.option("--hardware-dir", default=None, type=click.Path(file_okay=False),
              help="With --hardware: the measurements' directory (default: $TLPSIM_HARDWARE_DIR/NAME or "
                   "../shared/reference/hardware/NAME).")
@click.option("--cap", type=int, default=1, show_default=True,
              help="With --hardware: launches simulated per workload at small (the longest first).")
@click.option("--paper-cap", type=int, default=1, show_default=True,
              help="With --hardware: launches simulated per workload of the paper subset.")
@click.option("--cache-dir", default=None, type=click.Path(file_okay=False),
              help="With --hardware: where finished jobs are kept so a rerun resumes "
                   "(default: runs/validate-cache-HARDWARE-CONFIG).")
@click.option("--only", "only", multiple=True, metavar="NAME[,NAME...]",
              help="Run only these: reference programs (mm_naive, ...), microbenchmarks (dep_chain, ...), single "
                   "microbenchmark launches (dep_chain.fma.32, pointer_chase.32MB, ...), or the groups "
                   "'reference' and 'micro' (repeatable or comma-separated).")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
              help="Directory for validation.json/.md and the figures (default: runs/validate-CONFIG-TIME).")
@click.option("--doc", default=None, type=click.Path(dir_okay=False),
              help="Also write the Markdown report to this file (e.g. docs/validation.md), linking to the figures.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole record as JSON instead of the summary.")
@click.option("--sweeps/--no-sweeps", default=True, show_default=True,
              help="Run the CTA-limit sweeps of the selected reference programs (the slow part).")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Worker processes running programs and sweep points in parallel.")
@click.option("--toolchain", type=click.Choice(["cuda11", "cuda13", "both"]), default=None,
              help="Which code runs: cuda11 = the reference's own CUDA 11.8 compute_35 PTX with GPGPU-Sim's ptxas "
                   "counts; cuda13 = the reference sources compiled by CUDA 13.5 (gpu.arch, the preset's register "
                   "cap); both = the preset's default first (the criteria are judged on it), then the other, "
                   "reported side by side. Default: the preset's gpu.toolchain (gtx480: cuda11). cuda11/cuda13 are "
                   "the same as --set gpu.toolchain=...")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Config override for every run, e.g. --set dram.tRCD=14 (repeatable).")
@click.option("--ref-dir", default=None, type=click.Path(file_okay=False),
              help="GPGPU-Sim reference data (default: $TLPSIM_REFERENCE_DIR or ../shared/reference/kernels).")
@click.option("--time-limit", type=int, default=0, show_default=True,
              help="Seconds per program run before it is reported as failed (0: none).")
@click.option("--sampling", "sampling_check", is_flag=True,
              help="Instead: check sampled simulation against full detail (docs/sampling.md) on every built-in "
                   "workload at --size, resumably (finished runs are kept in --db).")
@click.option("--workloads", default=None, metavar="NAME[,NAME...]", help="--sampling: only these workloads.")
@click.option("--configs", default=None, metavar="NAME[,NAME...]",
              help="--sampling: only these presets (gtx480, maxwell_gpuduet) and LCS/BCS configurations (GTO, LCS, "
                   "BCS+SCA, DYNCTA, CCWS).")
@click.option("--size", default="study", show_default=True, help="--sampling: workload input size.")
@click.option("--db", "db_path", default="runs/sampling-validation.sqlite", show_default=True,
              type=click.Path(dir_okay=False), help="--sampling: results database (resume point).")
@click.option("--sample", "sample_mode", default="all", show_default=True,
              type=click.Choice(["kernels", "waves", "all"]), help="--sampling: the sampling checked.")
@click.option("--sample-tolerance", default=0.02, show_default=True, type=float, help="--sampling: tolerance.")
@click.option("--session-limit", default=None, type=float, metavar="SECONDS",
              help="--sampling: start no new run after this many seconds (the rest is left for the next session).")
@click.option("--export", "export_dir", default=None, type=click.Path(file_okay=False),
              help="--sampling: also keep each run, as it is stored, as DIR/<key>.json.gz (as `tlpsim results DB "
                   "--export DIR` writes them).")
@click.option("--runs", "run_kinds", default="both", show_default=True, type=click.Choice(["both", "full", "sampled"]),
              help="--sampling: which run of each point to simulate (full-detail runs do not depend on the sampler's "
                   "code, so they can go first).")
@_friendly
def validate_cmd(preset: str | None, hardware: str | None, hardware_dir: str | None, cap: int, paper_cap: int,
                 cache_dir: str | None, only: tuple, out_dir: str | None, doc: str | None, as_json: bool,
                 sweeps: bool, workers: int, toolchain: str | None, overrides: tuple, ref_dir: str | None,
                 time_limit: int, sampling_check: bool = False, workloads: str | None = None, size: str = "study",
                 db_path: str = "", sample_mode: str = "all", sample_tolerance: float = 0.02,
                 session_limit: float | None = None, configs: str | None = None,
                 export_dir: str | None = None, run_kinds: str = "both") -> None:
    """Run the GPGPU-Sim reference programs and microbenchmarks (same PTX, inputs and
    launches) and compare cycles, IPC, miss rates, DRAM utilisation, the
    microbenchmarks' derived figures and the CTA-limit sweeps with GPGPU-Sim's.
    Writes JSON, Markdown and two figures; exits 1 if a program failed or its output
    check did not pass."""
    if sampling_check:
        from tlpsim.cli_sampling import validate_sampling

        validate_sampling(workloads, size, db_path, sample_mode, sample_tolerance, session_limit, doc, as_json, configs,
                          export_dir, run_kinds)
        return
    from tlpsim.config.overrides import parse_overrides
    from tlpsim.errors import TlpsimError
    from tlpsim.validate import Options, validate
    from tlpsim.validate.output import console_summary, write
    from tlpsim.validate.runner import validate_toolchains

    if workers < 1:
        raise TlpsimError(f"--workers must be at least 1, got {workers}")
    if time_limit < 0:
        raise TlpsimError(f"--time-limit must be >= 0, got {time_limit}")
    names = [n for item in only for n in item.split(",") if n.strip()]
    over = parse_overrides(overrides)
    both = toolchain == "both"
    if both:
        if "gpu.toolchain" in over:
            raise TlpsimError(f"--toolchain both contradicts --set gpu.toolchain={over['gpu.toolchain']}")
    elif toolchain is not None:
        if over.get("gpu.toolchain", toolchain) != toolchain:
            raise TlpsimError(f"--toolchain {toolchain} contradicts --set gpu.toolchain={over['gpu.toolchain']}")
        over["gpu.toolchain"] = toolchain
    if hardware is not None:
        _validate_hardware(preset or hardware, hardware, hardware_dir, cap, paper_cap, cache_dir, names, over,
                           out_dir, doc, as_json, sweeps, workers, ref_dir, time_limit)
        return
    for flag, given in (("--hardware-dir", hardware_dir), ("--cache-dir", cache_dir)):
        if given is not None:
            raise TlpsimError(f"{flag} applies only with --hardware NAME")
    preset = preset or "gtx480"
    opts = Options(config=preset, only=names, overrides=over, sweeps=sweeps,
                   workers=workers, ref_dir=ref_dir, time_limit=time_limit)
    out = out_dir or os.path.join("runs", f"validate-{os.path.basename(str(preset)).split('.')[0]}-"
                                          f"{time.strftime('%Y%m%d-%H%M%S')}")
    progress = (lambda s: click.echo(s, err=True)) if as_json else click.echo
    progress(f"validating {preset} against GPGPU-Sim (workers: {workers}"
             f"{'' if sweeps else ', no sweeps'})")
    record = validate_toolchains(opts, echo=progress) if both else validate(opts, echo=progress)
    paths = write(record, out, doc, _command(opts, out_dir, doc, both))
    _report(record, paths, as_json, console_summary, "")
    for rec in [record, *record.get("other_toolchains", [])]:
        if any(p["error"] or p["verified"] is False for p in rec["programs"]) or any(j["error"] for j in rec["jobs"]):
            sys.exit(1)


def _validate_hardware(preset: str, hardware: str, hardware_dir: str | None, cap: int, paper_cap: int,
                       cache_dir: str | None, names: list[str], over: dict, out_dir: str | None, doc: str | None,
                       as_json: bool, sweeps: bool, workers: int, ref_dir: str | None, time_limit: int) -> None:
    from tlpsim.errors import TlpsimError
    from tlpsim.validate.hw_markdown import console_summary, write
    from tlpsim.validate.hw_runner import HwOptions, validate_hardware

    if time_limit:
        raise TlpsimError("--time-limit does not apply with --hardware (jobs are cached and resumable instead)")
    if cap < 1 or paper_cap < 0:
        raise TlpsimError(f"--cap must be at least 1 and --paper-cap at least 0, got {cap} and {paper_cap}")
    if not sweeps:
        if "sweeps" in names:
            raise TlpsimError("--no-sweeps contradicts --only sweeps")
        names = names or ["small", "paper", "micro"]
    tag = f"{hardware}-{os.path.basename(str(preset)).split('.')[0]}"
    opts = HwOptions(config=preset, hardware=hardware, hardware_dir=hardware_dir, ref_dir=ref_dir, only=names,
                     overrides=over, workers=workers, cap=cap, paper_cap=paper_cap,
                     cache_dir=cache_dir or os.path.join("runs", f"validate-cache-{tag}"))
    out = out_dir or os.path.join("runs", f"validate-{tag}-{time.strftime('%Y%m%d-%H%M%S')}")
    progress = (lambda s: click.echo(s, err=True)) if as_json else click.echo
    progress(f"validating {preset} against the {hardware} measurements (workers: {workers}; finished jobs kept in "
             f"{opts.cache_dir})")
    record = validate_hardware(opts, echo=progress)
    args = ["tlpsim", "validate", "--hardware", hardware]
    if preset != hardware:
        args += ["--config", preset]
    if names:
        args += ["--only", ",".join(names)]
    if workers != 1:
        args += ["--workers", str(workers)]
    if cap != 1:
        args += ["--cap", str(cap)]
    if paper_cap != 1:
        args += ["--paper-cap", str(paper_cap)]
    for k, v in over.items():
        args += ["--set", f"{k}={v}"]
    if out_dir:
        args += ["--out", out_dir]
    if doc:
        args += ["--doc", doc]
    paths = write(record, out, doc, " ".join(shlex.quote(a) for a in args))
    _report(record, paths, as_json, console_summary, "; rerun to resume")
    if any(j["error"] or j["verified"] is False for j in record["jobs"]):
        sys.exit(1)


def _report(record: dict, paths: dict, as_json: bool, summary: Any, resume_hint: str) -> None:
    """Print the record (JSON) or its summary and the files written; exit 130 if interrupted."""
    import json

    from tlpsim.validate.output import json_safe

    if as_json:
        click.echo(json.dumps(json_safe(record), indent=1, default=str))
    else:
        for line in summary(record):
            click.echo(line)
        click.echo("written: " + ", ".join(str(p) for p in paths.values()))
    if record["interrupted"]:
        click.echo(f"interrupted: the outputs hold the runs that finished{resume_hint}", err=True)
        sys.exit(130)


def _command(opts: Any, out_dir: str | None, doc: str | None, both: bool = False) -> str:
    """The command line that reproduces this run (recorded in the outputs)."""
    args = ["tlpsim", "validate"]
    if opts.config != "gtx480":
        args += ["--config", opts.config]
    if opts.only:
        args += ["--only", ",".join(opts.only)]
    if not opts.sweeps:
        args.append("--no-sweeps")
    if opts.workers != 1:
        args += ["--workers", str(opts.workers)]
    if both:
        args += ["--toolchain", "both"]
    for k, v in opts.overrides.items():
        args += ["--set", f"{k}={v}"]
    if opts.time_limit:
        args += ["--time-limit", str(opts.time_limit)]
    if opts.ref_dir:
        args += ["--ref-dir", opts.ref_dir]
    if out_dir:
        args += ["--out", out_dir]
    if doc:
        args += ["--doc", doc]
    return " ".join(shlex.quote(a) for a in args)
