"""The `window` event's C_mem (`SMWindow.mem_wait_cycles`, Kayiran et al.'s "all
warps wait for memory" cycles that DYNCTA reads), cycle by cycle against the cycle
classes, with a one-cycle window so that every cycle is reported."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.monitor.base import Monitor

LOAD = r'''
extern "C" __global__ void load(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    for (int k = 0; k < 8; ++k) x = fmaf(x, 1.0f, 0.0f);
    if (i < n) out[i] = x;
}'''


@dataclasses.dataclass(frozen=True)
class EveryCycle:
    window_cycles: int = 1


class Record(Monitor):
    events = frozenset({"window"})
    Params = EveryCycle
    seen: list = []

    def on_window(self, counters, now):
        s = counters.sms[0]
        type(self).seen.append((counters.first_cycle, s.mem_wait_cycles, s.cycles, s.issued, s.resident_warps))


def _run(plugin, ctas: int, dense: bool = False):
    Record.seen = []
    name = plugin("monitor", Record)
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True, "monitor.policy": name})
    n = ctas * 32
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=dense):
        k = tlpsim.RawKernel(LOAD, "load")
        out = tlpsim.zeros(n, np.float32)
        rec = k((ctas,), (32,), (tlpsim.asarray(np.ones(n, np.float32)), out, np.int32(n)))
        assert np.allclose(out.get(), 1.0)
    return rec, list(Record.seen)


def test_one_warp_waits_on_its_load_in_every_memory_stall_cycle(plugin):
    rec, seen = _run(plugin, ctas=1)
    assert len(seen) == rec.stats.cycles                 # one window per cycle
    wait = sum(m for _, m, _, _, _ in seen)
    assert wait > 100                                    # the load's round trip to DRAM
    assert wait == sum(c["mem_stall"] for _, _, c, _, _ in seen)   # one warp: some warp == all warps


@pytest.mark.parametrize("dense", [False, True])
def test_all_warps_waiting_is_a_subset_of_the_stall_cycles(plugin, dense):
    rec, seen = _run(plugin, ctas=8, dense=dense)
    for cycle, m, c, issued, warps in seen:
        assert m in (0, 1)
        if m:                                            # nothing issued, some warp on memory
            assert issued == 0 and warps > 0 and c["active"] == 0 and c["idle"] == 0, cycle
    wait = sum(m for _, m, _, _, _ in seen)
    some = sum(c["mem_stall"] for _, _, c, _, _ in seen)
    assert 0 < wait < some                               # 8 warps: often only some of them wait
    if dense:
        return
    _, dense_seen = _run(plugin, ctas=8, dense=True)
    assert [m for _, m, _, _, _ in dense_seen] == [m for _, m, _, _, _ in seen]   # skip-ahead == dense
