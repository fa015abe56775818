"""The workload catalogue: every registered workload with its kernels, CTA shape,
registers, shared memory, CTAs per SM and the limiting resource on a preset (the
columns of EXPARS Table 3), and the coverage counts the experiments need.

Shapes and dynamic shared memory are taken from the launches of a `tiny` run, so
the table always describes the code as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers: int  # per thread the RF reserves (sm.register_count): ptxas's, or the allocation's when larger
    shared_bytes: int
    ctas_per_sm: int
    limited_by: str
    launches: int  # launches of the whole workload at `tiny`
    ptxas_registers: int = 0  # ptxas's count, when it differs from `registers`

    @property
    def regs_cell(self) -> str:
        return f"{self.registers} (ptxas {self.ptxas_registers})" if self.ptxas_registers else str(self.registers)


def preset_limits(preset: str) -> tuple[SMLimits, dict]:
    """The SM limits and the compile options (toolchain, arch, register cap) of a preset."""
    from tlpsim.config.loader import load_config
    from tlpsim.timing.builder import sm_limits

    cfg = load_config(preset)
    return sm_limits(cfg), cfg.gpu.compile_options


def rf_registers(preset: str, device, rec) -> int:
    """Registers per thread the RF reserves for launch `rec` (what timing runs use)."""
    from tlpsim.config.loader import load_config
    from tlpsim.session import register_numbering

    regs = rec.resources.registers if rec.resources else 0
    ak = device.analyzed_kernel(rec.mangled)
    return register_numbering(load_config(preset), ak.fn, regs, ak).rf_regs if ak is not None else regs


def catalog(preset: str = "gtx480", names: list[str] | None = None) -> list[KernelRow]:
    """One row per distinct kernel of each workload (its first launch shape)."""
    import tlpsim
    from tlpsim.workloads.registry import load_workloads

    limits, compile_options = preset_limits(preset)
    rows: list[KernelRow] = []
    table = load_workloads()
    for name in names or sorted(table):
        wl = table[name]
        with tlpsim.Device(trace=False, **compile_options) as dev:
            result = wl.execute("tiny")
        seen = set()
        for rec in result.launches:
            if rec.kernel in seen:
                continue
            seen.add(rec.kernel)
            ptxas = rec.resources.registers if rec.resources else 0
            regs = rf_registers(preset, dev, rec)
            smem = (rec.resources.shared_bytes if rec.resources else 0) + rec.shared_mem
            threads = rec.block[0] * rec.block[1] * rec.block[2]
            occ = occupancy(limits, regs, smem, threads)
            rows.append(KernelRow(name, rec.kernel, rec.grid, rec.block, regs, smem, occ.ctas, occ.limiter,
                                  len(result.launches), ptxas if ptxas != regs else 0))
    return rows


def coverage(rows: list[KernelRow]) -> dict[str, list[str]]:
    """Workloads counting towards each coverage target."""
    from tlpsim.workloads.registry import load_workloads

    table = load_workloads()
    by_wl: dict[str, list[KernelRow]] = {}
    for r in rows:
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


def markdown(rows: list[KernelRow], preset: str = "gtx480") -> str:
    """The catalogue and coverage as Markdown (what docs/workloads.md holds)."""
    from tlpsim.workloads.registry import load_workloads

    table = load_workloads()
    lines = [f"# Built-in workloads (occupancy on the `{preset}` preset)", "",
             "Generated by `tlpsim workloads --markdown`; do not edit by hand.", "",
             "| workload | stands for | kernel | grid | CTA | regs | smem B | CTAs/SM | limited by | traits |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        wl = table[r.workload]
        lines.append(f"| {r.workload} | {', '.join(wl.stands_for)} | {r.kernel} | {'x'.join(map(str, r.grid))} | "
                     f"{'x'.join(map(str, r.block))} | {r.regs_cell} | {r.shared_bytes} | {r.ctas_per_sm} | "
                     f"{r.limited_by} | {', '.join(wl.traits)} |")
    lines += ["", "## Coverage", "", "| behaviour | needed | have | workloads |", "|---|---|---|---|"]
    for what, wls in coverage(rows).items():
        lines.append(f"| {what} | {COVERAGE_TARGETS[what]} | {len(wls)} | {', '.join(wls)} |")
    return "\n".join(lines) + "\n"
