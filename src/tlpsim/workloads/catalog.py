"""The workload catalogue: every registered workload with its kernels, CTA shape,
registers, shared memory, CTAs per SM and the limiting resource on a preset (the
columns of EXPARS Table 3), the CTA waves each kernel runs at a size, and the
coverage counts the experiments need.

Launch shapes come from a shape-only pass of the workload's driver at the size
(`Device(dry_run=True)`: every launch is checked, compiled as the preset compiles it
and recorded, none is executed), so the table describes the code as it is at any size
without simulating it. Grids and CTA shapes are exact wherever the driver computes
them from the size (every built-in workload); a launch count that depends on results
(bfs's levels) is that of a pass whose kernels wrote nothing. A driver whose host code
fails on outputs no kernel wrote (kmeans reads its memberships back) is run
functionally instead (exact, slower).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tlpsim.timing.occupancy import SMLimits, occupancy

# what the papers' experiments need from the suite: trait or limiter -> minimum count
COVERAGE_TARGETS = {
    "limited by registers": 6,
    "limited by shared memory": 3,
    "limited by threads or CTA slots": 3,
    "2D CTA grids": 8,
    "heavy branch divergence": 4,
    "cache-sensitive": 3,
    "multi-kernel applications": 3,
}


@dataclass
class KernelRow:
    workload: str
    kernel: str
    grid: tuple[int, int, int]       # of the kernel's first launch
    block: tuple[int, int, int]
    registers: int  # per thread the RF reserves (sm.register_count): ptxas's, or the allocation's when larger
    shared_bytes: int
    ctas_per_sm: int                 # the baseline's maximum resident CTAs per SM
    limited_by: str
    launches: int                    # launches of the whole workload at `size`
    size: str = "tiny"
    kernel_launches: int = 1         # launches of this kernel
    ctas: int = 0                    # CTAs of the kernel's smallest launch
    ctas_max: int = 0                # CTAs of its largest launch
    n_sms: int = 0
    waves: float = 0.0               # ctas / (n_sms x ctas_per_sm): the smallest launch's
    waves_max: float = 0.0
    ptxas_registers: int = 0         # ptxas's count, when the RF reserves more (the allocation needs more)

    @property
    def fits(self) -> bool:
        """Whether one CTA fits on the preset's SM at all (the RF may reserve more than
        ptxas's count: `ptxas_registers`)."""
        return self.ctas_per_sm > 0

    @property
    def waves_cell(self) -> str:
        if not self.fits:
            return "never fits"
        return f"{self.waves:.2f}" if self.ctas == self.ctas_max else f"{self.waves:.2f}-{self.waves_max:.2f}"

    @property
    def regs_cell(self) -> str:
        return f"{self.registers} (ptxas {self.ptxas_registers})" if self.ptxas_registers else str(self.registers)


@dataclass(frozen=True)
class PresetLimits:
    """What occupancy needs from a preset, read as the timing model reads it."""

    limits: SMLimits
    cta_cap: int | None    # gpu.max_ctas_per_sm
    n_sms: int
    register_count: str    # sm.register_count: what sizes the RF (session.rf_register_count)


@lru_cache(maxsize=None)
def machine(preset: str) -> PresetLimits:
    """The SM limits, CTA cap and SM count of a preset (as timing.builder builds them)."""
    from tlpsim.config.loader import load_config
    from tlpsim.timing.builder import sm_limits

    cfg = load_config(preset)
    return PresetLimits(sm_limits(cfg), cfg.gpu.max_ctas_per_sm, cfg.gpu.n_sms, cfg.sm.register_count)


_SHAPES: dict[tuple, tuple[tuple, dict[str, int]]] = {}


def _packed_registers(device, launches) -> dict[str, int]:
    """Each kernel's packed allocation (the analyses' fewest registers), by mangled name."""
    out: dict[str, int] = {}
    for rec in launches:
        if rec.mangled not in out:
            ak = device.analyzed_kernel(rec.mangled)
            if ak is not None:
                out[rec.mangled] = ak.packed_allocation.n_regs
    return out


def launch_shapes(name: str, size: str, preset: str) -> tuple:
    """The launch records of workload `name` at `size`, compiled as `preset` compiles
    kernels: from a shape-only pass, or, when the driver's host code cannot go on
    without kernel results (it fails on the untouched outputs), from a functional run
    without traces. Memoised per compile options (presets that compile alike share it)."""
    return shapes_and_registers(name, size, preset)[0]


def shapes_and_registers(name: str, size: str, preset: str) -> tuple[tuple, dict[str, int]]:
    """`launch_shapes`, and each kernel's packed-allocation register count (which the RF
    reserves where it exceeds ptxas's count, or under `sm.register_count = allocation`)."""
    import tlpsim
    from tlpsim.workloads.registry import get_workload

    wl = get_workload(name)
    dry = tlpsim.Device(config=preset, trace=False, dry_run=True)
    key = (name, size, tuple(sorted((k, str(v)) for k, v in dry.compile_options.items())))
    if key in _SHAPES:
        return _SHAPES[key]
    try:
        with dry, warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # the checks compare outputs no kernel wrote
            launches, dev = wl.execute(size).launches, dry
    except KeyError as exc:
        if exc.args == (size,):
            raise tlpsim.TlpsimError(f"workload {name!r} defines no {size!r} input (its size table in "
                                     f"tlpsim/workloads/{name}.py)") from None
        launches = None
    except Exception:  # noqa: BLE001 - host code on unwritten outputs: any error; the real run decides
        launches = None
    if launches is None:
        with tlpsim.Device(config=preset, trace=False) as dev:
            launches = wl.execute(size).launches
    _SHAPES[key] = (tuple(launches), _packed_registers(dev, launches))
    return _SHAPES[key]


def kernel_rows(name: str, launches, preset: str, size: str, packed: dict[str, int] | None = None) -> list[KernelRow]:
    """One row per distinct kernel of a workload's launches, with occupancy on `preset`
    computed as the timing model computes it (timing.occupancy with the preset's limits,
    the registers the RF reserves and static + dynamic shared memory). `packed`: each
    kernel's packed-allocation count (`shapes_and_registers`); without it, ptxas's count."""
    from tlpsim.session import rf_register_count

    m = machine(preset)
    packed = packed or {}
    rows: dict[str, KernelRow] = {}
    for rec in launches:
        n = rec.grid[0] * rec.grid[1] * rec.grid[2]
        row = rows.get(rec.kernel)
        if row is not None:
            row.kernel_launches += 1
            row.ctas, row.ctas_max = min(row.ctas, n), max(row.ctas_max, n)
            continue
        ptxas = rec.resources.registers if rec.resources else 0
        regs = rf_register_count(m.register_count, ptxas, packed.get(rec.mangled, ptxas))
        smem = (rec.resources.shared_bytes if rec.resources else 0) + rec.shared_mem
        threads = rec.block[0] * rec.block[1] * rec.block[2]
        occ = occupancy(m.limits, regs, smem, threads, m.cta_cap)
        rows[rec.kernel] = KernelRow(name, rec.kernel, rec.grid, rec.block, regs, smem, occ.ctas, occ.limiter,
                                     len(launches), size, 1, n, n, m.n_sms,
                                     ptxas_registers=ptxas if ptxas != regs else 0)
    for row in rows.values():
        slots = row.n_sms * row.ctas_per_sm
        if slots:  # else the CTA never fits on the preset: no wave runs (KernelRow.fits)
            row.waves, row.waves_max = row.ctas / slots, row.ctas_max / slots
    return list(rows.values())


def catalog(preset: str = "gtx480", names: list[str] | None = None, size: str = "tiny") -> list[KernelRow]:
    """One row per distinct kernel of each workload at `size` on `preset`."""
    from tlpsim.workloads.registry import SIZES, load_workloads

    if size not in SIZES:
        from tlpsim.errors import TlpsimError

        raise TlpsimError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    table = load_workloads()
    rows: list[KernelRow] = []
    for name in names or sorted(table):
        launches, packed = shapes_and_registers(name, size, preset)
        rows += kernel_rows(name, launches, preset, size, packed)
    return rows


def coverage(rows: list[KernelRow]) -> dict[str, list[str]]:
    """Workloads counting towards each coverage target (a shape variant runs its base's
    code, so it does not count as another workload)."""
    from tlpsim.workloads.registry import load_workloads

    table = load_workloads()
    by_wl: dict[str, list[KernelRow]] = {}
    for r in rows:
        if not table[r.workload].variant_of:
            by_wl.setdefault(r.workload, []).append(r)

    def limited(wl: str, *what: str) -> bool:
        return any(any(w in r.limited_by.split() for w in what) for r in by_wl.get(wl, []))

    out: dict[str, list[str]] = {k: [] for k in COVERAGE_TARGETS}
    for wl in sorted(by_wl):
        traits = set(table[wl].traits)
        if limited(wl, "regs"):
            out["limited by registers"].append(wl)
        if limited(wl, "smem"):
            out["limited by shared memory"].append(wl)
        if limited(wl, "threads", "ctas"):
            out["limited by threads or CTA slots"].append(wl)
        if any(r.grid[1] > 1 for r in by_wl[wl]) or "2d-grid" in traits:
            out["2D CTA grids"].append(wl)
        if "divergent" in traits:
            out["heavy branch divergence"].append(wl)
        if "cache-sensitive" in traits:
            out["cache-sensitive"].append(wl)
        # several dependent launches: different kernels, or one kernel iterated
        if len(by_wl[wl]) >= 2 or ("multi-kernel" in traits and by_wl[wl][0].launches >= 2):
            out["multi-kernel applications"].append(wl)
    return out
