"""A read at GPGPU-Sim's sectored L2 is split into one request per sector of its
segment (memory_sub_partition::breakdown_request_to_sector_requests), and each sector
comes back as its own packet (32 bytes of data + the header: one 40-byte flit on
GTX480's interconnect). The SM's sector MSHR uses the line once all of them are back
(baseline_cache::fill's pending_read) (`l2.sector_replies`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.timing.cache import HIT, MSHR, CacheArray
from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.icnt import packet_flits
from tlpsim.timing.ldst import LdstParams, LdstUnit, _Instr
from tlpsim.timing.mem_types import READ, MemRequest
from tlpsim.timing.queues import TimedQueue

from l2_slice_harness import run_slice


def _slice(reqs, **kw):
    return run_slice(reqs, READ, **kw)


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("sector_lookups", [False, True])
def test_a_line_read_hit_comes_back_per_sector_one_a_cycle(sector_lookups, dense):
    """Pushed at 0, accepted at 1, looked up at 1 + 10: the first sector is seen at 12
    and the others, from the reply buffer, at 13, 14 and 15, each naming its sector and
    that there are 4 (the same with idle skipping and the dense reference engine)."""
    sm, l2 = _slice([MemRequest(READ, 0, 0b1111, src_sm=0, token="r")], dense=dense, hot=[0],
                    sector_replies=True, sector_lookups=sector_lookups)
    assert sm.got == [(12, "r", 1, 4), (13, "r", 2, 4), (14, "r", 4, 4), (15, "r", 8, 4)]
    assert l2.stats.replies == 4 and l2.stats.reads == 1


@pytest.mark.parametrize("mask,pieces", [(0b1001, [1, 2, 4, 8]), (0b1100, [4, 8]), (0b0010, [2])])
def test_partial_reads_come_back_per_sector_of_their_segment(mask, pieces):
    """Both halves touched: all 4 sectors of the 128-byte segment; one half: its
    sectors; a single sector: one reply, not split."""
    sm, _ = _slice([MemRequest(READ, 0, mask, src_sm=0, token="r")], hot=[0], sector_replies=True)
    assert [m for _, _, m, _ in sm.got] == pieces
    assert [p for _, _, _, p in sm.got] == [len(pieces)] * len(pieces)
    assert [c for c, _, _, _ in sm.got] == list(range(12, 12 + len(pieces)))


def test_a_miss_is_answered_per_sector_after_the_fill():
    """Looked up at 11 (miss: DRAM read queued, pushed at 11, taken at 12, answered 20
    cycles later at 32, seen by the slice at 33): filled at 33, the first sector goes
    out at 34 from the reply buffer and the others one a cycle."""
    sm, l2 = _slice([MemRequest(READ, 0, 0b1111, src_sm=0, token="r")], sector_replies=True)
    cycles = [c for c, _, _, _ in sm.got]
    assert [m for _, _, m, _ in sm.got] == [1, 2, 4, 8]
    assert cycles == list(range(cycles[0], cycles[0] + 4))
    off, _ = _slice([MemRequest(READ, 0, 0b1111, src_sm=0, token="r")], sector_replies=False)
    assert off.got == [(cycles[0], "r", 0b1111, 1)]      # off: one reply when the first piece comes
    assert l2.stats.dram_fills == 1


def test_off_or_unsectored_one_reply_per_read():
    for kw in ({"sector_replies": False}, {"sector_replies": True, "sector_bytes": None}):
        sm, l2 = _slice([MemRequest(READ, 0, 0b1111, src_sm=0, token="r")], hot=[0], **kw)
        assert sm.got == [(12, "r", 0b1111, 1)] and l2.stats.replies == 1


def test_a_sector_reply_is_one_flit_on_gtx480s_interconnect():
    piece = MemRequest(READ, 0, 0b0100, 0, is_reply=True)
    whole = MemRequest(READ, 0, 0b1111, 0, is_reply=True)
    assert packet_flits(piece, 40) == 1 and packet_flits(whole, 40) == 4


def _unit():
    l1d = CachePort("l1d", CacheArray(16384, 4, 128), MSHR(8, 8), 35)
    l1c = CachePort("l1c", CacheArray(8192, 2, 64), MSHR(2, 32), 1)
    u = LdstUnit(0, LdstParams(l1_pipeline=0), l1d, l1c, TimedQueue("out", 64), TimedQueue("in", 8), lambda a: 0)
    u._period = 1
    return u


def _pieces(addr, token, parts=4):
    """The replies an L2 slice splits a read of line `addr` into, by sector: the first
    (sector 0) carries the gathering, the others name it (`group`), as _sector_pieces does."""
    out = []
    for s in range(parts):
        p = MemRequest(READ, addr, 1 << s, 0, token=token, is_reply=True)
        p.t_l2, p.parts = 0, parts
        if out:
            p.group = out[0]
        out.append(p)
    return out


def test_the_unit_uses_a_split_reply_once_every_piece_is_back():
    """A bypassing load of two lines: the pieces of each line are gathered on their own
    (the instruction is the token of both), in any order; the load completes only when
    the last piece of its last line is in, and each piece counts in the memory latency."""
    u = _unit()
    warp = SimpleNamespace(inflight=1, done=False)
    ins = _Instr(warp, 0, [], READ, None, None)
    ins.outstanding = 2                               # two lines requested
    a, b = _pieces(0x1000, ins), _pieces(0x2000, ins)
    order = [a[2], b[0], a[0], b[3], a[3], b[1]]
    for k, p in enumerate(order):
        u._reply(p, 10 + k)
        assert ins.outstanding == 2                   # neither line complete yet
    u._reply(a[1], 20)                                # line 0x1000's fourth piece
    assert ins.outstanding == 1
    assert u.stats.mem_latency_sectors == 7 and a[1].sector_mask == 0b1111
    assert (b[0].got, b[0].got_mask) == (3, 0b1011)   # line 0x2000: three pieces in
    u._reply(b[2], 21)
    assert ins.outstanding == 0 and b[2].sector_mask == 0b1111


def test_an_l1_miss_fills_the_line_with_its_last_piece():
    """The L1 line stays reserved (no hit on it) until the fourth piece arrives; then the
    load merged into its MSHR entry is released."""
    u = _unit()
    l1d = u.l1d
    l1d.array.access(0x1000, 0b1111)               # miss: reserved, as the unit's lookup does
    warp = SimpleNamespace(inflight=1, done=False)
    waiter = _Instr(warp, 0, [], READ, l1d, None)
    waiter.outstanding = 1
    l1d.mshr.allocate(0x1000, waiter, 0b1111)
    token = ("fill", l1d, 0x1000)
    pieces = _pieces(0x1000, token)
    for s in (0, 1, 2):
        u._reply(pieces[s], 50 + s)
        assert waiter.outstanding == 1 and l1d.mshr.lookup(0x1000)
        assert l1d.array.probe(0x1000, 0b1111, check_alloc=False) != HIT
    u._reply(pieces[3], 53)
    assert waiter.outstanding == 0 and warp.inflight == 0 and not l1d.mshr.lookup(0x1000)
    assert l1d.array.probe(0x1000, 0b1111, check_alloc=False) == HIT


LOAD = r'''
extern "C" __global__ void load(const float* in, float* out, int offset) {
    out[threadIdx.x] = in[offset + threadIdx.x] * 2.0f;
}'''


def _load(threads, offset, on):
    cfg = load_config("gtx480", {"l2.sector_replies": on, "l1d.enabled": False})
    with tlpsim.Device(mode="timing", config=cfg):
        x = tlpsim.asarray(np.arange(64, dtype=np.float32))
        out = tlpsim.zeros(32, np.float32)
        rec = tlpsim.RawKernel(LOAD, "load")((1,), (threads,), (x, out, np.int32(offset)))
        got = out.get()
    assert np.array_equal(got[:threads], 2 * np.arange(offset, offset + threads, dtype=np.float32))
    slices = rec.stats.components["l2_slices"]
    return sum(s["replies"] for s in slices), rec.stats.cycles


def test_end_to_end_the_slices_return_a_packet_per_sector():
    """One warp loads `threads` floats from float `offset` of a 128-byte line (the L1 off,
    so the request is the coalesced segment): with sector replies on, the slices send 3,
    1 or 0 more packets for it than off (4, 2 or 1 pieces), beside the same extra pieces
    of the instruction and constant lines in every case; the result is right either way."""
    extra = set()
    for threads, offset, pieces in ((32, 0, 4), (16, 16, 2), (8, 8, 1)):
        on, c_on = _load(threads, offset, True)
        off, c_off = _load(threads, offset, False)
        extra.add(on - off - (pieces - 1))
        assert c_on >= c_off
    assert len(extra) == 1 and extra.pop() > 0       # the fetch's lines are split too
