"""Cache entries are checked before use (tlpsim.cachefile): a PTX-cache entry with a
flipped bit, or a PTX- or trace-cache file swapped for another entry's, is reported
with a CacheWarning naming the file and rebuilt; results stay correct."""

from __future__ import annotations

import json
import shutil
import struct

import numpy as np
import pytest

import tlpsim
from tlpsim.cachefile import CacheWarning
from tlpsim.frontend.nvcc import compile_cuda_source

SCALE = r'''extern "C" __global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 3.0f; }'''
THREE, SIX = "0f40400000", "0f40C00000"  # 3.0f and 6.0f differ in one bit


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _scale(source=SCALE, trace_cache=False):
    x = np.arange(100, dtype=np.float32)
    with tlpsim.Device(trace_cache=trace_cache):
        k = tlpsim.RawKernel(source, "scale")
        y = tlpsim.zeros(100, np.float32)
        rec = k((1,), (128,), (tlpsim.asarray(x), y, np.int32(100)))
        return rec, k.program, y.get(), x


def test_flipped_bit_in_a_ptx_cache_entry_is_detected_and_recompiled(cache_root):
    _, prog, _, _ = _scale()
    path = cache_root / "ptx" / f"{prog.compile_result.cache_key}.json"
    text = path.read_text()
    assert text.count(THREE) == 1
    path.write_text(text.replace(THREE, SIX))  # still valid JSON, still valid PTX: silently wrong before
    with pytest.warns(CacheWarning, match=f"PTX cache entry {path} is corrupt \\(checksum mismatch\\); ignoring "
                                          "it and rebuilding it"):
        _, prog, y, x = _scale()
    assert not prog.compile_result.from_cache
    np.testing.assert_array_equal(y, x * 3)
    assert THREE in path.read_text()  # rewritten
    _, prog, _, _ = _scale()
    assert prog.compile_result.from_cache


def test_ptx_cache_file_swapped_for_another_compilation(cache_root):
    other = compile_cuda_source(SCALE.replace("3.0f", "5.0f"))
    mine = compile_cuda_source(SCALE)
    mine_path = cache_root / "ptx" / f"{mine.cache_key}.json"
    shutil.copy(cache_root / "ptx" / f"{other.cache_key}.json", mine_path)
    with pytest.warns(CacheWarning, match=f"PTX cache entry {mine_path} holds another compilation \\(key "
                                          f"{other.cache_key[:16]}"):
        again = compile_cuda_source(SCALE)
    assert not again.from_cache and again.ptx == mine.ptx


def test_trace_cache_file_swapped_for_another_launch(tmp_path):
    traces = tmp_path / "traces"
    rec3, _, _, _ = _scale(trace_cache=str(traces))
    (p3,) = traces.glob("*.trace")
    rec5, _, y5, x = _scale(SCALE.replace("3.0f", "5.0f"), trace_cache=str(traces))
    (p5,) = set(traces.glob("*.trace")) - {p3}
    shutil.copy(p5, p3)  # a file of the same format and valid checksum, for another launch
    with pytest.warns(CacheWarning, match=f"trace cache entry {p3} holds the trace of another launch"):
        rec, _, y, x = _scale(trace_cache=str(traces))
    assert not rec.from_cache and rec.trace.warp_instructions == rec3.trace.warp_instructions
    np.testing.assert_array_equal(y, x * 3)
    rec, _, y, _ = _scale(trace_cache=str(traces))  # rebuilt: replayed from now on
    assert rec.from_cache
    np.testing.assert_array_equal(y, x * 3)


def test_trace_cache_header_is_checksummed(tmp_path):
    traces = tmp_path / "traces"
    _scale(trace_cache=str(traces))
    (path,) = traces.glob("*.trace")
    raw = path.read_bytes()
    off, length, magic = struct.unpack("<QQ8s", raw[-24:])
    footer = json.loads(raw[off:off + length])
    footer["trace"]["n_warps"] += 1  # a well-formed file (valid piece checksums) with a wrong footer
    text = json.dumps(footer).encode()
    path.write_bytes(raw[:off] + text + struct.pack("<QQ8s", off, len(text), magic))
    with pytest.warns(CacheWarning, match=f"trace cache entry {path} is corrupt \\(footer checksum mismatch\\)"):
        rec, _, y, x = _scale(trace_cache=str(traces))
    assert not rec.from_cache and rec.trace.n_warps == 4
    np.testing.assert_array_equal(y, x * 3)


def test_tlpsim_trace_reads_a_renamed_file_and_rejects_a_corrupt_one(tmp_path):
    from click.testing import CliRunner

    from tlpsim.cli import main

    traces = tmp_path / "traces"
    _scale(trace_cache=str(traces))
    (path,) = traces.glob("*.trace")
    renamed = tmp_path / "scale.trace"  # the key check is for cache lookups, not for reading a file
    shutil.copy(path, renamed)
    res = CliRunner().invoke(main, ["trace", str(renamed)], catch_exceptions=False)
    assert res.exit_code == 0 and res.output.startswith("kernel scale  grid [1, 1, 1]  block [128, 1, 1]  warps 4")
    (tmp_path / "bad.trace").write_bytes(b"not a trace file")
    res = CliRunner().invoke(main, ["trace", str(tmp_path / "bad.trace")], catch_exceptions=False)
    assert res.exit_code == 2 and "bad.trace is not a valid trace of this tlpsim version: it is truncated" in res.output
