"""scripts/rodinia_copy_checks.py, the references run_rodinia.py checks Rodinia programs
against from their saved copies (tlpsim exec --save-copies): each on hand-made copies
with a known answer, and each refusing a result with one value changed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from tlpsim.cudart.saved_copies import CopyLog

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import rodinia_copy_checks as cc


def _save(folder: Path, copies: list[tuple[str, np.ndarray]]) -> Path:
    log = CopyLog(str(folder))
    for k, (direction, data) in enumerate(copies):
        log.record(direction, 0x1000 * (k + 1), 0, np.ascontiguousarray(data).tobytes())
    log.index.close()
    return folder


def test_pathfinder_dynamic_programming(tmp_path):
    first = np.array([3, 1, 4, 1, 5], np.int32)
    wall = np.array([[9, 2, 6, 5, 3], [5, 8, 9, 7, 9]], np.int32)
    # row 1: 9+min(3,1)=10, 2+1=3, 6+min(1,4,1)=7, 5+1=6, 3+min(1,5)=4
    # row 2: 5+min(10,3)=8, 8+3=11, 9+min(3,7,6)=12, 7+min(7,6,4)=11, 9+min(6,4)=13
    want = np.array([8, 11, 12, 11, 13], np.int32)
    ok = _save(tmp_path / "ok", [("H2D", first), ("H2D", wall), ("D2H", want)])
    assert cc.check_pathfinder(ok, cols=5, rows=3).startswith("yes")
    bad = _save(tmp_path / "bad", [("H2D", first), ("H2D", wall), ("D2H", want + np.eye(1, 5, 2, np.int32)[0])])
    assert cc.check_pathfinder(bad, cols=5, rows=3) == "NO: result differs from the DP at 2"


def test_particlefilter_takes_the_first_cdf_at_or_past_u(tmp_path):
    x, y = np.array([10.0, 20, 30, 40]), np.array([1.0, 2, 3, 4])
    cdf = np.array([0.1, 0.5, 0.5, 0.9])
    u = np.array([0.05, 0.5, 0.6, 0.95])  # -> particles 0, 1, 3 and none (the last)
    h2d = [("H2D", x), ("H2D", y), ("H2D", x), ("H2D", y), ("H2D", cdf), ("H2D", u)]
    ok = _save(tmp_path / "ok", h2d + [("D2H", np.array([1.0, 2, 4, 4])), ("D2H", np.array([10.0, 20, 40, 40]))])
    assert cc.check_particlefilter(ok, particles=4) is None
    bad = _save(tmp_path / "bad", h2d + [("D2H", np.array([1.0, 3, 4, 4])), ("D2H", np.array([10.0, 20, 40, 40]))])
    assert cc.check_particlefilter(bad, particles=4).startswith("NO: frame 1")


def test_gaussian_elimination_and_solution(tmp_path):
    n = 4
    i = np.arange(n)
    a0 = (10 * np.exp(np.float32(-0.01) * np.abs(i[:, None] - i[None, :]).astype(np.float32))).astype(np.float32)
    b0 = np.ones(n, np.float32)
    # the elimination in float64, rounded: within the check's tolerance of its float32 one
    m, a, b = np.zeros((n, n)), a0.astype(np.float64), b0.astype(np.float64)
    for t in range(n - 1):
        m[t + 1:, t] = a[t + 1:, t] / a[t, t]
        b[t + 1:] -= m[t + 1:, t] * b[t]
        a[t + 1:, t:] -= m[t + 1:, t:t + 1] * a[t, t:]
    h2d = [("H2D", np.zeros((n, n), np.float32)), ("H2D", a0), ("H2D", b0)]
    ok = _save(tmp_path / "ok", h2d + [("D2H", m.astype(np.float32)), ("D2H", a.astype(np.float32)),
                                       ("D2H", b.astype(np.float32))])
    assert cc.check_gaussian(ok, size=n).startswith("yes")
    wrong = a.astype(np.float32)
    wrong[1, 3] *= 1.001
    bad = _save(tmp_path / "bad", h2d + [("D2H", m.astype(np.float32)), ("D2H", wrong), ("D2H", b.astype(np.float32))])
    assert cc.check_gaussian(bad, size=n).startswith("NO: a, element 7")


def test_backprop_partial_sums_and_weight_adjustment(tmp_path):
    n_in, hid = 16, 16
    rng = np.random.default_rng(3)
    y = rng.integers(-3, 4, n_in + 1).astype(np.float32)  # small integers: every sum is exact in any order
    w = rng.integers(-3, 4, (n_in + 1, hid + 1)).astype(np.float32)
    delta = rng.random(hid + 1).astype(np.float32)
    oldw = rng.random((n_in + 1, hid + 1)).astype(np.float32)
    partial = (w[1:, 1:] * y[1:, None]).sum(axis=0).astype(np.float32)  # one block of 16 inputs
    adjusted = w.astype(np.float64)
    adjusted[1:, 1:] += 0.3 * delta[None, 1:].astype(np.float64) * y[1:, None] + 0.3 * oldw[1:, 1:]
    adjusted[0, 1:] += 0.3 * delta[1:].astype(np.float64) + 0.3 * oldw[0, 1:]
    copies = [("H2D", y), ("H2D", w), ("D2H", partial), ("H2D", delta), ("H2D", oldw), ("H2D", w), ("D2H", y),
              ("D2H", adjusted.astype(np.float32))]
    assert cc.check_backprop(_save(tmp_path / "ok", copies), n_in=n_in).startswith("yes")
    copies[-1] = ("D2H", w)  # weights not adjusted
    assert cc.check_backprop(_save(tmp_path / "bad", copies), n_in=n_in).startswith("NO: adjusted weights")


def test_lavamd_two_particles(tmp_path):
    box = np.zeros(1, cc._BOX)
    box["nn"] = 0
    rv = np.zeros((100, 4))
    rv[1] = [0.2, 0.3, 0.0, 0.0]  # v, x, y, z: particle 1 at x = 0.3; the other 98 have charge 0
    rv[0] = [0.1, 0.0, 0.0, 0.0]
    qv = np.zeros(100)
    qv[:2] = [0.5, 0.25]
    fv = np.zeros((100, 4))
    # pair (0, 1): r2 = 0.1 + 0.2 - 0 = 0.3, vij = exp(-0.5 * 0.3); self pairs: r2 = 2 v - |r|^2
    v01 = np.exp(-0.15)
    want = fv.copy()
    want[0] = [0.5 * np.exp(-0.1) + 0.25 * v01, 0.25 * 2 * v01 * (0.0 - 0.3), 0, 0]
    want[1] = [0.5 * v01 + 0.25 * np.exp(-0.5 * (0.4 - 0.09)), 0.5 * 2 * v01 * (0.3 - 0.0), 0, 0]
    # the uncharged particles 2 .. 99 at the origin (v = 0) feel 0 (r2 = 0.1) and 1 (r2 = 0.2)
    want[2:, 0] = 0.5 * np.exp(-0.05) + 0.25 * np.exp(-0.1)
    want[2:, 1] = 0.25 * 2 * np.exp(-0.1) * (0.0 - 0.3)
    copies = [("H2D", box), ("H2D", rv), ("H2D", qv), ("H2D", fv), ("D2H", want)]
    assert cc.check_lavamd(_save(tmp_path / "ok", copies)).startswith("yes")
    want[1, 1] *= 1 + 1e-8
    assert cc.check_lavamd(_save(tmp_path / "bad", copies)).startswith("NO: forces")


def test_srad_v2_step(tmp_path):
    """A horizontal ramp with a bump: the check accepts one step of its NumPy kernels and
    refuses an image left as it was."""
    niter = 1
    rows = cols = 16
    j = np.tile(np.linspace(1.0, 2.0, cols, dtype=np.float32), (rows, 1))
    j[0, 0] = 1.5  # a bump, so the ROI statistics have a variance
    want = cc._srad_step(j, cc._q0sqr(j, 0, 7, 0, 7), 0.5)
    assert not np.array_equal(want, j)
    ok = _save(tmp_path / "ok", [("H2D", j), ("D2H", want)])
    assert cc.check_srad_v2(ok, rows, cols, (0, 7, 0, 7), 0.5, niter).startswith("yes")
    bad = _save(tmp_path / "bad", [("H2D", j), ("D2H", j)])
    assert cc.check_srad_v2(bad, rows, cols, (0, 7, 0, 7), 0.5, niter).startswith("NO: iteration 0")
