"""cp.async (Ampere's global-to-shared copies): each copy completes when issued, the
bytes past src-size are zero-filled, commit/wait groups are no-ops, and the
instruction reports its shared addresses."""

from __future__ import annotations

import numpy as np
import pytest

from tlpsim.errors import UnsupportedPTX
from tlpsim.functional.memory import DeviceMemory

REGS = ".reg .b32 %r<16>; .reg .b64 %rd<16>;\n.shared .align 16 .b8 sm[1024];"
N = 32


def test_cp_async_copies_16_bytes_and_zero_fills_past_src_size(run_ptx):
    mem = DeviceMemory()
    base = mem.alloc(16 * N, "src")
    src = np.arange(4 * N, dtype=np.uint32) + 100
    mem.write(base, src)
    lane = np.arange(N, dtype=np.uint64)
    body = "\n".join([
        "cp.async.cg.shared.global [%r1], [%rd1], 16, %r2;",
        "cp.async.commit_group;",
        "cp.async.wait_group 0;",
        "ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r1];",
    ])
    # lane k copies 16 bytes of which src-size = (k % 5) * 4 are read: the rest are zero
    out = run_ptx(body, {"%r1": (16 * lane).astype(np.uint32), "%rd1": base + 16 * lane,
                         "%r2": ((lane % 5) * 4).astype(np.uint32)}, decls=REGS, memory=mem)
    got = np.stack([out.reg(r) for r in ("%r4", "%r5", "%r6", "%r7")], axis=1)
    want = src.reshape(N, 4).copy()
    for k in range(N):
        want[k, min(k % 5, 4):] = 0
    assert np.array_equal(got, want)
    assert np.array_equal(out.addresses[0], 16 * lane)  # the shared destination


def test_cp_async_without_src_size_and_with_ca(run_ptx):
    mem = DeviceMemory()
    base = mem.alloc(8 * N, "src")
    mem.write(base, np.arange(2 * N, dtype=np.uint32))
    lane = np.arange(N, dtype=np.uint64)
    body = "cp.async.ca.shared.global [%r1], [%rd1], 8;\ncp.async.wait_all;\nld.shared.v2.u32 {%r4, %r5}, [%r1];"
    out = run_ptx(body, {"%r1": (8 * lane).astype(np.uint32), "%rd1": base + 8 * lane}, decls=REGS, memory=mem)
    assert np.array_equal(out.reg("%r4"), 2 * lane.astype(np.uint32))
    assert np.array_equal(out.reg("%r5"), 2 * lane.astype(np.uint32) + 1)


def test_bulk_copies_are_refused(run_ptx):
    with pytest.raises(UnsupportedPTX, match="cp.async.{ca,cg}.shared.global"):
        run_ptx("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r2];",
                {}, decls=REGS)
