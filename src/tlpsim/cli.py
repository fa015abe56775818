"""The `tlpsim` command line. Each command is a thin layer over the Python API;
user errors (TlpsimError) print one clear message and exit with status 2."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

import tlpsim
from tlpsim.cli_errors import friendly as _friendly
from tlpsim.cli_plugins import plugin_option
from tlpsim.cli_sampling import sample_options
from tlpsim.report.console import table
from tlpsim.workloads.registry import SIZES


@click.group()
@click.version_option(package_name="tlpsim", message="%(prog)s %(version)s (timing core: "
                      + ("compiled" if tlpsim._core.status().compiled
                         else f"Python sources, {tlpsim._core.status().reason}") + ")")
def main() -> None:
    """tlpsim: a Python simulator of NVIDIA-style GPUs for SM resource-management research."""


@main.command("compile")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--arch", default=None, help="Target SM architecture (cuda13: sm_75 or newer, default sm_80; "
                                           "cuda11: sm_35 ... sm_90, default sm_35).")
@click.option("--toolchain", type=click.Choice(["cuda13", "cuda11"]), default="cuda13", show_default=True,
              help="cuda13: nvcc 13.5 (whole programs too); cuda11: NVRTC 11.8 + ptxas 11.8, the papers' era "
                   "(device code only; docs/toolchains.md).")
@click.option("--maxrregcount", type=int, default=None, help="Register limit per thread passed to nvcc/ptxas.")
@click.option("-D", "--define-macro", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="Define a preprocessor macro, as nvcc -D (repeatable).")
@click.option("-I", "--include-path", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False), help="Add an include directory, as nvcc -I (repeatable).")
@click.option("--std", default=None, metavar="STD", help="C++ standard, as nvcc --std (default c++17).")
@click.option("--json", "as_json", is_flag=True, help="Print the resource usage as JSON.")
@_friendly
def compile_cmd(source: str, arch: str | None, toolchain: str, maxrregcount: int | None, defines: tuple[str, ...],
                include_dirs: tuple[str, ...], std: str | None, as_json: bool) -> None:
    """Compile a CUDA file to PTX and list its kernels with their resource usage."""
    from tlpsim.source_files import check_source_file
    from tlpsim.frontend.loader import load_program
    from tlpsim.frontend.names import qualified_name
    from tlpsim.frontend.options import split_options

    # spelled as nvcc options, so frontend.options parses them as RawModule(options=...) does
    options = [f"-D{d}" for d in defines] + [f"-I{d}" for d in include_dirs] + ([f"--std={std}"] if std else [])
    used = split_options(options, maxrregcount=maxrregcount)
    arch = arch or ("sm_35" if toolchain == "cuda11" else "sm_80")
    prog = load_program(check_source_file(source), arch=arch, options=options, maxrregcount=maxrregcount,
                        toolchain=toolchain)
    rows = []
    for name in prog.kernels:
        res = prog.resources.get(name)
        row = {"kernel": qualified_name(name), "mangled": name}
        row.update(res.to_dict() if res else {})
        rows.append(row)
    if as_json:
        click.echo(json.dumps({"source": source, "toolchain": toolchain, "arch": arch,
                               "compile_options": used.to_dict(),
                               "nvcc_command": prog.compile_result.command[1:] if prog.compile_result else None,
                               "kernels": rows}, indent=2))
        return
    if (options or toolchain != "cuda13") and prog.compile_result:
        click.echo(("nvcc " if toolchain == "cuda13" else "nvrtc ") + " ".join(prog.compile_result.command[1:]))
    cols = ("kernel", "registers", "shared_bytes", "local_bytes", "spill_stores", "const_bytes", "barriers")
    heads = ("kernel", "regs", "smem B", "local B", "spill B", "cmem B", "barriers")
    table(heads, [[r.get(c, "-") for c in cols] for r in rows])


@main.command("ptx")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--cfg", "cfg_path", type=click.Path(dir_okay=False), help="Write the CFG as Graphviz DOT.")
@click.option("--kernel", default=None, help="Kernel for --cfg (default: every function, one graph each).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--check/--no-check", default=True, show_default=True,
              help="Assemble a .ptx file with ptxas first, as a launch does (--no-check: only parse it).")
@_friendly
def ptx_cmd(source: str, cfg_path: str | None, kernel: str | None, as_json: bool, check: bool = True) -> None:
    """Summarise a parsed PTX module: kernels, blocks, instruction mix. A .ptx file
    is first assembled by ptxas, so PTX a launch would refuse is refused here too."""
    from tlpsim.analysis.kernel_cfg import cfg_dot, kernel_cfg
    from tlpsim.source_files import check_source_file
    from tlpsim.frontend.loader import load_program

    path = check_source_file(source)
    prog = load_program(path, resources=False)
    checked = "compiled by nvcc"
    if Path(source).suffix != ".cu":
        checked = _ptxas_check(Path(path)) if check else "not checked by ptxas (--no-check)"
    module = prog.module
    funcs = [f for f in module.functions.values() if not f.is_declaration]
    if kernel:
        funcs = [module.get_kernel(kernel)]
    summary = []
    for fn in funcs:
        mix = Counter(ins.opclass for ins in fn.instructions)
        cfg = kernel_cfg(fn)
        summary.append({
            "name": fn.name, "kind": fn.kind, "instructions": len(fn.instructions), "blocks": len(fn.blocks),
            "loops": len(cfg.loops()), "registers_declared": len(fn.reg_types), "mix": dict(sorted(mix.items())),
        })
    if cfg_path:
        Path(cfg_path).write_text("".join(cfg_dot(fn) for fn in funcs))
    if as_json:
        click.echo(json.dumps({"file": source, "version": module.version, "target": list(module.target),
                               "checked": checked, "functions": summary}, indent=2))
        return
    click.echo(f"{source}: PTX {module.version}, target {','.join(module.target)}, "
               f"{len(module.kernels)} kernel(s), {len(funcs)} function(s) shown; {checked}")
    table(("function", "kind", "instrs", "blocks", "loops", "regs"),
           [[s["name"], s["kind"], s["instructions"], s["blocks"], s["loops"], s["registers_declared"]] for s in summary])
    total = Counter()
    for s in summary:
        total.update(s["mix"])
    n = sum(total.values()) or 1
    click.echo("instruction mix: " + ", ".join(f"{k} {v} ({100 * v / n:.0f}%)" for k, v in total.most_common()))
    if cfg_path:
        click.echo(f"CFG written to {cfg_path}")


def _ptxas_check(path: Path) -> str:
    """Assemble a PTX file with the bundled ptxas for its own target (a CompileError
    quoting ptxas if it is refused); what was checked, for the summary."""
    import warnings

    from tlpsim.errors import ToolkitNotFound
    from tlpsim.frontend.nvcc import PtxasWarning, ptx_resources_for_file

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PtxasWarning)
        try:
            res = ptx_resources_for_file(path)
        except ToolkitNotFound as exc:
            raise ToolkitNotFound(f"{exc}\n(`tlpsim ptx --no-check` parses the file without ptxas)") from None
    if not res and caught:  # a target no bundled ptxas assembles: say so, do not claim a check
        return f"not checked by ptxas: {caught[0].message}"
    return "assembled by ptxas without errors"


@main.command("run")
@click.argument("workload")
@click.option("--size", default="small", show_default=True, type=click.Choice(SIZES))
@click.option("--mode", default="timing", show_default=True, type=click.Choice(["functional", "timing"]))
@click.option("--config", "preset", default="gtx480", show_default=True, help="GPU preset (timing mode).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Config override with a dotted key, e.g. --set sm.warp_scheduler=lrr (repeatable).")
@click.option("--seed", default=1, show_default=True, type=click.IntRange(min=0, max=2**63 - 1),
              help="Seed of the generated inputs (>= 0).")
@click.option("--stats-out", type=click.Path(dir_okay=False), default=None,
              help="Also write the stats JSON to this file.")
@click.option("--run-dir", type=click.Path(file_okay=False), default=None,
              help="Run directory to create (default: a new runs/WORKLOAD-SIZE-PRESET-HASH/).")
@click.option("--poison-dead", is_flag=True,
              help="Overwrite registers where the analyses say they are dead (soundness check of the analyses).")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@click.option("--energy-plot", type=click.Path(dir_okay=False), default=None,
              help="Timing mode: write a stacked-bar energy breakdown per launch (PNG) and print the run's energy.")
@click.option("--budget-factor", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Runaway budget: a warp may execute this many times its kernel's static instructions "
                   "(default 10000, or TLPSIM_BUDGET_FACTOR).")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="Wall-clock limit per launch (default none, or TLPSIM_TIME_LIMIT).")
@click.option("--oob-reads", type=click.Choice(["error", "zero"]), default="error", show_default=True,
              help="Global loads outside every allocation: an illegal-address error, or read 0 (counted per launch). "
                   "Out-of-bounds stores stay errors.")
@sample_options
@plugin_option
@_friendly
def run_cmd(workload: str, size: str, mode: str, preset: str, overrides: tuple, seed: int, stats_out: str | None,
            run_dir: str | None, poison_dead: bool, as_json: bool, energy_plot: str | None = None,
            budget_factor: float | None = None, time_limit: float | None = None, oob_reads: str = "error",
            plugins: tuple[str, ...] = (), sampling: dict | None = None) -> None:
    """Run a built-in workload, verify its output against NumPy, and report. Writes a
    run directory (params, resolved config, stats, timeline, versions)."""
    from tlpsim.config.overrides import parse_overrides
    from tlpsim.policies.external import activate
    from tlpsim.report import console
    from tlpsim.report.progress import RunProgress
    from tlpsim.report.outputs import check_run_outputs, keep_results, write_run_outputs
    from tlpsim.sweep.job import RunParams, execute
    from tlpsim.workloads.registry import get_workload

    if mode == "functional" and energy_plot:  # energy comes from the timing model's statistics
        raise tlpsim.TlpsimError("--energy-plot applies to the timing model (the energy is estimated from its "
                                 "statistics); add --mode timing, or leave --energy-plot out")
    loaded = activate(plugins)
    wl = get_workload(workload)
    check_run_outputs(run_dir, stats_out, energy_plot)  # before simulating: an unwritable path loses nothing
    if sampling and mode != "timing":
        raise tlpsim.TlpsimError("--sample samples the timing simulation; leave --mode functional out")
    params = RunParams(workload, size, preset, parse_overrides(overrides), seed, mode,
                       tuple(lp.spec for lp in loaded), sampling=sampling)
    limits = {k: v for k, v in (("budget_factor", budget_factor), ("time_limit", time_limit)) if v is not None}
    if oob_reads != "error":
        limits["oob_reads"] = oob_reads
    if mode == "functional":  # compile as the preset's timing run does, so both execute the same PTX
        from tlpsim.config.loader import load_config

        gpu = load_config(preset, params.overrides).gpu  # only the compile keys may be set here (sweep.job)
        limits.update(gpu.compile_options)
        limits["block_schedule"] = gpu.block_schedule  # and in the same order within blocks
    try:
        outcome = execute(params, poison_dead=poison_dead, device_options=limits,
                          on_device=lambda dev: RunProgress(dev, f"{workload} ({size})"))
    except tlpsim.TlpsimError as exc:
        _keep_failed_run(getattr(exc, "partial", None), run_dir)
        raise
    result, record = outcome.result, outcome.record
    out, write_failure = write_run_outputs(outcome, run_dir, stats_out)
    if as_json:
        click.echo(json.dumps(record, indent=2, default=float))
    else:
        compiled = next((r["compile"] for r in record["launches"] if r.get("compile")), {})
        click.echo(f"workload {workload} ({wl.description}); size {size}; {mode} mode"
                   + (f"; preset {preset}" if mode == "timing" else f"; compiled as preset {preset}")
                   + (f" ({compiled.get('toolchain', 'cuda13')} {compiled['arch']}"
                      + (f", -maxrregcount={compiled['maxrregcount']})" if compiled.get("maxrregcount") else ")")
                      if compiled else ""))
        console.functional_report(result, record["launches"])
        if mode == "timing":
            console.timing_report(result, record["config"]["gpu"]["kernel_launch_latency"])  # the run's own config
            if record.get("sampling"):
                from tlpsim.sampling.summary import describe

                click.echo(describe(record["sampling"]))
            console.plugin_report(record["stats"], record["plugins"])
            if energy_plot:
                from tlpsim.report.energy_plot import launch_figure

                try:
                    click.echo(launch_figure([r.stats for r in result.launches if r.stats is not None], energy_plot))
                except OSError as exc:
                    write_failure = write_failure or keep_results(record, f"energy plot {energy_plot}", exc)
        console.checks_report(result)
        click.echo(f"total wall time {result.wall_seconds:.2f} s")
        if out is not None:
            click.echo(f"run directory {out} (tlpsim report {out} -o report.html)")
    if write_failure is not None:
        raise write_failure
    if not result.verified:
        sys.exit(1)


def _keep_failed_run(partial, run_dir: str | None) -> None:
    """A run that ended in an error keeps what finished: its run directory with error.json."""
    if partial is None:
        return
    from tlpsim.report.rundir import write_failed_run_dir

    try:
        out = write_failed_run_dir(partial, run_dir)
    except OSError as exc:
        click.echo(f"warning: could not write the failed run's directory: {exc}", err=True)
        return
    n = len(partial.record.get("launches", []))
    click.echo(f"run directory {out} keeps the {n} launch{'es' if n != 1 else ''} that finished and the error "
               "(error.json)", err=True)


@main.command("workloads")
@click.argument("names", nargs=-1)
@click.option("--config", "preset", default="gtx480", show_default=True, help="Preset whose SM limits are used.")
@click.option("--size", default="tiny", show_default=True, type=click.Choice(SIZES),
              help="Input size whose launch shapes (CTAs, waves) are shown.")
@click.option("--measure", is_flag=True,
              help="Also simulate each workload at the size on the preset and show each kernel's measured "
                   "full-occupancy share (slow at study: minutes per workload).")
@click.option("--json", "as_json", is_flag=True)
@click.option("--markdown", is_flag=True,
              help="Print the generated part of docs/workloads.md (catalogue on --config at small and study, "
                   "study waves on every paper preset, exempt kernels, coverage).")
@click.option("--update", "update_doc", type=click.Path(dir_okay=False, exists=True), default=None,
              help="With --markdown: replace the generated part of this file (between its markers) instead "
                   "of printing it.")
@_friendly
def workloads_cmd(names: tuple[str, ...], preset: str, size: str, measure: bool, as_json: bool, markdown: bool,
                  update_doc: str | None) -> None:
    """List the built-in workloads (or NAMES): kernels, CTA shape, registers, shared memory,
    the limiting resource, maximum CTAs per SM, CTAs and CTA waves at a size on a preset,
    plus suite coverage. Launch shapes come from a shape-only pass (nothing is simulated
    unless --measure)."""
    from dataclasses import asdict

    from tlpsim.workloads import catalog as cat
    from tlpsim.workloads.study import EXEMPT

    if update_doc and not markdown:
        raise tlpsim.TlpsimError("--update FILE rewrites the generated part of FILE: use it with --markdown")
    if markdown:
        from tlpsim.workloads import catalog_doc

        text = catalog_doc.markdown(preset, list(names) or None)
        if update_doc:
            catalog_doc.update_file(Path(update_doc), text)
            click.echo(f"{update_doc}: generated part rewritten")
        else:
            click.echo(text, nl=False)
        return
    rows = cat.catalog(preset, list(names) or None, size)
    measured = {}
    if measure:
        from tlpsim.workloads.measure import measure as run_measure

        for name in dict.fromkeys(r.workload for r in rows):
            measured[name] = run_measure(name, size, preset)
    if as_json:
        out = {"preset": preset, "size": size, "kernels": [asdict(r) for r in rows], "coverage": cat.coverage(rows),
               "exempt": [{"workload": w, "kernel": k, "reason": why} for (w, k), why in EXEMPT.items()]}
        if measure:
            out["measured"] = {n: asdict(m) for n, m in measured.items()}
        click.echo(json.dumps(out, indent=2))
        return
    heads = ["workload", "kernel", "grid", "CTA", "regs", "smem B", "limited by", "max CTAs/SM", "CTAs", "waves"]
    if measure:
        heads += ["insts %", "full occ. (min SM)", "cycles"]
    body = []
    for r in rows:
        ctas = str(r.ctas) if r.ctas == r.ctas_max else f"{r.ctas}-{r.ctas_max}"
        waves = r.waves_cell
        if (r.workload, r.kernel) in EXEMPT:
            waves += " (exempt)"
        line = [r.workload, r.kernel, "x".join(map(str, r.grid)), "x".join(map(str, r.block)), r.regs_cell,
                r.shared_bytes, r.limited_by, r.ctas_per_sm, ctas, waves]
        if measure:
            k = measured[r.workload].kernels.get(r.kernel)
            line += [f"{100 * k.insts_share:.1f}", f"{100 * k.full_occupancy_min:.1f}%", k.cycles] if k else \
                ["-", "-", "-"]
        body.append(line)
    table(heads, body)
    click.echo(f"\nsize {size} on {preset}: waves = CTAs / (SMs x max CTAs/SM), of each kernel's smallest launch")
    if measure:
        for m in measured.values():
            verdict = "verified" if m.verified else "NOT VERIFIED"
            click.echo(f"{m.workload}: simulated in {m.wall_seconds:.1f} s, {verdict}")
    if not names:
        click.echo("")
        for what, wls in cat.coverage(rows).items():
            click.echo(f"{what}: {len(wls)} (need {cat.COVERAGE_TARGETS[what]}): {', '.join(wls)}")


@main.command("trace")
@click.argument("workload", metavar="WORKLOAD_OR_TRACE")
@click.option("--size", default="tiny", show_default=True, type=click.Choice(SIZES))
@click.option("--json", "as_json", is_flag=True)
@_friendly
def trace_cmd(workload: str, size: str, as_json: bool) -> None:
    """Summarise traces: a workload's launches, or a cached trace file (.trace)."""
    import tlpsim
    from tlpsim.workloads.registry import get_workload

    if workload.endswith((".trace", ".npz")):
        from tlpsim.trace.cache import BadTrace, read_trace_file

        path = Path(workload)
        if not path.is_file():
            raise tlpsim.TlpsimError(f"no such trace file: {path}")
        try:
            trace = read_trace_file(path, memory_rows=0)[0]  # summarised piece by piece
        except BadTrace as exc:
            raise tlpsim.TlpsimError(f"{path} is not a valid trace of this tlpsim version: it {exc}") from None
        summaries = [trace.summary()]
    else:
        with tlpsim.Device():
            result = get_workload(workload).execute(size)
        summaries = [rec.trace.summary() for rec in result.launches if rec.trace is not None]
    if as_json:
        click.echo(json.dumps(summaries, indent=2))
        return
    from tlpsim.report.console import trace_summary

    for s in summaries:
        trace_summary(s)


def _register_analyze() -> None:
    from tlpsim.cli_analyze import analyze_cmd
    from tlpsim.cli_plugins import COMMANDS as PLUGIN_COMMANDS
    from tlpsim.cli_sweep import COMMANDS

    main.add_command(analyze_cmd)
    from tlpsim.cli_experiment import experiment_group
    from tlpsim.cli_validate import validate_cmd

    main.add_command(experiment_group)
    main.add_command(validate_cmd)
    for cmd in COMMANDS + PLUGIN_COMMANDS:  # report, sweep, results, plot; plugins
        main.add_command(cmd)
    from tlpsim.cli_exec import COMMANDS as EXEC_COMMANDS

    for cmd in EXEC_COMMANDS:  # nvcc, exec
        main.add_command(cmd)
    from tlpsim.cli_cupy import COMMANDS as CUPY_COMMANDS

    for cmd in CUPY_COMMANDS:  # cupy
        main.add_command(cmd)


_register_analyze()

if __name__ == "__main__":
    main()
