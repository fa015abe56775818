"""The CUDA program corpus (tests/cudart/programs/) built once per session with
`tlpsim nvcc` (binaries cached by source digest in the compile cache, as `tlpsim
exec prog.cu` caches them) and helpers to run them under `tlpsim exec`."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"
TLPSIM = [sys.executable, "-m", "tlpsim.cli"]

# name -> (sources, extra nvcc options)
BUILDS: dict[str, tuple[list[str], list[str]]] = {
    p.stem: ([p.name], ["-O2"]) for p in sorted(PROGRAMS.glob("*.cu"))
}
BUILDS["curand_host"] = (["curand_host.cu"], ["-O2", "-lcurand"])  # tlpsim's host cuRAND library
BUILDS["curand_host_order"] = (["curand_host_order.cu"], ["-O2", "-lcurand"])
BUILDS["separate"] = (["separate/stencil.cu", "separate/scale.cu"], [])
BUILDS["separate_rdc"] = (["separate/stencil.cu", "separate/scale.cu"], ["-rdc=true", "-DUSE_RDC"])


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def run_exec(*args, timeout: float = 600, cwd=None) -> Result:
    proc = subprocess.run([*TLPSIM, "exec", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _build(name: str) -> Path:
    from tlpsim.cudart.exec import compile_program

    sources, options = BUILDS[name]
    return compile_program([str(PROGRAMS / s) for s in sources], options, echo=lambda m: None)


@pytest.fixture(scope="session")
def binaries() -> dict[str, Path]:
    """Every corpus program, built (two at a time: the machine has two cores)."""
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(BUILDS, pool.map(_build, BUILDS)))
