"""The `study` input size: deep enough that occupancy mechanisms have CTAs to act on.

At `study` every workload's main kernels (together >= 80 % of its warp instructions)
run at least `MIN_WAVES` CTA waves on each paper preset at the baseline's maximum
occupancy, waves = CTAs / (SMs x resident CTAs per SM), so every SM holds its maximum
resident CTAs for most of the kernel. One input serves every preset (sized for the
preset with the most CTA slots for each kernel, usually `tesla_m2050`'s 28 SMs or a
Maxwell preset's 32 CTA slots), so experiments compare presets on the same input.

Kernels the rule does not bind are listed in `EXEMPT` with the reason: a grid the
algorithm fixes (a single-CTA finaliser, a wavefront growing from one CTA, a shrinking
elimination), a minor kernel outside the main ones (a few percent of the warp
instructions), or, for nbody alone, an all-pairs kernel whose work grows as the square
of its grid. The waves are computed statically from the launch
shapes of a shape-only pass (`catalog`), with the timing model's occupancy code, so the
check needs no simulation.
"""

from __future__ import annotations

from tlpsim.workloads.catalog import KernelRow, catalog

PAPER_PRESETS = ("gtx480", "tesla_m2050", "gtx980", "maxwell_gpuduet", "fermi_rfv", "fermi_dmr", "expars_maxwell")
MIN_WAVES = 4.0
STUDY = "study"

_FINALISER = "single-CTA finaliser over the first kernel's per-CTA results"
_SHRINKING = "shrinking elimination: one launch per pivot step, the grid covers the remaining submatrix"

# (workload, kernel) -> why the kernel's grid does not follow the input size
EXEMPT: dict[tuple[str, str], str] = {
    ("gaussian", "gauss_multipliers"): _SHRINKING,
    ("gaussian", "gauss_eliminate"): _SHRINKING,
    ("lud", "lud_diagonal"): "one CTA factors the diagonal block at each step",
    ("lud", "lud_perimeter"): _SHRINKING,
    ("lud", "lud_internal"): _SHRINKING,
    ("nw", "nw_diagonal"): "anti-diagonal wavefront: grows from one CTA to n/16 and back",
    ("reduction", "reduce_final"): _FINALISER,
    ("scan", "scan_sums"): "single CTA scans the per-segment sums",
    ("nn", "nn_final"): _FINALISER,
    ("montecarlo", "mc_finalize"): "one thread per option averages its paths (a few CTAs; <1 % of instructions)",
    ("kmeans", "kmeans_update"): "one thread per centroid feature (k x 34; <1 % of instructions)",
    ("mriq", "mriq_phimag"): "one thread per k-space sample, once (<1 % of instructions)",
    ("spmv", "spmv_csr_scalar"): "minor kernel: 14 % of the warp instructions (the CSR-vector kernel, 86 %, "
                                 "runs >= 12 waves); one thread per row needs 16x the rows for 4 waves",
    ("nbody", "nbody_step"): "all-pairs forces: work grows as n^2; 4 waves on a 16-SM Maxwell need >= 1024 "
                             "CTAs = 131,072 bodies, ~8.7 G warp instructions (days of simulation)",
}


# (workload, kernel, preset) -> why a CTA of the kernel never fits on the preset, so no
# study size applies there (none since the presets reserve ptxas's count: a kernel whose
# analyses' allocation needs more than a preset's RF holds under sm.register_count = "ptxas"
# is listed here with the reason)
DOES_NOT_FIT: dict[tuple[str, str, str], str] = {}


def never_fit(rows_by_preset: dict[str, list[KernelRow]]) -> set[tuple[str, str, str]]:
    """(workload, kernel, preset) of every kernel whose CTA fits on no SM of the preset."""
    return {(r.workload, r.kernel, p) for p, rows in rows_by_preset.items() for r in rows if not r.fits}


def study_rows(presets=PAPER_PRESETS, names: list[str] | None = None) -> dict[str, list[KernelRow]]:
    """The catalogue at `study` on each preset."""
    return {p: catalog(p, names, STUDY) for p in presets}


def shortfalls(rows_by_preset: dict[str, list[KernelRow]], min_waves: float = MIN_WAVES) -> list[str]:
    """Every non-exempt kernel launch below `min_waves` on some preset, as messages."""
    out = []
    for preset, rows in rows_by_preset.items():
        for r in rows:
            if (r.workload, r.kernel) not in EXEMPT and r.fits and r.waves < min_waves:
                out.append(f"{r.workload}/{r.kernel} on {preset}: {r.ctas} CTAs in its smallest launch = "
                           f"{r.waves:.2f} waves of {r.n_sms} SMs x {r.ctas_per_sm} CTAs ({r.limited_by}); "
                           f"needs >= {min_waves:g}")
    return out


def stale_exemptions(rows: list[KernelRow]) -> list[tuple[str, str]]:
    """Exemptions naming no kernel of the suite (a renamed or removed kernel)."""
    have = {(r.workload, r.kernel) for r in rows}
    return [k for k in EXEMPT if k not in have]
