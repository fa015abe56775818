"""The stream-buffer instruction prefetcher (timing/iprefetch.py; Huerta et al. 2025,
§5.2): a demand miss starts a stream at the next line, its lines are requested one a
cycle with at most `depth` in flight, and the stream stays `depth` lines ahead of the
fetches that use it."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import ConfigError, load_config
from tlpsim.timing.iprefetch import StreamPrefetcher

LB = 128


def test_a_miss_starts_a_stream_of_depth_lines_after_it():
    pf = StreamPrefetcher(4, LB)
    assert not pf.pending()
    pf.on_fetch(0x1000, missed=False)            # a hit outside any stream: nothing
    assert not pf.pending()
    pf.on_fetch(0x1000, missed=True)
    assert (pf.start, pf.next, pf.end) == (0x1080, 0x1080, 0x1000 + 4 * LB)
    got = []
    while pf.pending() and pf.can_request():
        got.append(pf.next)
        pf.requested(pf.next)
    assert got == [0x1080, 0x1100, 0x1180, 0x1200] and not pf.pending()
    assert pf.requests == 4


def test_fetches_inside_the_stream_keep_it_depth_lines_ahead():
    pf = StreamPrefetcher(4, LB)
    pf.on_fetch(0x1000, missed=True)
    for line in (0x1080, 0x1100):
        pf.requested(line)
    pf.on_fetch(0x1080, missed=False)             # the demand reaches the stream's first line
    assert pf.end == 0x1080 + 4 * LB and pf.next == 0x1180
    pf.on_fetch(0x1200, missed=True)              # runs ahead of the requests, still inside
    assert pf.next == 0x1280 and pf.end == 0x1200 + 4 * LB and pf.start == 0x1080
    pf.on_fetch(0x8000, missed=False)             # a hit elsewhere leaves the stream alone
    assert pf.start == 0x1080
    pf.on_fetch(0x8000, missed=True)              # a miss elsewhere starts a new one
    assert (pf.start, pf.next, pf.end) == (0x8080, 0x8080, 0x8000 + 4 * LB)


def test_at_most_depth_lines_in_flight_and_waiters_released_on_arrival():
    pf = StreamPrefetcher(2, LB)
    pf.on_fetch(0, missed=True)
    pf.requested(LB)
    pf.requested(2 * LB)
    assert not pf.can_request()
    pf.wait(LB, "w1")
    pf.wait(LB, "w2")
    assert pf.late == 2
    assert pf.arrived(LB) == ["w1", "w2"] and pf.can_request()
    assert pf.arrived(2 * LB) == [] and pf.inflight == {}
    with pytest.raises(ValueError, match="depth must be >= 1"):
        StreamPrefetcher(0, LB)


# one warp through 600 dependent FMAs unrolled: about 40 lines of straight-line code
LONG = r'''
extern "C" __global__ void long_chain(const float* in, float* out, float a, float b) {
    float x = in[threadIdx.x];
    #pragma unroll
    for (int k = 0; k < 600; ++k) x = fmaf(x, a, b);
    out[threadIdx.x] = x;
}'''


def _run(prefetch: int, dense: bool = False):
    cfg = load_config("h200", {"gpu.n_sms": 1, "l1i.perfect": False, "l1i.size_kb": 128, "l1i.assoc": 16,
                               "l1i.prefetch_lines": prefetch})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=dense):
        inp = tlpsim.asarray(np.ones(32, np.float32))
        out = tlpsim.zeros(32, np.float32)
        rec = tlpsim.RawKernel(LONG, "long_chain")((1,), (32,), (inp, out, np.float32(0.5), np.float32(0.5)))
        got = out.get()
    assert np.allclose(got, 1.0)                  # x = 0.5 x + 0.5 stays at 1
    n_instrs = len(rec.device._timing._static[next(iter(rec.device._timing._static))].instrs)
    return rec.stats, -(-n_instrs * 8 // LB)


def test_straight_line_code_misses_once_with_the_prefetcher():
    base, n_lines = _run(0)
    pf, _ = _run(16)
    sm0, sm1 = base.per_sm[0], pf.per_sm[0]
    assert n_lines >= 30
    assert sm0["ifetch_prefetches"] == 0 and n_lines - 1 <= sm0["ifetch_requests"] <= n_lines + 1
    demand = sm1["ifetch_requests"] - sm1["ifetch_prefetches"]
    assert demand == 1                            # the first line; the stream brings the rest
    assert n_lines - 1 <= sm1["ifetch_prefetches"] <= n_lines + 16   # at most depth lines past the code
    assert pf.cycles < base.cycles - 20 * 200     # no longer ~one L2 round trip per line


def test_skip_ahead_equals_dense_ticking_with_the_prefetcher():
    sparse, _ = _run(16)
    dense, _ = _run(16, dense=True)
    assert sparse.cycles == dense.cycles and sparse.per_sm == dense.per_sm


def test_config_checks():
    with pytest.raises(ConfigError, match="prefetch_lines.*needs 128-byte instruction lines"):
        load_config("gtx480", {"l1i.line_bytes": 64, "l1i.prefetch_lines": 16})
    assert load_config("gtx480").l1i.prefetch_lines == 0     # GPGPU-Sim has no instruction prefetcher
    # a perfect cache leaves nothing to prefetch: the depth is unused, as the cache's geometry is
    cfg = load_config("h200", {"gpu.n_sms": 1, "l1i.perfect": True})
    assert cfg.l1i.prefetch_lines == 16
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        rec = tlpsim.RawKernel(LONG, "long_chain")((1,), (32,), (tlpsim.asarray(np.ones(32, np.float32)),
                                                               tlpsim.zeros(32, np.float32), np.float32(0.5),
                                                               np.float32(0.5)))
    assert rec.stats.per_sm[0]["ifetch_requests"] == 0
