"""Corrupted caches cost only the cache: a garbled or truncated PTX-cache or
trace-cache entry is ignored (with a message) and the run recomputes it; asked for
directly, a corrupt trace file is an error naming it."""

from __future__ import annotations

import os

import pytest
from badinput_helpers import assert_user_error, cli


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(d))
    return d


@pytest.mark.parametrize("damage", ["garble", "truncate"])
def test_corrupt_cache_entries_are_recomputed(cache, tmp_path, damage):
    first = cli("run", "vecadd", "--size", "tiny", "--run-dir", tmp_path / "r1")
    assert first.exit_code == 0, first.output
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert {p.parent.name for p in entries} >= {"ptx", "traces"}, entries
    for p in entries:
        p.write_bytes(os.urandom(300) if damage == "garble" else b"")
    again = cli("run", "vecadd", "--size", "tiny", "--run-dir", tmp_path / "r2")
    assert again.exit_code == 0 and "Traceback" not in again.output, again.output
    assert "verify c: OK" in again.output
    assert all(p.stat().st_size > 300 for p in entries if p.suffix == ".npz")  # the trace was stored anew


def test_trace_command_on_a_corrupt_trace_names_it(tmp_path):
    f = tmp_path / "t.npz"
    f.write_bytes(os.urandom(100))
    assert_user_error(cli("trace", f), f"{f} is not a valid trace of this tlpsim version: it is not a tlpsim trace file (bad magic number)")
    assert_user_error(cli("trace", tmp_path / "none.npz"), f"no such trace file: {tmp_path / 'none.npz'}")


def test_corrupt_ptx_cache_entry_is_recompiled_with_a_message(cache, tmp_path):
    # a new process: the PTX cache on disk is read (in-process compiles are memoised)
    import subprocess
    import sys

    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(int* p) { p[threadIdx.x] = 7; }\n')
    cmd = [sys.executable, "-m", "tlpsim.cli", "compile", str(src)]
    assert subprocess.run(cmd, capture_output=True, text=True, timeout=300).returncode == 0
    (entry,) = (cache / "ptx").glob("*.json")
    entry.write_bytes(b"\x9e" + os.urandom(200))
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert f"warning: PTX cache entry {entry}" in res.stderr and "ignoring it and rebuilding it" in res.stderr
    assert "k " in res.stdout
