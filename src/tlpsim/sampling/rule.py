"""The arithmetic of sampling, free of the simulator: the stability rule, the
projection of skipped work from a stable window, and its confidence interval.

Waves: a wave is the CTAs one full-occupancy round places on the GPU (n_sms x the
baseline's CTAs per SM); wave i ends when the launch's (i+1)·W-th CTA retires.
Its IPC is the warp instructions the SMs issued between two such boundaries over
the core cycles between them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# two-sided Student t quantiles by degrees of freedom (1..30), then the normal's
_T = {
    0.9: (6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761,
          1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701,
          1.699, 1.697),
    0.95: (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
           2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
           2.045, 2.042),
    0.99: (63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012, 2.977,
           2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763,
           2.756, 2.750),
}
_Z = {0.9: 1.645, 0.95: 1.960, 0.99: 2.576}


def t_quantile(confidence: float, df: int) -> float:
    """Two-sided Student t quantile (e.g. 4.303 for 95 % and 2 degrees of freedom)."""
    if confidence not in _T:
        raise ValueError(f"confidence must be one of {sorted(_T)}, got {confidence}")
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    return _T[confidence][df - 1] if df <= 30 else _Z[confidence]


def within(values: Sequence[float], tolerance: float) -> bool:
    """Every value lies within `tolerance` (relative) of their mean; all zeros count
    as stable, a mix of zeros and non-zeros around a zero mean does not."""
    if not values:
        return False
    mean = sum(values) / len(values)
    if mean == 0:
        return all(v == 0 for v in values)
    return all(abs(v - mean) <= tolerance * abs(mean) for v in values)


@dataclass(frozen=True)
class Wave:
    """One completed wave: the warp instructions issued and core cycles it spanned,
    the tracked counters' increases over it ({"point.name.counter": n}), and the share
    of the L2's lines that were dirty when it began and when it ended."""

    insts: int
    cycles: int
    tracked: tuple[tuple[str, float], ...] = ()
    l2_dirty: tuple[float, float] = (0.0, 0.0)

    @property
    def ipc(self) -> float:
        return self.insts / self.cycles if self.cycles else 0.0


def settled(levels: Sequence[float], tolerance: float) -> bool:
    """A share of a capacity (0..1) read at successive boundaries has moved by at most
    `tolerance` of the capacity from the first to the last: a trend (a cache filling
    with dirty lines) is not settled; its swing from one boundary to the next (the
    lines of the CTAs that happen to be in flight) is not a trend."""
    return abs(levels[-1] - levels[0]) <= tolerance


def stable_window(waves: Sequence[Wave], window: int, tolerance: float) -> bool:
    """The stability rule: the last `window` waves' IPCs, and each tracked counter's
    rate per warp instruction, all lie within `tolerance` of their means; and the
    L2's dirty share has moved by at most `tolerance` (of the L2) over them.
    While the L2 fills with dirty lines its writes are absorbed, and the write-backs
    that later waves pay are in no wave yet: the rates are steady only once it is."""
    if len(waves) < window:
        return False
    last = waves[-window:]
    if any(w.cycles <= 0 or w.insts <= 0 for w in last):
        return False
    if not within([w.ipc for w in last], tolerance):
        return False
    if not settled([last[0].l2_dirty[0]] + [w.l2_dirty[1] for w in last], tolerance):
        return False
    names = {n for w in last for n, _ in w.tracked}
    for name in sorted(names):
        rates = [dict(w.tracked).get(name, 0.0) / w.insts for w in last]
        if not within(rates, tolerance):
            return False
    return True


def stable_span(waves: Sequence[Wave], window: int, tolerance: float) -> int:
    """How many of the latest waves the projection takes: the longest run of waves ending
    with the last one that the stability rule accepts as a whole (at least `window`; 0
    when the last `window` are not stable). Waves before it ran at another rate (a
    transient after the warm-up), so they do not estimate the rate of the waves skipped."""
    if not stable_window(waves, window, tolerance):
        return 0
    k = window
    while k < len(waves) and stable_window(waves[-(k + 1):], k + 1, tolerance):
        k += 1
    return k


@dataclass(frozen=True)
class Projection:
    """Projected cycles of skipped work and the interval around them."""

    cycles: int      # point estimate
    low: int
    high: int


def project_waves(window: Sequence[Wave], skipped_insts: int, tolerance: float, confidence: float) -> Projection:
    """Cycles of `skipped_insts` warp instructions at the rate of the waves `window`
    (their total instructions over their total cycles). Half-width: the t prediction
    interval of the skipped waves' mean cycles per instruction -- the skipped waves are
    themselves samples of the wave-to-wave spread, not only the k waves whose mean
    estimates it: relative to the mean, t(k-1) x sd x sqrt(1/k + 1/S) for S skipped
    waves' worth of instructions -- plus `tolerance` of the estimate (the drift the
    rule admits between the waves seen and those never simulated). A confidence
    interval of the mean alone (sqrt(1/k)) is too narrow for one or two skipped waves,
    which is most of a `study` launch's skips."""
    insts = sum(w.insts for w in window)
    cycles = sum(w.cycles for w in window)
    if skipped_insts <= 0:
        return Projection(0, 0, 0)
    if insts <= 0 or cycles <= 0:
        raise ValueError("the stable window must have issued instructions over some cycles")
    est = skipped_insts * cycles / insts
    cpis = [w.cycles / w.insts for w in window]
    k = len(cpis)
    mean = sum(cpis) / k
    sd = math.sqrt(sum((c - mean) ** 2 for c in cpis) / (k - 1)) if k > 1 else 0.0
    skipped_waves = skipped_insts * k / insts
    rel = (t_quantile(confidence, k - 1) * sd / mean * math.sqrt(1 / k + 1 / skipped_waves)
           if k > 1 and mean else 0.0) + tolerance
    return _interval(est, rel)


def _interval(est: float, rel: float) -> Projection:
    # the epsilon keeps float noise (100 x 0.98 = 97.999...) from widening the bound by a cycle
    return Projection(round(est), math.floor(est * (1 - rel) + 1e-9), math.ceil(est * (1 + rel) - 1e-9))


def project_kernel(insts: int, reps: Sequence[tuple[int, int]], tolerance: float) -> Projection:
    """Cycles of a launch of `insts` warp instructions from its group's simulated
    representatives `reps` [(warp insts, cycles), ...] (oldest first): the latest
    representative's cycles per instruction (it ran with the caches as warm as the
    launches after it). Half-width: the spread of the representatives' cycles per
    instruction when there are two or more, never less than `tolerance`."""
    if not reps:
        raise ValueError("a kernel group needs a simulated representative")
    cpis = [c / i for i, c in reps if i > 0]
    if not cpis:  # representatives without instructions: the launch costs what they did
        return _interval(reps[-1][1], tolerance)
    cpi = cpis[-1]
    spread = (max(cpis) - min(cpis)) / cpi if len(cpis) > 1 else 0.0
    rel = max(spread, tolerance)
    return _interval(insts * cpi, rel)


def least_detail_share(n_ctas: int, wave_ctas: int, warmup: int, window: int) -> float:
    """The smallest share of a launch's CTAs wave sampling can leave in detail: its warm-up
    and `window` stable waves, the wave resident when the rule holds at its first chance,
    and the tail (the last partial wave, or the last full one); all of a launch under
    warm-up + window + 2 waves, which the sampler runs in full."""
    first = warmup + window
    if wave_ctas <= 0 or n_ctas < (first + 2) * wave_ctas:
        return 1.0
    tail = n_ctas % wave_ctas or wave_ctas
    return min(1.0, ((first + 1) * wave_ctas + tail) / n_ctas)
