"""The skip ends at the first CTA unlike the stable span's: per-CTA work (warp
instructions, global line accesses) from the trace, compared with the range of the
span's CTAs (TBPoint's homogeneous regions)."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.sampling import SamplingSpec
from tlpsim.sampling.waves import cta_work, first_unlike

from tests.sampling.test_warming import _trace


def test_cta_work_counts_each_ctas_instructions_and_global_line_accesses():
    # CTA 0: 3 rows, a global load of sectors 0-4 (lines 0 and 1) and a shared store;
    # CTA 1: 2 rows, a global atomic on sector 9 (line 2) and a local store
    insts, lines = cta_work(_trace(), 0, 2)
    assert insts.tolist() == [3, 2] and lines.tolist() == [2, 1]
    insts, lines = cta_work(_trace(), 1, 2)
    assert insts.tolist() == [2] and lines.tolist() == [1]


def test_first_unlike_is_the_first_cta_outside_the_spans_range_widened_by_the_tolerance():
    window = (np.array([100, 104]), np.array([10, 10]))
    after = (np.array([101, 106, 98, 90, 100]), np.array([10, 10, 10, 9, 10]))
    assert first_unlike(window, after, 0.02) == 3        # 106 <= 104 x 1.02, 98 >= 100 x 0.98; 90 is not
    assert first_unlike(window, (np.array([100, 107]), np.array([10, 10])), 0.02) == 1
    assert first_unlike(window, (np.array([100, 100]), np.array([10, 11])), 0.02) == 1   # accesses count too
    assert first_unlike(window, (np.array([100, 104]), np.array([10, 10])), 0.02) == 2   # none: all of them
    assert first_unlike((np.array([], dtype=np.int64),) * 2, after, 0.02) == 5


UNEVEN = r'''
extern "C" __global__ void uneven(const float* x, float* out, int long_ctas) {
    // the first long_ctas CTAs read 8 elements a thread, the others 4 (as a grid-stride
    // loop's last CTAs do one round fewer)
    int rounds = blockIdx.x < long_ctas ? 8 : 4;
    float v = 0.0f;
    for (int r = 0; r < rounds; ++r) v += x[(blockIdx.x * 8 + r) * 32 + threadIdx.x];
    out[blockIdx.x * 32 + threadIdx.x] = v;
}
'''


def _uneven(mode: str):
    cfg = load_config("gtx480", {"gpu.n_sms": 2, "gpu.max_ctas_per_sm": 1})
    n_ctas, long_ctas = 30, 16
    x = np.arange(n_ctas * 8 * 32, dtype=np.float32)
    with tlpsim.Device(mode="timing", config=cfg, sampling=SamplingSpec(mode, 0.1)):
        k = tlpsim.RawModule(code=UNEVEN).get_function("uneven")
        out = tlpsim.zeros(n_ctas * 32, np.float32)
        rec = k((n_ctas,), (32,), (tlpsim.asarray(x), out, np.int32(long_ctas)))
        got = out.get()
    rounds = np.where(np.arange(n_ctas) < long_ctas, 8, 4)
    want = np.array([x.reshape(n_ctas, 8, 32)[c, :rounds[c]].sum(axis=0) for c in range(n_ctas)]).ravel()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    return rec


def test_a_skip_ends_at_the_first_cta_doing_other_work_and_the_rest_runs_in_detail():
    full, rec = _uneven("off"), _uneven("waves")
    w = rec.sampling["waves"]
    assert w["skipped_ctas"] > 0 and w["skip_ended_by_cta"] == 16
    # CTAs 16.. (shorter) ran in detail; the skip keeps CTA pairs whole, so it may stop one short
    first = w["first_skipped_cta"]
    assert first + w["skipped_ctas"] == 16 - (16 - first) % 2
    assert rec.stats.warp_insts == full.stats.warp_insts        # instructions stay exact
