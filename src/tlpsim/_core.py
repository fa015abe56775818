"""The compiled core: the timing model's hot modules, compiled by mypyc from these
same Python sources when tlpsim is installed (setup.py), and the choice at import
time between the compiled modules and their Python sources.

The Python sources are the reference and stay runnable: `TLPSIM_PURE_PYTHON=1`
runs them, and so does an install without the compiled modules. A compiled module
is used only when every source it was built from is unchanged (the build records
their SHA-256 in `_core_build.json`), so editing `timing/sm.py` in a checkout never
runs a stale binary: tlpsim warns once and runs the sources until the next
`pip install -e .` (or `make setup`) rebuilds them.

This module imports nothing from tlpsim and nothing outside the standard library:
setup.py reads `COMPILED_MODULES` from it before anything is installed.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

# mypyc compiles these as one group (cross-module calls are direct C calls)
COMPILED_MODULES: tuple[str, ...] = (
    "tlpsim.timing.iheap",
    "tlpsim.timing.buckets",
    "tlpsim.timing.l1banks",
    "tlpsim.timing.casloop",
    "tlpsim.timing.subcore_path",
    "tlpsim.timing.duering",
    "tlpsim.timing.engine",
    "tlpsim.timing.queues",
    "tlpsim.timing.flits",
    "tlpsim.timing.icnt",
    "tlpsim.timing.mem_types",
    "tlpsim.timing.addrmap",
    "tlpsim.timing.cache_policy",
    "tlpsim.timing.set_index",
    "tlpsim.timing.mshr",
    "tlpsim.timing.cache",
    "tlpsim.timing.cache_port",
    "tlpsim.timing.l2",
    "tlpsim.timing.partition",
    "tlpsim.timing.dram",
    "tlpsim.timing.stats",
    "tlpsim.timing.static",
    "tlpsim.timing.warp",
    "tlpsim.timing.ldst_types",
    "tlpsim.timing.ldst",
    "tlpsim.timing.regbanks",
    "tlpsim.timing.units",
    "tlpsim.timing.events",
    "tlpsim.timing.writeback",
    "tlpsim.timing.iprefetch",
    "tlpsim.timing.fetch",
    "tlpsim.timing.barriers",
    "tlpsim.timing.issue",
    "tlpsim.timing.slots",
    "tlpsim.timing.sm",
)

BUILD_RECORD = "_core_build.json"
PURE_ENV = "TLPSIM_PURE_PYTHON"

_PKG_DIR = Path(__file__).resolve().parent


def source_path(module: str, root: Path = _PKG_DIR.parent) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extension_of(module: str, root: Path) -> Path | None:
    src = source_path(module, root)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        p = src.with_suffix(suffix)
        if p.exists():
            return p
    return None


class CoreStatus:
    """Which implementation of the compiled modules this process runs, and why."""

    def __init__(self, compiled: bool, reason: str) -> None:
        self.compiled = compiled
        self.reason = reason

    def to_dict(self) -> dict:
        return {"compiled": self.compiled, "reason": self.reason}

    def __repr__(self) -> str:
        return f"CoreStatus(compiled={self.compiled}, reason={self.reason!r})"


def decide(pkg_dir: Path = _PKG_DIR) -> CoreStatus:
    """Whether the compiled modules of the tlpsim package at `pkg_dir` can be used."""
    if os.environ.get(PURE_ENV, "").strip() not in ("", "0"):
        return CoreStatus(False, f"{PURE_ENV} is set")
    root = pkg_dir.parent
    exts = {m: _extension_of(m, root) for m in COMPILED_MODULES}
    if not any(exts.values()):
        return CoreStatus(False, "not built (installed without the mypyc build)")
    missing = [m for m, p in exts.items() if p is None]
    if missing:
        return CoreStatus(False, f"incomplete build: no compiled module for {', '.join(missing)}")
    record = pkg_dir / BUILD_RECORD
    try:
        built = json.loads(record.read_text())["sources"]
    except (OSError, ValueError, KeyError) as exc:
        return CoreStatus(False, f"no readable build record {record}: {exc}")
    changed = [m for m in COMPILED_MODULES
               if built.get(m) != source_digest(source_path(m, root))]
    if changed:
        names = ", ".join(str(source_path(m, root).relative_to(root)) for m in changed)
        warnings.warn(f"tlpsim: {names} changed since the compiled core was built; running the Python "
                      f"sources (slower) until it is rebuilt with `pip install -e .` or `make setup`",
                      RuntimeWarning, stacklevel=3)
        return CoreStatus(False, f"sources changed since the build: {names}")
    return CoreStatus(True, "mypyc build matches the sources")


class _SourceFinder:
    """Meta-path finder that loads the compiled modules from their .py sources
    (placed first, so the extension beside each source is never picked)."""

    def find_spec(self, name: str, path: object = None, target: object = None):
        if name not in COMPILED_MODULES:
            return None
        return importlib.util.spec_from_file_location(name, source_path(name))


STATUS: CoreStatus | None = None


def select() -> CoreStatus:
    """Decide once per process, before any compiled module is imported."""
    global STATUS
    if STATUS is None:
        STATUS = decide()
        if not STATUS.compiled:
            loaded = [m for m in COMPILED_MODULES if m in sys.modules]
            if loaded:  # too late to choose: report what is actually running
                STATUS = CoreStatus(bool(getattr(sys.modules[loaded[0]], "__file__", "").endswith(
                    tuple(importlib.machinery.EXTENSION_SUFFIXES))), STATUS.reason)
            else:
                sys.meta_path.insert(0, _SourceFinder())
    return STATUS


def status() -> CoreStatus:
    return select()
