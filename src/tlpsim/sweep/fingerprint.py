"""A fingerprint of the simulator's code: what a run's results depend on.

Experiments key their runs by it (`RunParams.simulator`), so a run simulated by older
code is never reused once the model changed, and an unchanged model never
re-simulates. It hashes every source file of the packages that decide a result —
front end, analyses, functional and timing models, policies (the built-in
plug-ins), power, configuration and presets, workloads and their CUDA sources, the
host API (arrays, kernels, the CUDA runtime and CuPy layers) and the session — and
leaves out what only presents, stores or guards results (`OUTSIDE_PARTS`, each with
its reason; tests/sweep/test_fingerprint.py keeps every part of the package in one
list or the other).

The sampler (`SAMPLER_PARTS`) has its own fingerprint, which keys sampled runs only:
a full-detail run never executes it, so a changed sampler re-simulates the sampled
runs and keeps the full-detail ones, which are most of a sampling validation's time."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["OUTSIDE_PARTS", "SAMPLER_PARTS", "SIMULATION_PARTS", "sampler_fingerprint", "simulator_fingerprint"]

SIMULATION_PARTS = ("analysis", "config", "frontend", "functional", "policies", "power", "timing",
                    "trace", "workloads", "cudart", "cupy", "array_ops.py", "cupy_sources.py", "device_array.py",
                    "device_pointer.py", "host.py", "host_kernels.py", "session.py", "errors.py")

#: parts of the package a run's figures do not depend on, and why
OUTSIDE_PARTS = {
    "report": "presents results", "experiments": "runs and presents experiments (their runs are keyed here)",
    "sweep": "runs and stores sweeps", "validate": "compares with references",
    "testing": "the plug-in conformance harness", "cli.py": "the command line",
    "cli_analyze.py": "the command line", "cli_cupy.py": "the command line", "cli_errors.py": "the command line",
    "cli_exec.py": "the command line", "cli_experiment.py": "the command line",
    "cli_plugins.py": "the command line", "cli_sampling.py": "the command line",
    "cli_sweep.py": "the command line", "cli_validate.py": "the command line",
    "cachefile.py": "checks cache entries' integrity (a damaged entry is refused, never used)",
    "paths.py": "probes whether a directory is writable", "source_files.py": "refuses non-text source files",
    "cuda_errors.py": "exception classes", "plugin_guard.py": "stops a failing or runaway plug-in",
    "_core.py": "chooses compiled or pure modules (statistics identical, tested)",
    "_core_build.json": "the compiled core's build record", "__init__.py": "re-exports",
}
_SUFFIXES = {".py", ".cu", ".cuh", ".h", ".toml", ".ptx"}
#: generated inside the package, not sources: the CUDA runtime library's build and its
#: toolkit headers (tlpsim.cudart.build, made on the first `tlpsim exec`); hashing them
#: made a checkout's keys change once it had run a CUDA program
_GENERATED = ("cudart/lib",)


#: what only a sampled run executes (tlpsim.session imports it when sampling is on)
SAMPLER_PARTS = ("sampling",)


@functools.lru_cache(maxsize=1)
def simulator_fingerprint() -> str:
    """16 hex digits of SHA-256 over the simulation sources (paths and contents)."""
    return _digest(SIMULATION_PARTS)


@functools.lru_cache(maxsize=1)
def sampler_fingerprint() -> str:
    """16 hex digits of SHA-256 over the sampler's sources: part of a sampled run's key."""
    return _digest(SAMPLER_PARTS)


def _generated(rel: Path) -> bool:
    return any(rel.as_posix().startswith(g + "/") for g in _GENERATED)


def _digest(parts: tuple[str, ...]) -> str:
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for part in parts:
        p = root / part
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in _SUFFIXES
                                               and not _generated(f.relative_to(root)))
        for f in files:
            h.update(str(f.relative_to(root)).encode())
            h.update(b"\0")
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()[:16]
