"""The stability rule and the projections of tlpsim.sampling.rule on hand-made waves."""

from __future__ import annotations

import math

import pytest

from tlpsim.sampling.rule import (Projection, Wave, project_kernel, project_waves, settled, stable_span, stable_window,
                                  t_quantile, within)


def test_within_is_relative_to_the_mean():
    assert within([100, 101, 99], 0.02)
    assert within([98, 102], 0.02)              # exactly 2 % off the mean of 100
    assert not within([97, 103], 0.02)          # 3 % off
    assert within([0, 0, 0], 0.02)              # all zero: stable
    assert not within([1, -1], 0.02)            # zero mean, not all zero
    assert not within([], 0.02)


def test_stability_needs_k_waves_within_the_tolerance():
    waves = [Wave(1000, 100), Wave(1000, 99), Wave(1000, 101)]  # IPC 10, 10.10, 9.90
    assert not stable_window(waves[:2], 3, 0.02)               # fewer than K waves
    assert stable_window(waves, 3, 0.02)
    assert not stable_window(waves, 3, 0.005)                  # 1 % spread > 0.5 %
    # only the last K count: an unstable warm-up wave before them does not matter
    assert stable_window([Wave(1000, 300)] + waves, 3, 0.02)
    assert not stable_window(waves + [Wave(1000, 110)], 3, 0.02)
    assert not stable_window([Wave(0, 100)] * 3, 3, 0.02)      # a wave without instructions


def test_stability_checks_tracked_counter_rates_per_instruction():
    steady = [Wave(1000, 100, (("p.hits", 50.0),)), Wave(2000, 200, (("p.hits", 100.0),)),
              Wave(1000, 100, (("p.hits", 50.0),))]
    assert stable_window(steady, 3, 0.02)        # 0.05 per instruction in every wave
    drifting = [Wave(1000, 100, (("p.hits", 50.0),)), Wave(1000, 100, (("p.hits", 60.0),)),
                Wave(1000, 100, (("p.hits", 50.0),))]
    assert not stable_window(drifting, 3, 0.02)  # same IPC, but the tracked rate moves 13 %


def test_settled_is_the_net_move_in_shares_of_a_capacity():
    assert settled([0.90, 0.91, 0.89], 0.02)
    assert settled([0.0, 0.0], 0.02)
    assert not settled([0.50, 0.55], 0.02)              # moved 5 points
    assert not settled([0.28, 0.49, 0.73, 0.91], 0.02)  # filling
    # cutcp under BCS+SCA: the share swings with the CTAs in flight, without a trend
    assert settled([0.475, 0.493, 0.534, 0.483], 0.02)


def test_stability_waits_for_the_l2s_dirty_share_to_settle():
    # backprop's weight update on gtx480: the same IPC while the L2 fills with dirty
    # lines (its write-backs come later), then steady once the share stops growing
    filling = [Wave(1000, 100, (), (0.28, 0.49)), Wave(1000, 100, (), (0.49, 0.73)),
               Wave(1000, 100, (), (0.73, 0.91))]
    assert not stable_window(filling, 3, 0.02)
    full = [Wave(1000, 100, (), (0.91, 0.90)), Wave(1000, 100, (), (0.90, 0.91)),
            Wave(1000, 100, (), (0.91, 0.90))]
    assert stable_window(full, 3, 0.02)
    assert stable_span(filling + full, 3, 0.02) == 3          # the span starts after the fill
    # a window's first boundary counts: the share rose 5 points over its first wave
    assert not stable_window([Wave(1000, 100, (), (0.85, 0.90))] + full[1:], 3, 0.02)


def test_t_quantiles():
    assert t_quantile(0.95, 2) == 4.303
    assert t_quantile(0.9, 1) == 6.314
    assert t_quantile(0.95, 100) == 1.960
    with pytest.raises(ValueError):
        t_quantile(0.8, 2)
    with pytest.raises(ValueError):
        t_quantile(0.95, 0)


def test_wave_projection_exact():
    window = [Wave(1000, 100), Wave(1000, 110), Wave(1000, 90)]   # 300 cycles per 3000 insts
    p = project_waves(window, 6000, 0.02, 0.95)
    assert p.cycles == 600
    # CPIs 0.10, 0.11, 0.09: sd 0.01, mean 0.10; 6000 insts are 6 waves of 1000 ->
    # t(2) 4.303 x 0.01/0.10 x sqrt(1/3 + 1/6) + 0.02 (a prediction of 6 waves from 3)
    rel = 4.303 * 0.01 / 0.10 * math.sqrt(1 / 3 + 1 / 6) + 0.02
    assert p.low == math.floor(600 * (1 - rel)) and p.high == math.ceil(600 * (1 + rel))
    assert (p.low, p.high) == (405, 795)
    # one skipped wave: its own spread dominates, twice the mean's alone (sqrt(4/3) vs sqrt(1/3))
    one = project_waves(window, 1000, 0.0, 0.95)
    assert (one.low, one.high) == (math.floor(100 * (1 - 4.303 * 0.1 * math.sqrt(4 / 3))),
                                   math.ceil(100 * (1 + 4.303 * 0.1 * math.sqrt(4 / 3))))
    assert project_waves(window, 0, 0.02, 0.95) == Projection(0, 0, 0)


def test_identical_waves_keep_the_tolerance_as_their_interval():
    p = project_waves([Wave(500, 50)] * 3, 1000, 0.02, 0.95)
    assert p == Projection(100, 98, 102)


def test_kernel_projection_from_representatives():
    # one representative: its cycles per instruction, +-tolerance
    assert project_kernel(2000, [(1000, 5000)], 0.02) == Projection(10000, 9800, 10200)
    # two: the latest's CPI (4.5), the spread (5.0 - 4.5) / 4.5 = 11.1 % as the interval
    p = project_kernel(1000, [(1000, 5000), (1000, 4500)], 0.02)
    assert p.cycles == 4500
    assert (p.low, p.high) == (math.floor(4500 * (1 - 0.5 / 4.5)), math.ceil(4500 * (1 + 0.5 / 4.5)))
    with pytest.raises(ValueError):
        project_kernel(1000, [], 0.02)


def test_the_projection_takes_the_longest_span_the_rule_accepts():
    """IPCs 11, 11.2, then 9.2, 9.0, 9.1, 9.05 (vecadd's shape): the rule holds on the last
    3 and still on the last 4, not once the fast waves are in: span 4. A flat launch keeps
    every wave; an unstable one gives 0; tracked rates limit the span as the IPC does."""
    def waves(ipcs, tracked=None):
        return [Wave(int(ipc * 1000), 1000, (("p.c", t),) if tracked else ()) for ipc, t in
                zip(ipcs, tracked or [0] * len(ipcs))]

    assert stable_span(waves([11.0, 11.2, 9.2, 9.0, 9.1, 9.05]), 3, 0.02) == 4
    assert stable_span(waves([9.0, 9.1, 9.0, 9.05, 9.1]), 3, 0.02) == 5
    assert stable_span(waves([9.0, 10.0, 9.0]), 3, 0.02) == 0
    assert stable_span(waves([9.0, 9.0]), 3, 0.02) == 0                   # fewer than K
    # the IPC is flat, but a tracked counter's rate doubled before the last 3 waves
    assert stable_span(waves([9.0] * 5, [100, 100, 200, 200, 200]), 3, 0.02) == 3
