"""The workload-typing rule of the CTA-scheduling study (Lee et al. HPCA'14 §3):
hand-made performance curves of each type and the edges of the rule."""

from __future__ import annotations

import pytest

from tlpsim.experiments.lcs_bcs.classify import TOLERANCE, classify, grid_limited, sweep_top


def test_the_four_types_and_opt():
    assert classify([1.0, 1.5, 1.9, 2.2, 2.5]) == ("I", 5)            # still rising at the end
    assert classify([1.0, 1.6, 1.8, 1.81, 1.8, 1.79]) == ("II", 3)    # saturates: 1.8 within 3 % of 1.81
    assert classify([1.0, 0.9, 0.8, 0.8]) == ("III", 1)               # one CTA is best
    assert classify([1.0, 1.3, 1.2, 1.0]) == ("IV", 2)                # rises, then falls
    assert TOLERANCE == 0.03


def test_edges_of_the_tolerance():
    # the last point 3 % below the best still counts as saturated (II), just past it as falling (IV)
    assert classify([1.0, 2.0, 1.94]) == ("II", 2)
    assert classify([1.0, 2.0, 1.939]) == ("IV", 2)
    # a flat curve saturated from the start; a gain of < 3 % at the end is saturation too
    assert classify([1.0, 1.0, 1.0]) == ("II", 1)
    assert classify([1.0, 1.5, 1.52]) == ("II", 2)
    assert classify([1.0, 1.5, 1.55]) == ("I", 3)


def test_one_point_has_no_type_and_bad_curves_are_rejected():
    assert classify([3.0]) == ("n/a", 1)
    with pytest.raises(ValueError):
        classify([])
    with pytest.raises(ValueError):
        classify([1.0, 0.0])


def test_sweep_top_is_the_most_ctas_per_sm_any_kernel_can_use():
    # 28 SMs: 24 CTAs give each SM at most one; 4000 CTAs are bounded by occupancy (6)
    assert sweep_top([(24, 5)], 28) == 1
    assert sweep_top([(4000, 6)], 28) == 6
    assert sweep_top([(64, 6), (64, 2)], 28) == 3         # ceil(64 / 28)
    assert sweep_top([(64, 2), (1, 8)], 28) == 2
    assert grid_limited([(64, 6)], 28) and not grid_limited([(4000, 6)], 28)
    assert not grid_limited([(64, 6), (4000, 6)], 28)
