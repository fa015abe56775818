"""The trace cache replays a launch (trace and memory effects) and never uses a
stale or corrupt file."""

import numpy as np
import pytest

import tlpsim
from tlpsim.cachefile import CacheWarning
from tlpsim.trace.cache import TraceCache

SRC = r'''extern "C" __global__ void k(const int* a, int* b, int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { b[i] = a[i] * 3 + (i & 1 ? a[i] : -a[i]); atomicAdd(&hist[a[i] & 7], 1); } }'''


def _run(cache_dir):
    with tlpsim.Device(trace_cache=str(cache_dir)):
        k = tlpsim.RawKernel(SRC, "k")
        a = np.arange(1000, dtype=np.int32) * 7
        da, db, dh = tlpsim.asarray(a), tlpsim.zeros(1000, np.int32), tlpsim.zeros(8, np.int32)
        rec = k((4,), (256,), (da, db, dh, np.int32(1000)))
        return rec, db.get(), dh.get()


def test_second_launch_is_replayed_identically(tmp_path):
    rec1, b1, h1 = _run(tmp_path)
    rec2, b2, h2 = _run(tmp_path)
    assert not rec1.from_cache and rec2.from_cache
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(h1, h2)
    for name, arr in rec1.trace.arrays().items():
        np.testing.assert_array_equal(arr, rec2.trace.arrays()[name], err_msg=name)
    assert rec1.trace.summary() == rec2.trace.summary()


def test_corrupt_or_stale_file_is_rebuilt(tmp_path):
    _run(tmp_path)
    (path,) = list(tmp_path.glob("*.trace"))
    raw = bytearray(path.read_bytes())
    raw[12] ^= 0xFF  # inside the first piece's first array (after the 8-byte magic)
    path.write_bytes(bytes(raw))
    with pytest.warns(CacheWarning, match=f"trace cache entry {path} is corrupt \\(piece 0: checksum mismatch\\)"):
        assert TraceCache(tmp_path).load(path.stem) is None
    with pytest.warns(CacheWarning, match=f"trace cache entry {path} is corrupt"):
        rec, b, _ = _run(tmp_path)
    assert not rec.from_cache
    assert b[3] == 7 * 3 * 3 + 7 * 3


def test_different_inputs_miss(tmp_path):
    _run(tmp_path)
    with tlpsim.Device(trace_cache=str(tmp_path)):
        k = tlpsim.RawKernel(SRC, "k")
        a = np.arange(1000, dtype=np.int32) * 5
        rec = k((4,), (256,), (tlpsim.asarray(a), tlpsim.zeros(1000, np.int32), tlpsim.zeros(8, np.int32),
                               np.int32(1000)))
        assert not rec.from_cache


def test_memory_diff_by_blocks_equals_the_whole_comparison():
    """A launch's written bytes are compared a block at a time (bounded memory); runs
    that cross a block boundary come out as one run."""
    from tlpsim.functional.replay import memory_diff

    before = np.zeros(20, np.uint8)
    after = before.copy()
    after[[2, 3, 4, 5, 9, 15, 16, 19]] = [1, 2, 3, 4, 5, 6, 7, 8]
    for block in (1, 3, 4, 5, 16, 1 << 24):
        d = memory_diff(before, after, block=block)
        assert d["starts"].tolist() == [2, 9, 15, 19] and d["lengths"].tolist() == [4, 1, 2, 1], block
        assert d["bytes"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert memory_diff(before, before)["starts"].size == 0
