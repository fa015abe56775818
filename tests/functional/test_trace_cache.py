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


def _entry(cache_dir, name, size, age):
    """A cache file of `size` bytes last used `age` seconds ago (make_room reads only names, sizes, times)."""
    import os
    import time

    p = cache_dir / f"{name}.trace"
    p.write_bytes(b"x" * size)
    t = time.time() - age
    os.utime(p, (t, t))
    return p


def test_make_room_removes_least_recently_used_entries_down_to_the_limit(tmp_path):
    old, mid, new = _entry(tmp_path, "old", 400, 30), _entry(tmp_path, "mid", 400, 20), _entry(tmp_path, "new", 400, 10)
    other = tmp_path / "trace.abc.tmp"  # another writer's entry in progress: never removed
    other.write_bytes(b"y" * 1000)
    cache = TraceCache(tmp_path, max_bytes=800, reserve_bytes=0)
    assert cache.make_room() == [old]
    assert not old.exists() and mid.exists() and new.exists() and other.exists()
    assert cache.make_room() == []  # 800 bytes: at the limit
    assert TraceCache(tmp_path, max_bytes=0, reserve_bytes=0).make_room() == [mid, new]
    assert TraceCache(tmp_path, max_bytes=None, reserve_bytes=0).make_room() == []


def test_make_room_keeps_the_disk_reserve(tmp_path):
    import shutil

    a, b = _entry(tmp_path, "a", 100, 20), _entry(tmp_path, "b", 100, 10)
    free = shutil.disk_usage(tmp_path).free
    # a reserve just above the free space: one entry's bytes are enough
    cache = TraceCache(tmp_path, max_bytes=None, reserve_bytes=free + 50)
    assert cache.make_room() == [a]
    assert b.exists()


def test_a_hit_marks_the_entry_recently_used_and_a_new_entry_evicts_the_older_one(tmp_path):
    import os

    _run(tmp_path)
    (path,) = list(tmp_path.glob("*.trace"))
    os.utime(path, (1_000_000, 1_000_000))
    rec, _, _ = _run(tmp_path)
    assert rec.from_cache and path.stat().st_mtime > 1_000_000
    # a limit of one byte keeps only the entry being written: the replayed one goes first
    os.environ["TLPSIM_TRACE_CACHE_MAX"] = "1"
    try:
        with tlpsim.Device(trace_cache=str(tmp_path)):
            k = tlpsim.RawKernel(SRC, "k")
            a = np.arange(1000, dtype=np.int32) * 11
            rec = k((4,), (256,), (tlpsim.asarray(a), tlpsim.zeros(1000, np.int32), tlpsim.zeros(8, np.int32),
                                   np.int32(1000)))
    finally:
        del os.environ["TLPSIM_TRACE_CACHE_MAX"]
    assert not rec.from_cache and not path.exists()
    assert len(list(tmp_path.glob("*.trace"))) == 1


@pytest.mark.parametrize(("raw", "want"), [("20G", 20 << 30), ("500M", 500 << 20), ("1.5GiB", 3 << 29),
                                           ("4096", 4096), ("none", None), ("", 16 << 30)])
def test_cache_limit_from_the_environment(monkeypatch, raw, want):
    from tlpsim.trace.cache import cache_limits

    monkeypatch.setenv("TLPSIM_TRACE_CACHE_MAX", raw)
    assert cache_limits()[0] == want


def test_a_bad_cache_limit_names_the_variable(monkeypatch, tmp_path):
    from tlpsim.errors import ConfigError

    monkeypatch.setenv("TLPSIM_TRACE_CACHE_RESERVE", "lots")
    with pytest.raises(ConfigError, match=r"TLPSIM_TRACE_CACHE_RESERVE='lots': expected a size in bytes"):
        TraceCache(tmp_path)


def test_a_full_disk_while_a_trace_streams_is_a_clear_error(tmp_path, monkeypatch):
    import errno

    from tlpsim.errors import TlpsimError
    from tlpsim.trace import spill

    def full(self, arrays):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(spill._File, "write_arrays", full)
    monkeypatch.setenv("TLPSIM_TRACE_MEMORY_ROWS", "0")  # the trace streams through the cache file
    with pytest.raises(TlpsimError, match=rf"kernel k: no space left on the disk of {tmp_path} for this launch's "
                                          r"trace \(0 launches of this run finished before it\)\. Point TLPSIM_CACHE_DIR"):
        _run(tmp_path)
