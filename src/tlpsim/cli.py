"""The `tlpsim` command line. Each command is a thin layer over the Python API;
user errors (TlpsimError) print one clear message and exit with status 2."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections import Counter
from pathlib import Path

import click

from tlpsim.errors import TlpsimError


def _friendly(fn):
    """Turn TlpsimError into a message (no traceback); other exceptions too, unless
    TLPSIM_DEBUG is set."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TlpsimError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the CLI must not show bare tracebacks
            if os.environ.get("TLPSIM_DEBUG"):
                raise
            click.echo(f"internal error: {type(exc).__name__}: {exc}\n"
                       "(set TLPSIM_DEBUG=1 to see the traceback, and please report it)", err=True)
            sys.exit(3)

    return wrapper


@click.group()
@click.version_option(package_name="tlpsim")
def main() -> None:
    """tlpsim: a Python simulator of NVIDIA-style GPUs for SM resource-management research."""


@main.command("compile")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--arch", default="sm_80", show_default=True, help="Target SM architecture (sm_75 or newer).")
@click.option("--maxrregcount", type=int, default=None, help="Register limit per thread passed to nvcc/ptxas.")
@click.option("--json", "as_json", is_flag=True, help="Print the resource usage as JSON.")
@_friendly
def compile_cmd(source: str, arch: str, maxrregcount: int | None, as_json: bool) -> None:
    """Compile a CUDA file to PTX and list its kernels with their resource usage."""
    from tlpsim.frontend.loader import load_program
    from tlpsim.frontend.names import qualified_name

    prog = load_program(Path(source), arch=arch, maxrregcount=maxrregcount)
    rows = []
    for name in prog.kernels:
        res = prog.resources.get(name)
        row = {"kernel": qualified_name(name), "mangled": name}
        row.update(res.to_dict() if res else {})
        rows.append(row)
    if as_json:
        click.echo(json.dumps({"source": source, "arch": arch, "kernels": rows}, indent=2))
        return
    cols = ("kernel", "registers", "shared_bytes", "local_bytes", "spill_stores", "const_bytes", "barriers")
    heads = ("kernel", "regs", "smem B", "local B", "spill B", "cmem B", "barriers")
    _table(heads, [[r.get(c, "-") for c in cols] for r in rows])


@main.command("ptx")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--cfg", "cfg_path", type=click.Path(dir_okay=False), help="Write the CFG as Graphviz DOT.")
@click.option("--kernel", default=None, help="Kernel for --cfg (default: every function, one graph each).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@_friendly
def ptx_cmd(source: str, cfg_path: str | None, kernel: str | None, as_json: bool) -> None:
    """Summarise a parsed PTX module: kernels, blocks, instruction mix."""
    from tlpsim.analysis.kernel_cfg import cfg_dot, kernel_cfg
    from tlpsim.frontend.loader import load_program

    prog = load_program(Path(source), resources=False)
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
                               "functions": summary}, indent=2))
        return
    click.echo(f"{source}: PTX {module.version}, target {','.join(module.target)}, "
               f"{len(module.kernels)} kernel(s), {len(funcs)} function(s) shown")
    _table(("function", "kind", "instrs", "blocks", "loops", "regs"),
           [[s["name"], s["kind"], s["instructions"], s["blocks"], s["loops"], s["registers_declared"]] for s in summary])
    total = Counter()
    for s in summary:
        total.update(s["mix"])
    n = sum(total.values()) or 1
    click.echo("instruction mix: " + ", ".join(f"{k} {v} ({100 * v / n:.0f}%)" for k, v in total.most_common()))
    if cfg_path:
        click.echo(f"CFG written to {cfg_path}")


def _table(heads, rows) -> None:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(heads)]
    click.echo("  ".join(str(h).ljust(w) for h, w in zip(heads, widths)))
    for r in rows:
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
