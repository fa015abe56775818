"""The built-in workload registry: each workload is CUDA C source, a host driver
using the CuPy-compatible API, a NumPy reference and a verification tolerance,
at four input sizes (tiny, small, study, paper; `study` runs each main kernel for at least four
CTA waves on every paper preset, see `workloads.study`), with inputs generated from a seed."""

from __future__ import annotations

import functools
import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from tlpsim.errors import TlpsimError

SIZES = ("tiny", "small", "study", "paper")
KERNEL_DIR = Path(__file__).resolve().parent / "kernels"


@dataclass
class Check:
    """Outcome of comparing a device result with its reference."""

    name: str
    ok: bool
    max_error: float
    tolerance: float
    detail: str = ""  # human-readable error summary


@dataclass
class WorkloadResult:
    workload: str
    size: str
    checks: list[Check] = field(default_factory=list)
    launches: list = field(default_factory=list)
    wall_seconds: float = 0.0

    @property
    def verified(self) -> bool:
        return all(c.ok for c in self.checks) and bool(self.checks)


@dataclass
class Workload:
    """A registered workload: `run(size, rng) -> list[Check]` drives the device."""

    name: str
    description: str
    source: str                      # file name under workloads/kernels
    run: Callable[[str, np.random.Generator], list[Check]]
    stands_for: tuple[str, ...] = ()  # benchmark names in the papers this one stands in for
    traits: tuple[str, ...] = ()      # e.g. "2d-grid", "divergent", "cache-sensitive", "multi-kernel"
    variant_of: str = ""              # the workload this one re-runs with other parameters ("" if none)
    params: tuple[tuple[str, object], ...] = ()  # the keyword arguments a variant passes to its base's driver

    @property
    def source_path(self) -> Path:
        return KERNEL_DIR / self.source

    def execute(self, size: str = "small", seed: int = 1) -> WorkloadResult:
        from tlpsim.host import Device

        if size not in SIZES:
            raise TlpsimError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
        dev = Device.current()
        first = len(dev.launches)
        t0 = time.perf_counter()
        checks = self._checks(size, seed)
        return WorkloadResult(self.name, size, checks, dev.launches[first:], time.perf_counter() - t0)

    def _checks(self, size: str, seed: int) -> list[Check]:
        return self.run(size, np.random.default_rng(seed))


WORKLOADS: dict[str, Workload] = {}


def register(name: str, description: str, source: str, *, stands_for=(), traits=()):
    """Decorator registering a driver function `run(size, rng) -> list[Check]`."""

    def deco(fn):
        if name in WORKLOADS:
            raise RuntimeError(f"workload {name!r} registered twice")
        WORKLOADS[name] = Workload(name, description, source, fn, tuple(stands_for), tuple(traits))
        return fn

    return deco


def register_variant(base: str, name: str, description: str, *, stands_for=(), traits=None, **params):
    """Register `name` as `base`'s driver run with keyword `params` (e.g. block=(16, 16)).

    A variant is a workload in its own right: its name is what `tlpsim run`, sweeps,
    run keys and experiments carry, so two parameter sets never share a cached result,
    and the base's results are untouched. It shares the base's sizes and source file.
    Call it in the base's module, after the base is registered."""
    if base not in WORKLOADS:
        raise RuntimeError(f"variant {name!r}: base workload {base!r} is not registered")
    if name in WORKLOADS:
        raise RuntimeError(f"workload {name!r} registered twice")
    if not params:
        raise RuntimeError(f"variant {name!r} of {base!r} sets no parameter")
    wl = WORKLOADS[base]
    WORKLOADS[name] = Workload(name, description, wl.source, functools.partial(wl.run, **params),
                               tuple(stands_for), tuple(wl.traits if traits is None else traits),
                               variant_of=base, params=tuple(sorted(params.items())))


def load_workloads() -> dict[str, Workload]:
    from tlpsim import workloads

    for mod in pkgutil.iter_modules(workloads.__path__):
        if mod.name not in ("registry",):
            importlib.import_module(f"tlpsim.workloads.{mod.name}")
    return WORKLOADS


def get_workload(name: str) -> Workload:
    """A registered workload, or a concurrent mix "a+b" of registered ones (`workloads.mix`)."""
    table = load_workloads()
    if name not in table and "+" in name:
        from tlpsim.workloads.mix import mix_workload

        return mix_workload(name, table)
    if name not in table:
        raise TlpsimError(f"unknown workload {name!r}; available: {', '.join(sorted(table))}")
    return table[name]


def compare(name: str, got: np.ndarray, ref: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> Check:
    """Check `got` against `ref` elementwise: |got - ref| <= atol + rtol * |ref| (exact
    when both tolerances are 0). `max_error` is the worst |got-ref| / (atol + rtol*|ref|),
    so the check passes when it is <= 1 (`tolerance`)."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return Check(name, False, float("inf"), 1.0, f"shape {got.shape} != reference {ref.shape}")
    if rtol == 0 and atol == 0:
        if got.dtype.kind in "iub" and ref.dtype.kind in "iub":
            bad = got.astype(np.int64) != ref.astype(np.int64)
        else:
            bad = ~((got == ref) | (np.isnan(got.astype(np.float64)) & np.isnan(ref.astype(np.float64))))
        n_bad = int(bad.sum())
        return Check(name, n_bad == 0, float(n_bad), 0.0, f"{n_bad} of {got.size} elements differ (exact check)")
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    err = np.abs(g - r)
    both_nan = np.isnan(g) & np.isnan(r)
    ratio = np.where(both_nan, 0.0, err / (atol + rtol * np.abs(r)))
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    worst = float(ratio.max()) if ratio.size else 0.0
    rel = err / np.maximum(np.abs(r), 1e-30)
    detail = (f"max |err| {float(np.nanmax(err)) if err.size else 0:.3g}, "
              f"max rel err {float(np.nanmax(rel)) if rel.size else 0:.3g} (rtol {rtol:g}, atol {atol:g})")
    return Check(name, worst <= 1.0, worst, 1.0, detail)


def kernel_source(workload_source: str) -> str:
    return (KERNEL_DIR / workload_source).read_text()
