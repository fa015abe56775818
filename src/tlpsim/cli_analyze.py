"""``tlpsim analyze``: the compiler analyses of a kernel at a glance.

For every kernel of a ``.cu``/``.ptx`` file or built-in workload (or the one
``--kernel`` names): registers (ours vs ptxas) and max live registers; RegLess
regions with their table and statistics (beside RegLess Table 2's range);
EXPARS bundles; RFV release-flag counts and metadata; GPUDuet switch-point
context sizes.  ``--plot`` draws the live-register curve over the instruction
stream with region boundaries marked (RegLess Figure 5); ``--dot`` writes the
CFG with blocks coloured by region.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tlpsim.cli_errors import friendly
from tlpsim.errors import TlpsimError

__all__ = ["analyze_cmd", "analyze_source", "kernel_report", "plot_live_curves", "region_dot", "sparkline"]

#: RegLess Table 2: average static instructions per region over Rodinia (min, max)
REGLESS_TABLE2_INSTRUCTIONS = (3.3, 16.0)
_PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
            "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")


def _compile_options(config) -> dict[str, Any]:
    """How a preset compiles CUDA (as a Device on it would): toolchain, arch, maxrregcount."""
    g = config.gpu
    return {"toolchain": g.toolchain, "arch": g.cuda11_arch if g.toolchain == "cuda11" else g.arch,
            "maxrregcount": g.maxrregcount}


def _load(target: str, config):
    """A Program from a .cu/.ptx path or a built-in workload name, compiled as `config` does."""
    from tlpsim.frontend.loader import load_program

    from tlpsim.source_files import check_source_file

    opts = _compile_options(config)
    path = Path(target)
    if path.suffix in (".cu", ".ptx", ".cuh") or path.is_file():
        if not path.is_file():
            raise TlpsimError(f"no such file: {target}")
        if path.suffix not in (".cu", ".ptx"):
            raise TlpsimError(f"{target}: expected a .cu or .ptx file (or a built-in workload name)")
        return load_program(check_source_file(path), **opts), str(path)
    from tlpsim.workloads.registry import get_workload

    wl = get_workload(target)  # raises TlpsimError naming the known workloads
    return load_program(wl.source_path, **opts), f"{target} ({wl.source_path.name})"


def _analyzed(prog, name: str, config=None):
    """(analysed kernel, packed register count, what sizes the RF): the kernel on the
    register numbering the timing model uses on `config` (a GPUConfig; None, or no
    ptxas count: the packed allocation)."""
    from tlpsim.analysis.analyzed import analyze
    from tlpsim.session import register_numbering

    ak = analyze(prog.module, name)
    res = prog.resources.get(name)
    packed = ak.allocation.n_regs
    if config is None or res is None:
        return ak, packed, "allocation"
    num = register_numbering(config, ak.fn, res.registers, ak)
    return num.analyzed, packed, num.sized_by


def kernel_report(prog, name: str, config=None) -> dict[str, Any]:
    """Everything ``analyze`` shows about one kernel, as plain data, on the register
    numbering the timing model uses on `config` (a GPUConfig; None: the packed allocation)."""
    from tlpsim.analysis.switch_points import context_summary
    from tlpsim.frontend.names import qualified_name

    ak, packed, sized_by = _analyzed(prog, name, config)
    res = prog.resources.get(name)
    live, alloc = ak.liveness, ak.allocation
    regions, bundles, release = ak.regions, ak.bundles, ak.release_points
    n = len(ak.fn.instructions)
    return {
        "kernel": qualified_name(name), "mangled": name, "instructions": n, "blocks": len(ak.fn.blocks),
        "registers": {"ours": alloc.n_regs, "ptxas": res.registers if res is not None else None,
                      "packed": packed, "sized_by": sized_by,
                      "max_live": live.max_pressure, "predicates": alloc.pred_regs},
        "live_curve": [live.count_units(live.warp_live_in(i, rf_only=True)) for i in range(n)],
        "regions": {
            "params": {"max_live": regions.params.max_live, "bank_capacity": regions.params.bank_capacity,
                       "n_banks": regions.params.n_banks, "min_length": regions.params.min_length},
            "summary": dict(regions.summary()),
            "table": [{"index": r.index, "block": r.block, "start": r.start, "end": r.end, "length": len(r),
                       "max_live": r.max_live, "inputs": r.input_regs, "outputs": r.output_regs,
                       "interior": r.interior_regs, "preload": list(r.preload),
                       "invalidate": sorted(r.invalidate), "ends": r.ends, "over_limit": r.over_limit}
                      for r in regions],
        },
        "bundles": {
            "summary": dict(bundles.summary()),
            "table": [{"index": b.index, "block": b.block, "start": b.start, "end": b.end, "length": len(b),
                       "registers": len(b.registers), "spm_registers": list(b.spm_registers),
                       "prefetch": list(b.prefetch), "ends": b.ends, "over_budget": b.over_budget}
                      for b in bundles],
        },
        "release": {
            "summary": dict(release.summary()),
            "branch_releases": [{"block": br.block, "index": br.index, "registers": sorted(br.registers),
                                 "phys": list(br.phys), "reconvergence": br.reconvergence}
                                for br in release.branch_releases],
            "renamed": sorted(release.renaming.renamed),
        },
        "switch_points": dict(context_summary(ak.switch_points)),
    }


def analyze_source(target: str, kernel: str | None = None,
                   config: Any = "gtx480") -> tuple[Any, str, list[dict[str, Any]]]:
    """Load ``target`` compiled as preset/GPUConfig ``config`` compiles it and report on
    its kernels (all that can be flattened, or ``kernel``) on that config's register
    numbering: ``(program, label, reports)``."""
    from tlpsim.config.loader import load_config
    from tlpsim.errors import UnsupportedPTX

    config = load_config(config) if isinstance(config, str) else config
    prog, label = _load(target, config)
    if kernel is not None:
        names = [prog.module.get_kernel(kernel).name]  # KernelNotFound is a TlpsimError
    else:
        names = list(prog.kernels)
    if not names:
        raise TlpsimError(f"{label}: no kernels")
    reports, skipped = [], []
    for name in names:
        try:
            reports.append(kernel_report(prog, name, config))
        except UnsupportedPTX as e:
            if kernel is not None:
                raise TlpsimError(f"kernel {kernel} cannot be analysed: {e}") from e
            skipped.append(name)
    if not reports:
        raise TlpsimError(f"{label}: no kernel can be analysed (calls to external functions?): "
                          + ", ".join(skipped))
    return prog, label, reports


# ------------------------------------------------------------------ output


def plot_live_curves(reports: list[dict[str, Any]], path: str | Path) -> None:
    """Live registers per instruction with region boundaries (RegLess Figure 5)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise TlpsimError("--plot needs matplotlib: pip install matplotlib") from e
    fig, axes = plt.subplots(len(reports), 1, figsize=(10, 2.6 * len(reports)), squeeze=False)
    for ax, rep in zip(axes[:, 0], reports):
        curve = rep["live_curve"]
        xs = range(len(curve))
        for k, r in enumerate(rep["regions"]["table"]):
            if k % 2:
                ax.axvspan(r["start"] - 0.5, r["end"] - 0.5, color="0.92", lw=0)
            ax.hlines(r["max_live"], r["start"] - 0.5, r["end"] - 0.5, colors="tab:orange", lw=1.5,
                      label="region OSU peak" if k == 0 else None)
            if k:
                ax.axvline(r["start"] - 0.5, color="tab:red", lw=0.6, alpha=0.6)
        ax.step(xs, curve, where="mid", color="tab:blue", lw=1.2, label="live registers (warp)")
        s = rep["regions"]["summary"]
        ax.set_title(f"{rep['kernel']}: {s['regions']} regions, {s['avg_instructions']:.1f} instr/region",
                     fontsize=9)
        ax.set_xlim(-0.5, max(len(curve), 1) - 0.5)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("registers")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("static instruction")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
    except (OSError, ValueError) as e:
        raise TlpsimError(f"cannot write plot {path}: {e}") from e
    finally:
        plt.close(fig)


def region_dot(prog, reports: list[dict[str, Any]], config=None) -> str:
    """The CFGs (one digraph per kernel) with each block coloured by its region(s):
    one colour per region; a block split into several regions shades from its
    first region's colour to its last's."""
    from tlpsim.analysis.kernel_cfg import cfg_dot

    out = []
    for rep in reports:
        ak = _analyzed(prog, rep["mangled"], config)[0]
        by_block: dict[int, list[int]] = {}
        for r in ak.regions:
            by_block.setdefault(r.block, []).append(r.index)
        colour = {}
        for b, idx in by_block.items():
            first, last = _PALETTE[idx[0] % len(_PALETTE)], _PALETTE[idx[-1] % len(_PALETTE)]
            colour[b] = first if len(idx) == 1 else f"{first}:{last}"
        text = cfg_dot(ak.fn, colour)
        notes = "".join(f"// block {b}: regions {', '.join(map(str, idx))}\n" for b, idx in sorted(by_block.items()))
        out.append(notes + text)
    return "".join(out)


def _table(heads, rows) -> None:
    widths = [max([len(str(h))] + [len(str(r[i])) for r in rows]) for i, h in enumerate(heads)]
    click.echo("    " + "  ".join(str(h).ljust(w) for h, w in zip(heads, widths)))
    for r in rows:
        click.echo("    " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)))


def sparkline(curve: list[int], starts: list[int], width: int = 100) -> tuple[str, str]:
    """The curve in at most ``width`` columns (each the maximum of its instructions)
    and, below it, ``|`` under every column where a region starts."""
    if not curve:
        return "", ""
    cols = min(width, len(curve))
    edges = [len(curve) * c // cols for c in range(cols + 1)]
    top = max(curve) or 1
    ticks = " ▁▂▃▄▅▆▇█"
    line = "".join(ticks[round(8 * max(curve[edges[c]:edges[c + 1]]) / top)] for c in range(cols))
    marks = ["."] * cols
    for st in starts:
        marks[next(c for c in range(cols) if edges[c] <= st < edges[c + 1])] = "|"
    return line, "".join(marks)


def _print(label: str, rep: dict[str, Any]) -> None:
    reg = rep["registers"]
    click.echo(f"{label}: kernel {rep['kernel']}  ({rep['instructions']} instructions, {rep['blocks']} blocks)")
    click.echo(f"  registers: {reg['ours']} named (sized by {reg['sized_by']}), ptxas "
               f"{reg['ptxas'] if reg['ptxas'] is not None else '?'}, packed allocation {reg['packed']}, "
               f"max live {reg['max_live']} (32-bit), predicates {reg['predicates']}")
    line, marks = sparkline(rep["live_curve"], [r["start"] for r in rep["regions"]["table"]])
    click.echo(f"  live registers (max {max(rep['live_curve'], default=0)}) over the instructions, "
               "| = region start:")
    click.echo(f"    {line}\n    {marks}")
    s, p = rep["regions"]["summary"], rep["regions"]["params"]
    lo, hi = REGLESS_TABLE2_INSTRUCTIONS
    click.echo(f"  RegLess regions: {s['regions']}, {s['avg_instructions']:.1f} instr/region "
               f"(RegLess Table 2: {lo}-{hi}), avg live {s['avg_live']:.1f} (max {s['max_live']}), "
               f"avg inputs {s['avg_inputs']:.1f}; limits max_live {p['max_live']}, "
               f"{p['bank_capacity']}/bank x {p['n_banks']}, min length {p['min_length']}; "
               f"metadata +{100 * s['code_size_increase']:.0f}%")
    _table(("#", "block", "instrs", "len", "live", "in", "out", "interior", "ends"),
           [[r["index"], r["block"], f"{r['start']}-{r['end'] - 1}", r["length"], r["max_live"], r["inputs"],
             r["outputs"], r["interior"], r["ends"] + ("!" if r["over_limit"] else "")]
            for r in rep["regions"]["table"]])
    b = rep["bundles"]["summary"]
    click.echo(f"  EXPARS bundles: {b['bundles']}, {b['avg_instructions']:.1f} instr/bundle, Start_Reg "
               f"{b['start_reg']} of {b['n_regs']}, OC budget {b['budget']}/bundle, avg SPM registers "
               f"{b['avg_spm_registers']:.1f}, avg prefetch {b['avg_prefetch']:.1f}")
    _table(("#", "block", "instrs", "len", "regs", "spm", "prefetch", "ends"),
           [[t["index"], t["block"], f"{t['start']}-{t['end'] - 1}", t["length"], t["registers"],
             len(t["spm_registers"]), len(t["prefetch"]), t["ends"] + ("!" if t["over_budget"] else "")]
            for t in rep["bundles"]["table"]])
    r = rep["release"]["summary"]
    click.echo(f"  RFV release: {r['release_flags']} operand flags ({r['release_flags_renamed']} on renamed "
               f"registers), {r['branch_releases']} branch lists releasing {r['branch_released_regs']}, "
               f"{r['held_by_loops']} held by loops, {r['dead_writes']} dead writes; flag instructions "
               f"{r['flag_instructions']} = {r['pir_instructions']} pir + {r['pbr_instructions']} pbr "
               f"(+{100 * r['code_size_increase']:.1f}% code); renaming {r['renamed']} of {reg['ours']} "
               f"(table capacity {r['renaming_capacity']}/warp)")
    sp = rep["switch_points"]
    click.echo(f"  GPUDuet switch points: {sp['points']}, context {sp['context_registers']} of "
               f"{sp['allocated_registers']} registers ({100 * sp['reduction']:.0f}%), "
               f"{sp['context_bytes_per_warp']} B/warp")


@click.command("analyze")
@click.argument("target", metavar="FILE_OR_WORKLOAD")
@click.option("--kernel", default=None, help="Only this kernel (mangled, plain or qualified name).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write the live-register curves with region boundaries (PNG, needs matplotlib).")
@click.option("--dot", "dot_path", type=click.Path(dir_okay=False), default=None,
              help="Write the CFG(s) as Graphviz DOT, blocks coloured by region.")
@click.option("--config", "preset", default="gtx480", show_default=True,
              help="Preset (or TOML) whose toolchain compiles the kernels and whose register numbering "
                   "(sm.register_count) the analyses run on.")
@friendly
def analyze_cmd(target: str, kernel: str | None, as_json: bool, plot_path: str | None, dot_path: str | None,
                preset: str) -> None:
    """Registers, RegLess regions, EXPARS bundles, RFV release flags and GPUDuet
    switch points of the kernels of a .cu/.ptx file or a built-in workload, as the
    timing model on --config sees them (its toolchain, its register numbering)."""
    from tlpsim.config.loader import load_config

    if plot_path:
        from tlpsim.report.outputs import check_figure

        check_figure(plot_path, "plot", "--plot")
    config = load_config(preset)
    prog, label, reports = analyze_source(target, kernel, config)
    if plot_path:
        plot_live_curves(reports, plot_path)
    if dot_path:
        try:
            Path(dot_path).write_text(region_dot(prog, reports, config))
        except OSError as e:
            raise TlpsimError(f"cannot write {dot_path}: {e.strerror or e}") from None
    if as_json:
        click.echo(json.dumps({"source": label, "config": preset, "compile": _compile_options(config),
                               "kernels": reports}, indent=2))
        return
    o = _compile_options(config)
    click.echo(f"compiled as {preset} does: {o['toolchain']} {o['arch']}"
               + (f", maxrregcount {o['maxrregcount']}" if o["maxrregcount"] else ""))
    for rep in reports:
        _print(label, rep)
    if plot_path:
        click.echo(f"plot written to {plot_path}")
    if dot_path:
        click.echo(f"CFG written to {dot_path}")
