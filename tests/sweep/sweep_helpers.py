"""Helpers of the sweep tests: the CLI in a subprocess (with
this tree's sources), a small sweep spec, and run-record comparison without the
wall-clock fields."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import tlpsim

SRC = str(Path(tlpsim.__file__).resolve().parents[1])

# the interrupted sweep: 2 workloads x 2 seeds x 2 schedulers x 2 CTA limits = 16 tiny runs
SPEC = """
name = "sched"
workloads = ["vecadd", "reduction"]
sizes = ["tiny"]
presets = ["gtx480"]
seeds = [1, 2]
[overrides]
"sm.warp_scheduler" = ["lrr", "gto"]
"gpu.max_ctas_per_sm" = [4, 8]
[baseline]
"sm.warp_scheduler" = "lrr"
"""


def cli_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("TLPSIM_DEBUG", None)
    return env


def cli(*args: str, cwd: Path, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "tlpsim.cli", *args], cwd=cwd, env=cli_env(), capture_output=True,
                          text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"tlpsim {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def _default_sigint() -> None:
    # a test run started in the background by a non-interactive shell inherits SIGINT
    # ignored, and so would the CLI: Python then never raises KeyboardInterrupt
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli_popen(*args: str, cwd: Path) -> subprocess.Popen:
    """The CLI in its own session, with Ctrl-C (SIGINT) at its default whatever the test
    runner inherited, so the tests can interrupt it."""
    return subprocess.Popen([sys.executable, "-m", "tlpsim.cli", *args], cwd=cwd, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_default_sigint)


# the sweep shared by the other tests (local pool, Dask, results, plot): 8 tiny runs
SMALL_SPEC = """
name = "sched"
workloads = ["vecadd", "reduction"]
sizes = ["tiny"]
seeds = [1, 2]
[overrides]
"sm.warp_scheduler" = ["lrr", "gto"]
"gpu.max_ctas_per_sm" = 4
[baseline]
"sm.warp_scheduler" = "lrr"
"""

_VOLATILE = {"wall_seconds", "timing_wall_seconds", "mthread_inst_per_s"}


def deterministic(obj):
    """A record without what depends on the host's speed (wall-clock fields)."""
    if isinstance(obj, dict):
        return {k: deterministic(v) for k, v in obj.items() if k not in _VOLATILE}
    if isinstance(obj, list):
        return [deterministic(v) for v in obj]
    return obj
