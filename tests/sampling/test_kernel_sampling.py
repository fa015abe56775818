"""Kernel grouping and projection (tlpsim.sampling.kernels) on hand-made launches."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from tlpsim.errors import ConfigError
from tlpsim.sampling.kernels import KernelSampler, group_key
from tlpsim.sampling.spec import SamplingSpec


@dataclass
class Stats:  # the fields of LaunchStats the projection writes
    kernel: str
    cycles: int
    warp_insts: int
    thread_insts: int
    ipc: float = 0.0
    warp_ipc: float = 0.0
    wall_seconds: float = 1.0
    first_cycle: int = 0
    last_cycle: int = 0
    timeline: dict = field(default_factory=dict)
    l2_hit_rate: float = 0.5


KEY = group_key("k", (64, 1, 1), (256, 1, 1), 20, 0)


def test_grouping_by_kernel_shape_and_instruction_count():
    ks = KernelSampler(SamplingSpec("kernels", tolerance=0.02))
    a = ks.group_of(KEY, 10_000)
    assert ks.group_of(KEY, 10_200) is a            # within 2 % of the first member's count
    b = ks.group_of(KEY, 10_201)                    # just past it: a group of its own
    assert b is not a and (a.index, b.index) == (0, 1)
    assert ks.group_of(KEY, 10_050) is a            # the first group that matches
    other_grid = group_key("k", (32, 1, 1), (256, 1, 1), 20, 0)
    assert ks.group_of(other_grid, 10_000) is not a
    other_regs = group_key("k", (64, 1, 1), (256, 1, 1), 21, 0)
    assert ks.group_of(other_regs, 10_000) is not a
    assert a.label() == "k grid 64x1x1 block 256x1x1 ~10000 warp insts, ~0 line accesses"


def test_grouping_by_line_accesses_too():
    ks = KernelSampler(SamplingSpec("kernels", 0.02))
    a = ks.group_of(KEY, 208, 518)
    assert ks.group_of(KEY, 208, 508) is a          # within 2 % of the first member's 518 lines
    b = ks.group_of(KEY, 208, 507)                  # the same instructions over fewer lines: other work
    assert b is not a and b.lines == 507
    assert ks.group_of(KEY, 208, 500) is b
    assert "~507 line accesses" in b.label()


def test_two_representatives_then_projection():
    ks = KernelSampler(SamplingSpec("kernels", tolerance=0.02))
    g = ks.group_of(KEY, 1000)
    assert ks.needs_detail(g)
    ks.simulated(g, Stats("k", 5000, 1000, 32000))
    assert ks.needs_detail(g)
    ks.simulated(g, Stats("k", 4000, 1000, 32000))
    assert not ks.needs_detail(g)
    stats, rec = ks.project(g, "k", 1010, 32320)
    assert stats.cycles == 4040                       # the latest representative's 4 cycles per instruction
    assert (stats.warp_insts, stats.thread_insts) == (1010, 32320)
    assert stats.ipc == 32320 / 4040 and stats.wall_seconds == 0.0 and stats.timeline == {}
    assert stats.l2_hit_rate == 0.5                   # other statistics: the representative's
    assert rec["method"] == "kernel" and rec["detail_fraction"] == 0.0 and rec["representatives"] == 2
    assert rec["interval"] == [3030, 5050]            # spread (5 - 4) / 4 = 25 %
    assert g.members == 3


def test_spec_validation_names_the_option():
    with pytest.raises(ConfigError, match="--sample must be"):
        SamplingSpec("some")
    with pytest.raises(ConfigError, match="--sample-tolerance"):
        SamplingSpec("waves", tolerance=0)
    with pytest.raises(ConfigError, match="unknown sampling key"):
        SamplingSpec.from_dict({"mode": "waves", "tol": 0.1})
    assert SamplingSpec.from_dict(SamplingSpec("all", 0.05).to_dict()) == SamplingSpec("all", 0.05)
    assert not SamplingSpec().on and SamplingSpec("all").kernels and SamplingSpec("all").waves
    assert replace(SamplingSpec("waves"), mode="off").label() == "full detail"
