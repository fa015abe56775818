"""gpu.max_concurrent_kernels (GPGPU-Sim's gpgpu_max_concurrent_kernel): at most that
many launches run at once; a launch on another stream waits to dispatch its first CTA
until a running one has finished. And the interconnect and shared-memory settings the
model does not have are refused by name rather than accepted and ignored."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError

SPIN = r'''
extern "C" __global__ void spin(float* out, int n) {
    float s = threadIdx.x;
    for (int i = 0; i < n; i++) s = s * 0.5f + 1.0f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}'''


def _two_streams(limit: int) -> list:
    cfg = load_config("gtx480", {"gpu.n_sms": 4, "gpu.max_concurrent_kernels": limit})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False) as dev:
        k = tlpsim.RawKernel(SPIN, "spin")
        for _ in range(3):
            with tlpsim.Stream():
                k((2,), (64,), (tlpsim.zeros(128, np.float32), np.int32(100)))
        dev.synchronize()
        return [(r.stats.first_cycle, r.stats.last_cycle) for r in dev.launches]


def test_a_launch_waits_for_a_free_kernel_slot():
    free = _two_streams(8)
    assert max(f for f, _ in free) < min(last for _, last in free)  # all three run together
    one = _two_streams(1)
    assert one[1][0] >= one[0][1] and one[2][0] >= one[1][1]        # one at a time, in launch order
    two = _two_streams(2)
    assert two[1][0] < two[0][1] and two[2][0] >= min(two[0][1], two[1][1])


@pytest.mark.parametrize("key, value, match", [
    ("icnt.topology", "ideal", "icnt.topology = 'ideal' is not modelled"),
    ("sm.shared_limited_broadcast", True, "sm.shared_limited_broadcast = true is not modelled"),
])
def test_unmodelled_settings_are_refused(key, value, match):
    with pytest.raises(ConfigError, match=match):
        load_config("gtx480", {key: value})
