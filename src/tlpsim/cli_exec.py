"""CLI commands for whole CUDA programs: `tlpsim nvcc` (build a program against
tlpsim's CUDA runtime), `tlpsim toolkit` (a CUDA-shaped directory for Makefiles'
CUDA_DIR) and `tlpsim exec` (run it on the simulator). See docs/exec.md."""

from __future__ import annotations

import re
import sys

import click

from tlpsim.cli_errors import friendly as _friendly
from tlpsim.cli_plugins import plugin_option
from tlpsim.errors import TlpsimError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.I)


def parse_size(text: str) -> int:
    """'4GiB', '512M', '1073741824' -> bytes."""
    m = _SIZE.match(text)
    if m is None:
        raise TlpsimError(f"--device-memory {text!r}: not a size (write e.g. 4GiB, 512MiB or a byte count)")
    unit = (m.group(2) or "B").upper()[:1]
    scale = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[unit]
    value = int(float(m.group(1)) * scale)
    if not (1 << 20) <= value <= (1 << 40):
        raise TlpsimError(f"--device-memory {text!r}: must be between 1 MiB and 1 TiB")
    return value


@click.command("nvcc", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                         "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def nvcc_cmd(args: tuple[str, ...]) -> None:
    """Compile a CUDA program with the pinned nvcc against tlpsim's CUDA runtime (all
    nvcc options pass through; use as NVCC="tlpsim nvcc" in a Makefile)."""
    from tlpsim.cudart import nvcc

    sys.exit(_friendly(nvcc.main)(list(args)))


@click.command("toolkit")
def toolkit_cmd() -> None:
    """Print the directory of a CUDA toolkit laid out as NVIDIA's (bin/nvcc, include, lib64)
    that builds against tlpsim's runtime: `make CUDA_DIR=$(tlpsim toolkit)`."""
    from tlpsim.cudart import toolkit_dir

    click.echo(str(_friendly(toolkit_dir.ensure)()))


@click.command("exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--mode", default="functional", show_default=True, type=click.Choice(["functional", "timing"]))
@click.option("--config", "preset", default="gtx480", show_default=True,
              help="GPU preset: what the program sees as its device, and the timing model.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Config override (repeatable).")
@plugin_option
@click.option("--run-dir", type=click.Path(file_okay=False), default=None,
              help="Run directory (timing mode default: runs/exec-PROGRAM-PRESET-HASH/).")
@click.option("--device-memory", default="4GiB", show_default=True, help="Memory of the simulated device.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Kill the program after this many seconds (> 0).")
@click.option("--oob-reads", type=click.Choice(["error", "zero"]), default="error", show_default=True,
              help="Global loads outside every allocation: an illegal-address fault (as tlpsim checks), or read "
                   "0 and counted (what a GPU often tolerates, e.g. srad_v2 reading one row before its array).")
@click.option("--save-copies", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Save the bytes of every host<->device copy in a new folder (DIR/copies.tsv indexes them), "
                   "to check a program's results against a reference.")
@click.option("--nvcc", "nvcc_options", multiple=True, metavar="OPTION",
              help="Extra nvcc option when exec compiles .cu sources (repeatable), e.g. --nvcc=-O3.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_cmd(mode: str, preset: str, overrides: tuple, plugins: tuple, run_dir: str | None, device_memory: str,
             timeout: float | None, oob_reads: str, save_copies: str | None, nvcc_options: tuple,
             command: tuple) -> None:
    """Run an unmodified CUDA program on the simulator: `tlpsim exec [options] -- ./prog
    args`, or `tlpsim exec prog.cu -- args` to compile and run. Every kernel launch
    executes on the simulator; in timing mode each is simulated and recorded."""
    from tlpsim.config.overrides import parse_overrides
    from tlpsim.cudart.exec import run

    def go() -> int:
        return run(list(command), mode=mode, preset=preset, overrides=parse_overrides(overrides),
                   plugins=list(plugins), run_dir=run_dir, device_memory=parse_size(device_memory), timeout=timeout,
                   nvcc_options=list(nvcc_options), echo=lambda m: click.echo(m, err=True), oob_reads=oob_reads,
                   save_copies=save_copies)

    sys.exit(_friendly(go)())


COMMANDS = (nvcc_cmd, toolkit_cmd, exec_cmd)
