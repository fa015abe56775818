"""LaunchStats.avg_resident_ctas / avg_resident_warps average over the SM-cycles with
resident warps, GPGPU-Sim's base for its occupancy, so they never exceed what is
resident. Cycles an SM idles with warps resident (waiting on a cold instruction fetch
here, which the cycle classes count as idle) are in that base."""

from __future__ import annotations

import numpy as np

import tlpsim
from tlpsim.config.loader import load_config

LOOP = r'''
extern "C" __global__ void loop(float* out, int n) {
    float s = threadIdx.x;
    for (int i = 0; i < n; i++) s = s * 0.5f + 1.0f;
    out[threadIdx.x] = s;
}'''


def test_one_resident_cta_averages_exactly_one():
    cfg = load_config("h200", {"gpu.n_sms": 1})   # cold instruction fetches from the L2: idle with warps
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False) as dev:
        out = tlpsim.zeros(64, np.float32)
        tlpsim.RawKernel(LOOP, "loop")((1,), (64,), (out, np.int32(200)))
        (rec,) = dev.launches
    st = rec.stats
    sm = st.per_sm[0]
    with_warps = sm["issue_slots"] // cfg.sm.n_schedulers
    non_idle = sum(v for k, v in sm["cycles"].items() if k != "idle")
    assert with_warps > non_idle                       # idle cycles with the CTA resident
    assert sm["resident_cta_cycles"] == with_warps      # one CTA, resident whenever its warps are
    assert st.avg_resident_ctas == 1.0 and st.avg_resident_warps == 2.0
