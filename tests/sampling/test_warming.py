"""Functional warming: the accesses of the CTAs a wave-sampled launch projects are
applied to the L2's tags (valid, dirty, LRU order) without being counted or timed, so
the launch's tail and the launches after it meet the caches a full run meets."""

from __future__ import annotations

import numpy as np

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.sampling import SamplingSpec
from tlpsim.sampling.waves import trace_accesses
from tlpsim.timing.cache import CacheArray
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE
from tlpsim.trace.format import DEGREE_COLUMNS, SPACE_CODES, Trace
from tlpsim.workloads.registry import get_workload


def _two_way() -> CacheArray:
    # 2 sets x 2 ways of 128-byte lines in 32-byte sectors; line addresses 0, 256, 512 share set 0
    return CacheArray(512, 2, line_bytes=128, sector_bytes=32)


def test_warming_installs_marks_and_orders_lines_without_counting():
    c = _two_way()
    c.warm(0, 0b0011)
    c.warm(256, 0b1111, dirty=True)
    assert c.state(0)[:2] == (0b0011, 0) and c.state(256)[:2] == (0b1111, 0b1111)
    c.warm(0, 0b0100)                 # a present line: more sectors valid, most recently used
    assert c.state(0)[0] == 0b0111
    c.warm(512, 0b0001)               # the set is full: the least recently used (256) goes
    assert 256 not in c and 0 in c and 512 in c
    assert (c.stats.accesses, c.stats.misses, c.stats.hits, c.stats.evictions, c.stats.writebacks) == (0, 0, 0, 0, 0)
    c.warm(768, 0b0001, allocate=False)   # a miss that does not allocate leaves the array alone
    assert 768 not in c


def test_the_l2s_dirty_share_counts_lines_with_a_dirty_sector():
    from types import SimpleNamespace

    from tlpsim.sampling.waves import l2_dirty_share

    c = _two_way()                    # 4 lines of capacity
    mem = SimpleNamespace(slices=[SimpleNamespace(cache=c)])
    assert l2_dirty_share(mem) == 0.0
    c.warm(0, 0b0011)
    c.warm(256, 0b0001, dirty=True)
    c.warm(128, 0b1111, dirty=True)
    assert l2_dirty_share(mem) == 0.5
    c.warm(512, 0b0001)               # evicts 0 (least recently used, clean)
    assert l2_dirty_share(mem) == 0.5
    c.warm(768, 0b0001)               # evicts 256 (dirty) from set 0
    assert l2_dirty_share(mem) == 0.25
    two = SimpleNamespace(slices=[SimpleNamespace(cache=c), SimpleNamespace(cache=_two_way())])
    assert l2_dirty_share(two) == 0.125   # a share of every slice's lines


def test_warming_leaves_a_set_whose_ways_wait_for_fills():
    c = _two_way()
    c.access(0)                        # misses reserve their lines: both ways wait for fills
    c.access(256)
    c.warm(512)
    assert 512 not in c and 0 in c and 256 in c


def _trace() -> Trace:
    """Two one-warp CTAs: warp 0 loads global sectors 0-3 (line 0) and 4 (line 1), then stores
    to shared memory; warp 1 does an atomic on sector 9 (line 2) and a local store."""
    g, sh, loc = SPACE_CODES["global"], SPACE_CODES["shared"], SPACE_CODES["local"]
    pcs = np.array([0, 1, 2, 3, 4], dtype=np.int32)
    return Trace("k", (2, 1, 1), (32, 1, 1), 2, 1, pc=pcs, warp=np.array([0, 0, 0, 1, 1]),
                 active=np.full(5, -1, dtype=np.int64), executed=np.full(5, -1, dtype=np.int64),
                 mem=np.array([0, -1, 1, 2, 3]), vclass=np.full(5, -1), warp_offsets=np.array([0, 3, 5]),
                 mem_space=np.array([g, sh, g, loc]), mem_size=np.array([4, 4, 4, 4]),
                 mem_sector_offsets=np.array([0, 5, 5, 6, 7]), sectors=np.array([0, 1, 2, 3, 4, 9, 1]),
                 mem_bank_degree=np.ones((4, DEGREE_COLUMNS), dtype=np.int32), warp_cta=np.array([0, 1]))


def test_trace_accesses_are_the_global_line_accesses_in_trace_order():
    is_store = np.array([False, False, True, False, True])
    is_atomic = np.array([False, False, False, True, False])
    assert trace_accesses(_trace(), 0, 2, is_store, is_atomic) == ([0, 128, 256], [0b1111, 0b0001, 0b0010],
                                                                   [READ, READ, ATOMIC])
    assert trace_accesses(_trace(), 1, 2, is_store, is_atomic) == ([256], [0b0010], [ATOMIC])
    assert trace_accesses(_trace(), 1, 1, is_store, is_atomic) == ([], [], [])
    stores = np.array([True, False, True, False, True])
    assert trace_accesses(_trace(), 0, 1, stores, is_atomic)[2] == [WRITE, WRITE]


def test_a_skip_warms_the_l2_with_every_skipped_line_access(monkeypatch):
    """The lines warmed are the LD/ST unit's own line accesses (`MemRows`, what a full run
    sends) of the skipped CTAs' global loads and stores, and the L2 then holds them."""
    from tlpsim.sampling import waves
    from tlpsim.timing.warp import MemRows

    seen = []

    def spy(trace, w0, w1, is_store, is_atomic):
        out = trace_accesses(trace, w0, w1, is_store, is_atomic)
        seen.append((trace, w0, w1, out))
        return out

    monkeypatch.setattr(waves, "trace_accesses", spy)
    cfg = load_config("gtx480", {"gpu.n_sms": 2, "gpu.max_ctas_per_sm": 1})
    with tlpsim.Device(mode="timing", config=cfg, sampling=SamplingSpec("waves", 0.1)) as dev:
        res = get_workload("matadd").execute("tiny", 1)
        mem = dev._timing.gpu.mem
        (trace, w0, w1, (lines, masks, kinds)), = seen
        rows = MemRows(trace)
        expected = [a for r in np.flatnonzero(trace.mem >= 0) for w in [int(np.searchsorted(
            trace.warp_offsets, r, side="right")) - 1] if w0 <= w < w1
            for a in rows.accesses(int(trace.mem[r])) if rows.space[int(trace.mem[r])] == SPACE_CODES["global"]]
        assert list(zip(lines, masks)) == expected and set(kinds) == {READ, WRITE}
        # the L2 holds the last skipped CTA's lines (only the tail ran after it)
        last = lines[-24:]
        assert all(ln in mem.slices[mem.partition_of(ln)].cache for ln in last)
    (rec,) = res.launches
    w = rec.sampling["waves"]
    assert w["skipped_ctas"] > 0 and w["warmed_l2_lines"] == len(lines) > 0
    assert (w0, w1) == (w["first_skipped_cta"] * 8, (w["first_skipped_cta"] + w["skipped_ctas"]) * 8)
    assert res.verified
