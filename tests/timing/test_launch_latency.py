"""gpu.kernel_launch_latency (GPGPU-Sim's gpgpu_kernel_launch_latency): a launch's first
CTA leaves the front end that many core cycles after the launch's turn — its stream's
previous launch finished and a concurrent-kernel slot free — and the launch's cycles
count the wait, as GPGPU-Sim's gpu_sim_cycle does and a CUDA-event time includes it."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError

# no global access executes (the store's guard is false): nothing but the clocks' phase and
# the latency moves the timing, and the perfect instruction cache keeps fetches off the L2
SPIN = r'''
extern "C" __global__ void spin(float* out, int n) {
    float s = threadIdx.x;
    for (int i = 0; i < n; i++) s = s * 0.5f + 1.0f;
    if (s < -1.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}'''


def _run(latency: int, launches: int = 1, streams: bool = False, limit: int = 8, dense: bool = False) -> list:
    cfg = load_config("gtx480", {"l1i.perfect": True, "gpu.n_sms": 2, "gpu.kernel_launch_latency": latency,
                                 "gpu.max_concurrent_kernels": limit})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=dense) as dev:
        k = tlpsim.RawKernel(SPIN, "spin")
        out = tlpsim.zeros(128, np.float32)
        for _ in range(launches):
            if streams:
                with tlpsim.Stream():
                    k((2,), (64,), (out, np.int32(20)))
            else:
                k((2,), (64,), (out, np.int32(20)))
        dev.synchronize()
        return [(r.stats.cycles, r.stats.first_cycle, r.stats.last_cycle) for r in dev.launches]


@pytest.mark.parametrize("latency", [1, 7, 1000, 5000, 50_000])   # 50,000: half the watchdog window
def test_the_launch_takes_exactly_the_latency_longer(latency):
    ((base, first0, last0),) = _run(0)
    assert (base, first0) == (602, 0)
    assert _run(latency) == [(base + latency, 0, last0 + latency)]   # counted from the launch, not its first CTA


def test_each_launch_on_a_stream_waits_from_the_previous_ones_end():
    (a0, b0) = _run(0, launches=2)
    (a, b) = _run(300, launches=2)
    assert a == (a0[0] + 300, 0, a0[2] + 300)
    # the second's turn comes when the first ends; its CTAs 300 cycles later; its cycles count them
    assert b[1] == a[2] + 1 and b[0] == b0[0] + 300


def test_a_launch_waiting_for_a_kernel_slot_starts_its_latency_when_it_gets_one():
    one = _run(300, launches=3, streams=True, limit=1)
    assert [c for c, _, _ in one] == [c + 300 for c, _, _ in _run(0, launches=3, streams=True, limit=1)]
    assert one[1][1] == one[0][2] and one[2][1] == one[1][2]          # each turn: the slot freed that cycle
    together = _run(300, launches=3, streams=True)
    assert [f for _, f, _ in together] == [0, 0, 0]                    # three slots: all wait at once


def test_skip_ahead_equals_dense():
    assert _run(1000, launches=2, dense=True) == _run(1000, launches=2)


def test_a_latency_the_watchdog_would_call_a_deadlock_is_refused():
    with pytest.raises(ConfigError, match=r"gpu.kernel_launch_latency \(50001\) is more than half of "
                                          r"monitor.watchdog_cycles \(100000\)"):
        load_config("gtx480", {"gpu.kernel_launch_latency": 50_001})
    assert load_config("gtx480", {"gpu.kernel_launch_latency": 50_000}).gpu.kernel_launch_latency == 50_000
    assert load_config("gtx480", {"gpu.kernel_launch_latency": 100_000,
                                  "monitor.watchdog_cycles": 0}).gpu.kernel_launch_latency == 100_000


def test_the_hopper_presets_take_gpgpusims_latency():
    assert load_config("h200").gpu.kernel_launch_latency == 5000
    assert load_config("h100").gpu.kernel_launch_latency == 5000
    assert load_config("gtx480").gpu.kernel_launch_latency == 0      # GPGPU-Sim 3.x's GTX480: none
