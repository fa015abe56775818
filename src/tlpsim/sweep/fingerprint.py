"""A fingerprint of the simulator's code: what a run's results depend on.

Experiments key their runs by it (`RunParams.simulator`), so a run simulated by older
code is never reused once the model changed, and an unchanged model never
re-simulates. It hashes every source file of the packages that decide a result —
front end, analyses, functional and timing models, policies (the built-in
plug-ins), power, configuration and presets, workloads and their CUDA sources, the
host API and the session — and leaves out what only presents results (report,
sweep, experiments, the CLI)."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["SIMULATION_PARTS", "simulator_fingerprint"]

SIMULATION_PARTS = ("analysis", "config", "frontend", "functional", "policies", "power", "timing", "trace",
                    "workloads", "host.py", "session.py", "errors.py")
_SUFFIXES = {".py", ".cu", ".cuh", ".h", ".toml", ".ptx"}


@functools.lru_cache(maxsize=1)
def simulator_fingerprint() -> str:
    """16 hex digits of SHA-256 over the simulation sources (paths and contents)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for part in SIMULATION_PARTS:
        p = root / part
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in _SUFFIXES)
        for f in files:
            h.update(str(f.relative_to(root)).encode())
            h.update(b"\0")
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()[:16]
