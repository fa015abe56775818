"""`tlpsim cupy -- CMD...`: run a Python program that imports cupy, unchanged, on the
simulated GPU (tlpsim.cupy.hook). See docs/cupy.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click

from tlpsim.cli_errors import friendly as _friendly
from tlpsim.errors import TlpsimError


@click.command("cupy", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--config", "preset", default="gtx480", show_default=True,
              help="GPU preset: the device the program sees and the timing model.")
@click.option("--mode", default="functional", show_default=True, type=click.Choice(["functional", "timing"]),
              help="functional: kernels execute; timing: each launch is also simulated cycle by cycle.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Config override (repeatable).")
@click.option("--summary-json", type=click.Path(dir_okay=False), default=None,
              help="Append each Python process's launch summary to this file (one JSON object a line).")
@click.option("--fetch-sources", is_flag=True,
              help="Download the pinned CuPy source package (its headers and tests) into tlpsim's cache first.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def cupy_cmd(preset: str, mode: str, overrides: tuple, summary_json: str | None, fetch_sources: bool,
             command: tuple) -> None:
    """Run CMD with `import cupy` resolved to tlpsim's CuPy API: `tlpsim cupy [options] --
    python script.py`. Kernels run on the simulated GPU; array operations run on the
    host with NumPy. A launch summary is printed (stderr) when each Python process exits."""
    from tlpsim.config.loader import load_config
    from tlpsim.config.overrides import parse_override
    from tlpsim.cupy.hook import ENV_CONFIG, ENV_MODE, ENV_SET, ENV_SUMMARY, boot_dir

    def go() -> int:
        pairs = dict(parse_override(o) for o in overrides)
        load_config(preset, overrides=pairs)  # a bad preset or key fails here, named, before the program runs
        if fetch_sources:
            from tlpsim.cupy_sources import fetch

            fetch(echo=lambda m: click.echo(m, err=True))
        if not command:
            if fetch_sources:
                return 0
            raise TlpsimError("tlpsim cupy: give the command to run after `--`, e.g. "
                              "`tlpsim cupy -- python script.py`")
        cmd = list(command)
        if cmd[0] in ("python", "python3"):
            cmd[0] = sys.executable  # the Python tlpsim is installed in
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (boot_dir(), env.get("PYTHONPATH", "")) if p)
        env[ENV_CONFIG], env[ENV_MODE], env[ENV_SET] = preset, mode, json.dumps(pairs)
        if summary_json:
            env[ENV_SUMMARY] = os.path.abspath(summary_json)
        try:
            return subprocess.run(cmd, env=env, check=False).returncode
        except FileNotFoundError:
            raise TlpsimError(f"tlpsim cupy: command not found: {cmd[0]}") from None
        except PermissionError:
            raise TlpsimError(f"tlpsim cupy: {cmd[0]} is not executable") from None

    sys.exit(_friendly(go)())


COMMANDS = (cupy_cmd,)
