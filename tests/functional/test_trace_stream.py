"""Streamed traces (trace.spill): a launch's trace in bounded pieces equals the
in-memory one exactly, the timing model's statistics do not depend on how it was
cut, no step holds the trace whole, and a damaged file is reported, never used."""

import numpy as np
import pytest

import tlpsim
from tlpsim.cachefile import CacheWarning
from tlpsim.trace.cache import TraceCache
from tlpsim.trace.format import Trace
from tlpsim.trace import spill
from tlpsim.trace.spill import BadTrace, TraceFile, TraceWriter

# divergent loops of different lengths per warp, global loads and stores, shared
# memory with bank conflicts, a barrier: every column of the trace is exercised
SRC = r'''extern "C" __global__ void k(const int* a, int* b, int n) {
    __shared__ int s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (int j = 0; j < (a[i % n] & 7) + (threadIdx.x >> 5); ++j) acc += a[(i * 3 + j * 33) % n];
    s[(threadIdx.x * 2) & 255] = acc;
    __syncthreads();
    b[i] = s[threadIdx.x ^ 1] + (i & 1 ? acc : -acc); }'''
GRID, BLOCK = (12,), (128,)
N = 1536


def _launch(monkeypatch, *, chunk_rows=None, memory_rows=None, chunk_threads=None, mode="functional", cache=False):
    for name, value in (("TLPSIM_TRACE_CHUNK_ROWS", chunk_rows), ("TLPSIM_TRACE_MEMORY_ROWS", memory_rows)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
    with tlpsim.Device(mode=mode, trace_cache=cache, chunk_threads=chunk_threads) as dev:
        k = tlpsim.RawKernel(SRC, "k")
        a = (np.arange(N, dtype=np.int64) * 2654435761 % 1000).astype(np.int32)
        db = tlpsim.zeros(N, np.int32)
        rec = k(GRID, BLOCK, (tlpsim.asarray(a), db, np.int32(N)))
        dev.synchronize()
        return rec, db.get()


def _assert_same_trace(whole: Trace, other) -> None:
    got = other.materialize()
    for name, arr in whole.arrays().items():
        np.testing.assert_array_equal(arr, got.arrays()[name], err_msg=name)
        assert arr.dtype == got.arrays()[name].dtype, name
    assert whole.summary() == other.summary()
    assert (whole.warp_instructions, whole.thread_instructions, whole.active_thread_instructions) == \
        (other.warp_instructions, other.thread_instructions, other.active_thread_instructions)


def test_a_streamed_trace_equals_the_in_memory_one(monkeypatch):
    whole, b1 = _launch(monkeypatch)
    assert isinstance(whole.trace, Trace) and whole.trace.warp_instructions > 2000
    # 300-row runs and pieces, two CTAs per functional chunk, nothing kept in memory
    streamed, b2 = _launch(monkeypatch, chunk_rows=300, memory_rows=0, chunk_threads=256)
    assert isinstance(streamed.trace, TraceFile) and streamed.trace.n_pieces > 6
    np.testing.assert_array_equal(b1, b2)
    _assert_same_trace(whole.trace, streamed.trace)
    # each piece is the same as the whole trace's rows of its warps
    t = streamed.trace
    for k in range(t.n_pieces):
        p = t.piece(k)
        rows = slice(int(t.warp_offsets[p.first_warp]), int(t.warp_offsets[p.first_warp + p.n_warps]))
        np.testing.assert_array_equal(p.pc, whole.trace.pc[rows])
        assert t.piece_index(p.first_warp) == k
        assert p.pc.flags.owndata  # slices the timing model keeps must not pin the piece's whole buffer


def test_in_memory_chunks_give_the_same_trace(monkeypatch):
    """Small runs and pieces that stay in memory are concatenated into the same arrays."""
    whole, _ = _launch(monkeypatch)
    pieces, _ = _launch(monkeypatch, chunk_rows=300, chunk_threads=256)
    assert isinstance(pieces.trace, Trace)
    _assert_same_trace(whole.trace, pieces.trace)


def test_the_trace_is_never_held_whole(monkeypatch):
    """Every run the recorder hands over and every piece the writer makes stay
    within the row budget (a piece is at least one CTA)."""
    made: list[TraceWriter] = []
    stored: list = []
    real_init, real_stored = TraceWriter.__init__, spill._Stored.__init__

    def spy(self, **kw):
        real_init(self, **kw)
        made.append(self)

    def spy_stored(self, scratch, piece):
        real_stored(self, scratch, piece)
        stored.append(self)

    monkeypatch.setattr(TraceWriter, "__init__", spy)
    monkeypatch.setattr(spill._Stored, "__init__", spy_stored)
    rec, _ = _launch(monkeypatch, chunk_rows=300, memory_rows=0)  # one functional chunk of all 12 CTAs
    (w,) = made
    total = rec.trace.warp_instructions
    per_cta = np.diff(rec.trace.warp_offsets[::rec.trace.warps_per_cta])
    # a run ends at the first record that reaches 300 rows: at most 299 + one record (the chunk's warps)
    assert len(w.run_sizes) > 5 and max(w.run_sizes) < 300 + 48
    assert len(w.piece_sizes) > 5 and max(w.piece_sizes) <= max(300, int(per_cta.max()))
    assert sum(w.piece_sizes) == total and max(w.piece_sizes) < total // 4
    assert w.held == [] and rec.trace.piece_sizes == w.piece_sizes
    # between runs and pieces only headers are kept: the rows are in the scratch and trace files
    assert w.template is not None and w.template.pc.size == 0 and w.runs == []
    assert len(stored) == len(w.run_sizes) and all(r.template.pc.size == 0 for r in stored)


def _stats(rec) -> dict:
    d = rec.stats.to_dict()
    d.pop("wall_seconds", None)
    return d


def test_timing_statistics_do_not_depend_on_the_pieces(monkeypatch):
    whole, _ = _launch(monkeypatch, mode="timing")
    streamed, _ = _launch(monkeypatch, mode="timing", chunk_rows=300, memory_rows=0, chunk_threads=256)
    assert isinstance(whole.trace, Trace) and isinstance(streamed.trace, TraceFile)
    assert _stats(whole) == _stats(streamed)


def test_a_corrupt_spill_file_is_reported_when_read(monkeypatch):
    rec, _ = _launch(monkeypatch, chunk_rows=300, memory_rows=0)
    t = rec.trace
    part = t._parts[2]
    fd = t._fh.fileno()
    byte = bytearray(np.frombuffer(__import__("os").pread(fd, 1, part["offset"] + 5), np.uint8))
    __import__("os").pwrite(fd, bytes([byte[0] ^ 0x40]), part["offset"] + 5)
    t.piece(1)  # other pieces are unaffected
    with pytest.raises(BadTrace, match=r"\(spill file\) is corrupt \(piece 2: checksum mismatch\)"):
        t.piece(2)


def test_a_large_cache_entry_is_streamed_and_a_corrupt_one_rebuilt(monkeypatch, tmp_path):
    first, b1 = _launch(monkeypatch, chunk_rows=300, memory_rows=0, cache=str(tmp_path))
    (path,) = tmp_path.glob("*.trace")
    again, b2 = _launch(monkeypatch, chunk_rows=300, memory_rows=0, cache=str(tmp_path))
    assert again.from_cache and isinstance(again.trace, TraceFile) and again.trace.n_pieces > 6
    np.testing.assert_array_equal(b1, b2)
    _assert_same_trace(first.trace.materialize(), again.trace)
    # with a larger in-memory budget the same entry is read into memory
    small, _ = _launch(monkeypatch, chunk_rows=300, cache=str(tmp_path))
    assert small.from_cache and isinstance(small.trace, Trace)
    # a flipped bit in the fourth piece: detected on load (every byte is checked), rebuilt
    raw = bytearray(path.read_bytes())
    raw[again.trace._parts[3]["offset"] + 3] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.warns(CacheWarning, match=f"trace cache entry {path} is corrupt \\(piece 3: checksum mismatch\\)"):
        rebuilt, b3 = _launch(monkeypatch, chunk_rows=300, memory_rows=0, cache=str(tmp_path))
    assert not rebuilt.from_cache
    np.testing.assert_array_equal(b1, b3)
    assert TraceCache(tmp_path).load(path.stem) is not None  # the rebuilt entry is good
    # truncated (an interrupted copy): reported as such, rebuilt
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.warns(CacheWarning, match="is truncated or was not completely written"):
        assert TraceCache(tmp_path).load(path.stem) is None
