"""Dispatch groups through the port: a CTA scheduler declares which CTAs go to an SM
together (`GPUPort.group_ctas`), that SM's plug-ins read them (`SMPort.dispatch_group`)."""

from __future__ import annotations

import pytest

from tlpsim.config.loader import load_config
from tlpsim.session import build_gpu
from tlpsim.timing.port import GPUPort, PortError, SMPort
from tlpsim.timing.views import DispatchGroup


def _gpu():
    return build_gpu(load_config("gtx480", {"gpu.n_sms": 2}))


def test_a_group_is_seen_by_its_sm_only_and_leaves_on_ungroup():
    gpu = _gpu()
    cta = GPUPort(gpu, "cta_scheduler")
    sm0, sm1 = SMPort(gpu.sms[0], "warp_scheduler", gpu), SMPort(gpu.sms[1], "warp_scheduler", gpu)
    g = cta.group_ctas(0, 7, [4, 5])
    assert g == DispatchGroup(kid=7, group=1, sm=0, ctas=(4, 5))
    assert sm0.dispatch_group(7, 4) is g and sm0.dispatch_group(7, 5) is g
    assert sm1.dispatch_group(7, 4) is None and sm0.dispatch_group(7, 6) is None and sm0.dispatch_group(8, 4) is None
    h = cta.group_ctas(1, 7, [5, 6])            # CTA 5 planned again, elsewhere: its newest group counts
    assert h.group == 2 and sm0.dispatch_group(7, 5) is None and sm1.dispatch_group(7, 5) is h
    cta.ungroup(7, 4)
    assert sm0.dispatch_group(7, 4) is None
    cta.ungroup(7, 99)                          # not grouped: nothing to do


def test_bad_groups_are_refused():
    cta = GPUPort(_gpu(), "cta_scheduler")
    with pytest.raises(PortError, match="group_ctas: SM 2 does not exist"):
        cta.group_ctas(2, 0, [0])
    with pytest.raises(PortError, match="at least one CTA"):
        cta.group_ctas(0, 0, [])
