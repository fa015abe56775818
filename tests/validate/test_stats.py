"""The validation's statistics on hand-made numbers: Pearson r, MAE, the CTA-sweep
shape classes (each class, the boundaries of the 3% tolerance, ties), best N and
the match criterion; and the shape rule against the reference file's own labels."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from tlpsim.validate.stats import SweepShape, best_n, classify_shape, mae, pearson, rel_err, sweeps_match

REF_DIR = Path(os.environ.get("TLPSIM_REFERENCE_DIR",
                              Path(__file__).resolve().parents[3] / "shared" / "reference" / "kernels"))


def test_pearson_exact():
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0, abs=1e-15)
    assert pearson([1, 2, 3], [6, 4, 2]) == pytest.approx(-1.0, abs=1e-15)
    # x = 1,2,3,4; y = 1,3,2,4: sxy = 4, sxx = syy = 5 -> r = 0.8
    assert pearson([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8, abs=1e-15)
    assert math.isnan(pearson([5], [3]))            # one pair
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))  # a constant side
    with pytest.raises(ValueError):
        pearson([1, 2], [1])


def test_mae_is_the_mean_absolute_relative_error():
    # |110-100|/100 = 0.1, |45-50|/50 = 0.1, |300-200|/200 = 0.5 -> 0.7 / 3
    assert mae([110, 45, 300], [100, 50, 200]) == pytest.approx(0.7 / 3, abs=1e-15)
    assert mae([100], [100]) == 0.0
    assert math.isnan(mae([], []))
    assert rel_err(90, 100) == pytest.approx(-0.1)
    assert math.isnan(rel_err(1, 0))


@pytest.mark.parametrize("cycles, shape, best, smallest", [
    ([100, 101, 102.9], "flat", 1, 1),                           # everything within 3% of the best
    ([300, 200, 100], "rises", 3, 3),
    ([300, 200, 103, 100], "rises then saturates", 4, 3),        # an N below the best within 3%
    ([300, 100, 102], "rises then saturates", 2, 2),             # best inside, the top N within 3%
    ([300, 100, 104], "rises then falls", 2, 2),                 # the top N more than 3% slower
    ([100, 101, 110], "falls", 1, 1),                            # N=1 at the best, top 10% slower than N=1
    ([102, 100, 104], "irregular", 2, 1),                        # top 4% above the best but 2% above N=1
    ([100, 110, 101], "irregular", 1, 1),                        # a dip in the middle
    ([500], "flat", 1, 1),
])
def test_shape_classes(cycles, shape, best, smallest):
    got = classify_shape(list(range(1, len(cycles) + 1)), cycles)
    assert got == SweepShape(shape, best, smallest)


def test_the_tolerance_boundary_is_inclusive():
    # exactly 3% more cycles than the best is "within"
    assert classify_shape([1, 2], [103, 100]).shape == "flat"
    assert classify_shape([1, 2], [103.01, 100]).shape == "rises"


def test_best_n_prefers_the_smallest_n_on_a_tie():
    assert best_n([1, 2, 3, 4], [10, 7, 7, 9]) == 2
    assert classify_shape([1, 2, 3], [300, 100, 100]) == SweepShape("rises then saturates", 2, 2)


def test_bad_sweeps_are_rejected():
    with pytest.raises(ValueError):
        classify_shape([2, 1], [1, 2])
    with pytest.raises(ValueError):
        classify_shape([1, 2], [1])


def test_match_needs_the_same_shape_and_best_n_within_one():
    a = SweepShape("rises then saturates", 5, 5)
    assert sweeps_match(SweepShape("rises then saturates", 6, 4), a)
    assert sweeps_match(SweepShape("rises then saturates", 4, 4), a)
    assert not sweeps_match(SweepShape("rises then saturates", 3, 3), a)
    assert not sweeps_match(SweepShape("rises", 5, 5), a)
    # every N of a flat curve is within the tolerance of its best: its best N is noise
    assert sweeps_match(SweepShape("flat", 1, 1), SweepShape("flat", 4, 1))
    assert not sweeps_match(SweepShape("flat", 1, 1), SweepShape("rises then saturates", 2, 2))


@pytest.mark.skipif(not (REF_DIR / "gpgpusim-gtx480-cta-sweeps.json").exists(),
                    reason=f"GPGPU-Sim reference data not present ({REF_DIR})")
def test_the_rule_reproduces_the_reference_labels():
    from tlpsim.validate.reference import load_reference, sweep_points

    ref = load_reference(REF_DIR)
    assert len(ref.sweeps) == 6
    for name, entry in ref.sweeps.items():
        ns, cycles, complete = sweep_points(entry)
        got = classify_shape(ns, cycles)
        assert complete, name
        assert (got.shape, got.best_n, got.smallest_n_within_tol) == (
            entry["shape"], entry["best_n"], entry["smallest_n_within_3pct_of_best"]), name
