"""The statistics of a validation: agreement of cycle counts (Pearson r, mean
absolute relative error), and the shape of a CTA-limit sweep with its best N.

The shape classes and the 3% tolerance are those of the reference data
(`gpgpusim-gtx480-cta-sweeps.json`, notes.fields.shape), applied to cycles as
N goes from 1 to the kernel's natural CTAs-per-SM limit. With `c(N)` the cycles,
`best = min c(N)` and "within 3%" meaning `c(N) <= best * 1.03`:

- **flat**: every N within 3% of the best;
- **rises**: the best is the top N and every smaller N is more than 3% slower;
- **rises then saturates**: the best is more than 3% faster than N=1, and some N
  below the best, or the top N, is already within 3% of it;
- **rises then falls**: the best is more than 3% faster than N=1 and the top N is
  more than 3% slower than the best;
- **falls**: N=1 is within 3% of the best and the top N is more than 3% slower
  than N=1;
- **irregular**: none of these (N=1 within 3% of the best, the top N not more than
  3% slower than N=1, yet some N more than 3% slower than the best: a dip).

Classes are tried in the order flat, then (when the best beats N=1 by more than
3%) rises then falls / rises / rises then saturates, else falls / irregular, so
every curve gets exactly one. Two sweeps match (issue 18's criterion) when their
shapes are equal and their best N differ by at most one; two flat curves match
whatever their best N, which on a flat curve is within its 3% (the H200's kmeans sweep:
137.38 µs at N = 4 against 137.41 at N = 1, below the timer's resolution).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SHAPES", "TOLERANCE", "SweepShape", "best_n", "classify_shape", "mae", "pearson", "rel_err",
           "sweeps_match"]

TOLERANCE = 0.03
SHAPES = ("flat", "rises", "rises then saturates", "rises then falls", "falls", "irregular")


def rel_err(ours: float, theirs: float) -> float:
    """(ours - theirs) / theirs; NaN when `theirs` is 0."""
    return (ours - theirs) / theirs if theirs else math.nan


def mae(ours: Sequence[float], theirs: Sequence[float]) -> float:
    """Mean absolute relative error, mean(|ours - theirs| / theirs); NaN for no pairs."""
    if len(ours) != len(theirs):
        raise ValueError(f"mae: {len(ours)} values against {len(theirs)}")
    if not ours:
        return math.nan
    return sum(abs(rel_err(a, b)) for a, b in zip(ours, theirs)) / len(ours)


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's correlation coefficient; NaN with fewer than two pairs or a constant side."""
    if len(x) != len(y):
        raise ValueError(f"pearson: {len(x)} values against {len(y)}")
    n = len(x)
    if n < 2:
        return math.nan
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return math.nan
    return sxy / math.sqrt(sxx * syy)


def best_n(ns: Sequence[int], cycles: Sequence[float]) -> int:
    """The N with the fewest cycles (the smallest such N on a tie)."""
    if not ns or len(ns) != len(cycles):
        raise ValueError("best_n needs one cycle count per N")
    k = min(range(len(ns)), key=lambda i: (cycles[i], ns[i]))
    return ns[k]


@dataclass(frozen=True)
class SweepShape:
    shape: str
    best_n: int
    smallest_n_within_tol: int   # smallest N within the tolerance of the best


def classify_shape(ns: Sequence[int], cycles: Sequence[float], tol: float = TOLERANCE) -> SweepShape:
    """The shape class of a sweep (N ascending from 1, cycles per N); see the module doc."""
    if len(ns) < 1 or len(ns) != len(cycles):
        raise ValueError("classify_shape needs one cycle count per N")
    if list(ns) != sorted(ns):
        raise ValueError(f"classify_shape: N must ascend, got {list(ns)}")
    best = min(cycles)
    bn = best_n(ns, cycles)
    limit = best * (1 + tol)
    within = [c <= limit for c in cycles]
    first, top = cycles[0], cycles[-1]
    smallest = next(n for n, w in zip(ns, within) if w)
    if all(within):
        shape = "flat"
    elif not within[0]:                      # the best beats N=1 by more than the tolerance
        if not within[-1]:
            shape = "rises then falls"
        elif bn == ns[-1] and not any(within[:-1]):
            shape = "rises"
        else:
            shape = "rises then saturates"
    elif top > first * (1 + tol):
        shape = "falls"
    else:
        shape = "irregular"
    return SweepShape(shape, bn, smallest)


def sweeps_match(ours: SweepShape, theirs: SweepShape, n_slack: int = 1) -> bool:
    """Issue 18's criterion: the same shape and best N within +-`n_slack`; a flat curve's best N
    is noise within its tolerance, so two flat curves match."""
    if ours.shape == theirs.shape == "flat":
        return True
    return ours.shape == theirs.shape and abs(ours.best_n - theirs.best_n) <= n_slack
