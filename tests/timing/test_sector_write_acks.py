"""A write to GPGPU-Sim's sectored L2 is split into one request per sector of the
warp's coalesced segment (memory_sub_partition::breakdown_request_to_sector_requests),
and every one of them is acknowledged: a 128-byte store comes back as 4 ack packets,
which the SM counts (inc_store_req per sector with the L1D's sector MSHRs) before the
warp may finish (`l2.sector_write_acks`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.timing.cache import MSHR, CacheArray
from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.ldst import LdstParams, LdstUnit, _Instr
from tlpsim.timing.mem_types import WRITE, MemRequest, sector_requests
from tlpsim.timing.queues import TimedQueue

from l2_slice_harness import run_slice


@pytest.mark.parametrize("mask,n", [(0b1111, 4), (0b1001, 4), (0b0110, 4), (0b0011, 2), (0b1100, 2),
                                    (0b0100, 1), (0b0001, 1)])
def test_a_write_splits_into_the_sectors_of_its_segment(mask, n):
    """Both halves touched: a 128-byte segment, all 4 sectors (written or not); one half:
    its 64 bytes or the one sector."""
    assert sector_requests(mask) == n


def _slice(reqs, dense=False, **kw):
    sm, l2 = run_slice(reqs, WRITE, dense=dense, **kw)
    sm.got = [g[:3] for g in sm.got]   # (cycle, token, sector mask)
    return sm, l2


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("sector_lookups", [False, True])
def test_a_line_write_is_acknowledged_per_sector_one_a_cycle(sector_lookups, dense):
    """Pushed at 0, accepted at 1, looked up at 1 + 10: the first ack is seen at 12 and
    the others, from the reply buffer, at 13, 14 and 15, each naming its sector (the
    same with idle skipping and with the dense reference engine)."""
    w = MemRequest(WRITE, 0, 0b1111, src_sm=0, token="w")
    sm, l2 = _slice([w], dense=dense, sector_write_acks=True, sector_lookups=sector_lookups)
    assert sm.got == [(12, "w", 1), (13, "w", 2), (14, "w", 4), (15, "w", 8)]
    assert l2.stats.write_acks == 4 and l2.stats.replies == 4 and l2.stats.writes == 1


@pytest.mark.parametrize("mask,acks", [(0b1001, [1, 2, 4, 8]), (0b1100, [4, 8]), (0b0010, [2])])
def test_partial_writes_are_acknowledged_per_sector_of_their_segment(mask, acks):
    sm, l2 = _slice([MemRequest(WRITE, 0, mask, src_sm=0, token="w")], sector_write_acks=True)
    assert [m for _, _, m in sm.got] == acks
    assert [c for c, _, _ in sm.got] == list(range(12, 12 + len(acks)))


def test_off_or_unsectored_one_ack_per_write():
    for kw in ({"sector_write_acks": False}, {"sector_write_acks": True, "sector_bytes": None}):
        sm, l2 = _slice([MemRequest(WRITE, 0, 0b1111, src_sm=0, token="w")], **kw)
        assert sm.got == [(12, "w", 0b1111)] and l2.stats.write_acks == 1


@pytest.mark.parametrize("per_sector,mask,expected", [(False, 0b1111, 1), (True, 0b1111, 4), (True, 0b0011, 2),
                                                      (True, 0b0100, 1)])
def test_the_warp_waits_for_every_ack(per_sector, mask, expected):
    """The LD/ST unit counts the acks it will receive on the warp (GPGPU-Sim's
    inc_store_req per sector), and each ack it receives is one less."""
    l1d = CachePort("l1d", CacheArray(16384, 4, 128), MSHR(8, 8), 35)
    l1c = CachePort("l1c", CacheArray(8192, 2, 64), MSHR(2, 32), 1)
    u = LdstUnit(0, LdstParams(l1_pipeline=0, sector_write_acks=per_sector), l1d, l1c, TimedQueue("out", 64),
                 TimedQueue("in", 8), lambda a: 0)
    u._period = 1
    warp = SimpleNamespace(inflight=1, done=False)   # 1: the store instruction itself
    ins = _Instr(warp, 0, [], WRITE, l1d, None)
    assert u._lookup(ins, 0x1000, mask, 10)
    assert warp.inflight == 1 + expected
    u._done_one(warp, 11)                            # the unit has done with the instruction
    for k in range(expected):
        assert warp.inflight == expected - k         # not drained before its last ack
        u._reply(MemRequest(WRITE, 0x1000, 1, 0, token=("ack", warp), is_reply=True), 100 + k)
    assert warp.inflight == 0


STORE = r'''
extern "C" __global__ void store(float* out, int offset) {
    out[offset + threadIdx.x] = threadIdx.x;
}'''


@pytest.mark.parametrize("threads,offset,acks", [(32, 0, 4), (16, 16, 2), (2, 8, 1)])
def test_end_to_end_the_slices_send_an_ack_per_sector_and_the_launch_finishes(threads, offset, acks):
    """One warp stores `threads` floats from float `offset` of a 128-byte line: gtx480
    (sector_write_acks on) gets 4, 2 or 1 acks back, the option off 1; the result is
    written either way and the launch ends once the last ack is in."""
    cycles = {}
    for on in (True, False):
        with tlpsim.Device(mode="timing", config=load_config("gtx480", {"l2.sector_write_acks": on})):
            out = tlpsim.zeros(64, np.float32)
            rec = tlpsim.RawKernel(STORE, "store")((1,), (threads,), (out, np.int32(offset)))
            got = out.get()
        assert np.array_equal(got[offset:offset + threads], np.arange(threads, dtype=np.float32))
        slices = rec.stats.components["l2_slices"]
        assert sum(s["write_acks"] for s in slices) == (acks if on else 1)
        cycles[on] = rec.stats.cycles
    assert cycles[True] >= cycles[False]
