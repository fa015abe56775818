"""Concurrent kernels (Lee et al. HPCA'14 §4.4): mixed (every SM takes CTAs of
every kernel) and spatial (an SM serves one stream at a time)."""

from __future__ import annotations

import pytest
from fakes import FakeGPUPort, SMState, dispatch, kernel

from tlpsim.policies.cta.mcke import CKEParams, MixedConcurrentKernels, SpatialConcurrentKernels
from tlpsim.timing.views import KernelInfo


def _two():
    a = kernel(kid=0, n_ctas=10, grid=(10, 1, 1), stream=1, name="ka")
    b = kernel(kid=1, n_ctas=10, grid=(10, 1, 1), stream=2, name="kb")
    return a, b


def test_mcke_sets_each_kernels_limit_and_mixes_them_on_every_sm():
    port = FakeGPUPort(2)
    m = MixedConcurrentKernels(CKEParams({"ka": 2, "kb": 3}), n_sms=2, port=port)
    m.on_kernel_start(KernelInfo(0, "ka", 1, (10, 1, 1), (256, 1, 1), 10, 8, 16, 0, None), 0)
    m.on_kernel_start(KernelInfo(1, "kb", 2, (10, 1, 1), (256, 1, 1), 10, 8, 16, 0, None), 0)
    m.on_kernel_start(KernelInfo(2, "kc", 3, (10, 1, 1), (256, 1, 1), 10, 8, 16, 0, None), 0)
    assert port.sm(0).limits == {0: 2, 1: 3} == port.sm(1).limits      # kc has no limit: occupancy
    states = [SMState(0, limits={0: 2, 1: 3}), SMState(1, limits={0: 2, 1: 3})]
    a, b = _two()
    placed = []
    for _ in range(6):
        placed += dispatch(m, states, [a, b])
    assert states[0].by_kernel == {0: 2, 1: 3} and states[1].by_kernel == {0: 2, 1: 3}
    assert [(s, k) for s, k, _ in placed[:4]] == [(0, 0), (1, 1), (0, 1), (1, 0)]   # kernels alternate


def test_cke_splits_the_sms_between_streams_and_reassigns_drained_ones():
    c = SpatialConcurrentKernels(CKEParams(), n_sms=4, port=FakeGPUPort(4))
    states = [SMState(k, cap=2) for k in range(4)]
    a, b = _two()
    placed = dispatch(c, states, [a, b]) + dispatch(c, states, [a, b])
    assert {(s, k) for s, k, _ in placed} == {(0, 0), (1, 1), (2, 0), (3, 1)}
    assert c.owner == {0: 1, 1: 2, 2: 1, 3: 2}     # stream ids
    # stream 1 has nothing left to dispatch; SM 0 drains and serves stream 2
    a.remaining = 0
    states[0].by_kernel = {}
    got = dispatch(c, states, [b])
    assert (0, 1) in {(s, k) for s, k, _ in got} and c.owner[0] == 2
    assert 2 not in {s for s, _, _ in got}         # SM 2 still holds stream 1's CTAs


def test_limits_must_be_positive():
    with pytest.raises(ValueError):
        CKEParams({"k": 0})
