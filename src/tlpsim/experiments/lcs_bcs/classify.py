"""Workload types of Lee et al. (HPCA 2014, §3, Fig. 4) from a performance curve
over the maximum CTAs per SM, and the CTA counts a sweep has to cover.

The rule (tolerance `tol`, 3 %): let best be the highest performance over CTA
counts 1..N, and OPT the smallest count within `tol` of it (the paper's OPT: "the
number of thread blocks when performance saturates or reaches its peak"). Then

- Type III (decrease): the last count falls more than `tol` below best, and OPT = 1;
- Type IV (increase, then decrease): the last count falls more than `tol` below
  best, and OPT > 1;
- Type I (increase): the last count is within `tol` of best and OPT = N (no smaller
  count comes within `tol`: performance still grows at the end);
- Type II (increase, then saturate): the last count is within `tol` of best and OPT < N.

A curve of one point (N = 1) has no type ("n/a").

CTA counts above what a kernel's grid gives an SM (ceil(CTAs / SMs)) or above its
occupancy limit behave exactly like the uncapped baseline, so a workload's sweep
covers 1..N with N = max over its kernels of min(occupancy, ceil(CTAs / SMs)), and
the baseline run is the point at N.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["TOLERANCE", "TYPES", "classify", "grid_limited", "sweep_top"]

TOLERANCE = 0.03
TYPES = ("I", "II", "III", "IV")


def classify(perf: Sequence[float], tol: float = TOLERANCE) -> tuple[str, int]:
    """(type, OPT) of performance at CTA counts 1, 2, ..., len(perf)."""
    if not perf:
        raise ValueError("an empty performance curve has no type")
    if any(p <= 0 for p in perf):
        raise ValueError(f"performance must be positive, got {list(perf)}")
    n = len(perf)
    best = max(perf)
    opt = 1 + min(i for i, p in enumerate(perf) if p >= (1 - tol) * best)
    if n == 1:
        return "n/a", 1
    if perf[-1] < (1 - tol) * best:
        return ("III" if opt == 1 else "IV"), opt
    return ("I" if opt == n else "II"), opt


def sweep_top(kernels: Iterable[tuple[int, int]], n_sms: int) -> int:
    """N of a workload's sweep from its kernels' (CTAs in the grid, occupancy limit)."""
    top = 1
    for n_ctas, limit in kernels:
        top = max(top, min(max(limit, 1), -(-max(n_ctas, 1) // max(n_sms, 1))))
    return top


def grid_limited(kernels: Iterable[tuple[int, int]], n_sms: int) -> bool:
    """Whether the grid, not occupancy, bounds the CTAs per SM of every kernel."""
    return all(-(-max(n, 1) // max(n_sms, 1)) < max(limit, 1) for n, limit in kernels)
