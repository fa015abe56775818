"""The L1D's write and allocation policies (`l1d.write_policy`, `l1d.allocation`;
GPGPU-Sim's data_cache for a no-write-allocate L1): a local store that hits stays in
the line, dirty, and is done at the lookup; a global store that hits under
"local_wb_global_wt" invalidates the line and goes to the L2; a miss goes to the L2
without allocating; a read miss that evicts a dirty line sends the line's writeback
after its own request, and keeps room for both in the miss queue. An allocate-on-fill
L1 reserves nothing at a miss and allocates when the fill arrives."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.timing.cache import MSHR, CacheArray
from tlpsim.timing.cache_policy import CachePolicy
from tlpsim.timing.cache_port import WRITE_ABSORBED, WRITE_SENT, CachePort
from tlpsim.timing.ldst import LdstParams, LdstUnit, _Instr
from tlpsim.timing.mem_types import READ, WRITE
from tlpsim.timing.queues import TimedQueue

LINE = 128


def l1(write_policy="local_wb_global_wt", sector_bytes=None, allocation="on_miss"):
    """GTX480's L1D shape: 16 KiB, 4 ways, whole-line fills ('N'), linear index here."""
    pol = CachePolicy("lru", write_policy, allocation, "no_write_allocate", "linear")
    return CachePort("l1d", CacheArray(16384, 4, LINE, sector_bytes), MSHR(64, 8), 35, pol)


def present(port, line):
    port.array.access(line, 0xF)
    port.array.fill(line, 0xF)


@pytest.mark.parametrize("policy, local, outcome, after", [
    ("local_wb_global_wt", True, WRITE_ABSORBED, (0xF, 0xF, 0)),   # local: written back later
    ("local_wb_global_wt", False, WRITE_SENT, None),               # global: write-evict
    ("write_back", False, WRITE_ABSORBED, (0xF, 0xF, 0)),
    ("write_through", True, WRITE_SENT, (0xF, 0, 0)),              # updated, clean
    ("write_evict", True, WRITE_SENT, None),
])
def test_a_store_that_hits_follows_the_policy(policy, local, outcome, after):
    c = l1(policy)
    present(c, 0x1000)
    assert c.write(0x1000, 0b0001, local, 5) == outcome
    assert c.array.state(0x1000) == after
    assert c.stats.accesses == 2 and c.stats.hits == 1           # the fill's lookup, then the write hit


@pytest.mark.parametrize("policy", ["local_wb_global_wt", "write_back", "write_through", "write_evict"])
def test_a_store_that_misses_is_sent_without_allocating(policy):
    c = l1(policy)
    assert c.write(0x1000, 0b0001, True, 5) == WRITE_SENT and 0x1000 not in c.array
    c.array.access(0x2000, 0xF)                                   # a fill on its way: HIT_RESERVED
    assert c.write(0x2000, 0b0001, True, 6) == WRITE_SENT and c.array.state(0x2000) == (0, 0, 0xF)


def test_a_read_miss_names_its_dirty_victims_writeback():
    c = l1()
    hashed = [0x1000 + k * 32 * LINE for k in range(5)]           # 32 sets: one set, 5 lines
    present(c, hashed[0])
    assert c.write(hashed[0], 0b0100, True, 1) == WRITE_ABSORBED  # dirty, and the LRU line once
    for a in hashed[1:4]:                                         # the others are used after it
        present(c, a)
    assert c.read(hashed[4], 0xF, "t", 2, lambda: True) == ("miss", 0xF)
    assert c.last_evicted == hashed[0] and c.last_writeback == (hashed[0], 0xF)   # the whole line ('N')
    assert c.read(hashed[0] + 4096 * 32, 0xF, "u", 3, lambda: True)[0] == "miss"
    assert c.last_writeback == (-1, 0)                            # a clean victim
    assert c.holds_dirty and not l1("write_through").holds_dirty


def unit(port, missq=8):
    out = TimedQueue("out", 64)
    u = LdstUnit(0, LdstParams(l1_pipeline=0, l1_miss_queue=missq), port,
                 CachePort("l1c", CacheArray(8192, 2, 64), MSHR(2, 32), 1), out, TimedQueue("in", 8), lambda a: 0)
    u._period = 1
    return u


def test_a_local_store_hit_sends_nothing_and_a_global_one_is_sent_and_evicts():
    c = l1()
    u = unit(c)
    warp = SimpleNamespace(inflight=0, view="w")
    present(c, 0x1000)
    st = _Instr(warp, 0, [], WRITE, c, None)
    st.local = True
    assert u._lookup(st, 0x1000, 0b0001, 10) and len(u.missq) == 0 and warp.inflight == 0
    assert (u.stats.l1d_writes, u.stats.l1d_write_hits) == (1, 1)
    g = _Instr(warp, 0, [], WRITE, c, None)
    present(c, 0x2000)
    assert u._lookup(g, 0x2000, 0b0001, 11) and 0x2000 not in c.array
    (t, req), = u.missq.entries()
    assert (t, req.kind, req.addr, req.ack) == (12, WRITE, 0x2000, True) and warp.inflight == 1
    assert (u.stats.l1d_writes, u.stats.l1d_write_hits) == (2, 1)


def test_a_read_miss_with_a_dirty_victim_queues_the_read_then_the_writeback():
    c = l1()
    u = unit(c)
    warp = SimpleNamespace(inflight=0, view="w")
    lines = [0x1000 + k * 32 * LINE for k in range(5)]
    present(c, lines[0])
    st = _Instr(warp, 0, [], WRITE, c, None)
    st.local = True
    u._lookup(st, lines[0], 0b0001, 10)                           # dirty, then the LRU line
    for a in lines[1:4]:
        present(c, a)
    ld = _Instr(warp, 1, [], READ, c, None)
    assert u._lookup(ld, lines[4], 0xF, 11)
    assert [(r.kind, r.addr, r.sector_mask, r.ack, r.token is None) for _, r in u.missq.entries()] == [
        (READ, lines[4], 0xF, True, False), (WRITE, lines[0], 0xF, False, True)]
    assert u.stats.l1d_writebacks == 1


def test_a_read_miss_keeps_room_for_a_writeback_where_lines_can_be_dirty():
    # GPGPU-Sim's miss_queue_full(1): a read miss needs two free entries of the miss queue
    for policy, room_needed in (("local_wb_global_wt", 2), ("write_through", 1)):
        c = l1(policy)
        u = unit(c, missq=4)
        for _ in range(4 - room_needed):
            u.missq.append(99, None)
        ins = _Instr(SimpleNamespace(inflight=0, view="w"), 1, [], READ, c, None)
        assert u._lookup(ins, 0x1000, 0xF, 10)
        while len(u.missq):
            u.missq.popleft()
        for _ in range(5 - room_needed):
            u.missq.append(99, None)
        assert not u._lookup(ins, 0x5000, 0xF, 11) and c.stats.res_fail_queue == 1


@pytest.mark.parametrize("key, value", [("l1d.write_allocate", "fetch_on_write"), ("l1d.write_policy", "read_only"),
                                        ("l1d.miss_queue_entries", 1)])
def test_l1d_write_settings_the_model_does_not_have_are_refused(key, value):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config("gtx480", {key: value})


# every thread writes its 8-word local array, reads one word back at a runtime index,
# then writes the array again and reads it: 2 CTAs x 64 threads = 4 warps; word d of a
# warp's 32 threads is one 128-byte line of local memory, so each pass of 8 stores is 8
# line stores per warp, and the first load (lanes reading 3t mod 8: every word) brings
# all 8 of the warp's lines into the L1
KERNEL = r"""
extern "C" __global__ void lk(const int* idx, float* out) {
    float buf[8];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < 8; ++i) buf[i] = t * 8 + i;
    float s = buf[idx[t] & 7];
    for (int i = 0; i < 8; ++i) buf[i] = buf[i] + s;
    out[t] = buf[idx[t] & 7];
}"""


def _run(write_policy):
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1d.write_policy": write_policy})
    idx = (np.arange(128, dtype=np.int32) * 3) % 8
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        out = tlpsim.zeros(128, np.float32)
        rec = tlpsim.RawModule(KERNEL).get_function("lk")((2,), (64,), (tlpsim.asarray(idx), out))
        got = out.get()
    t = np.arange(128, dtype=np.float32)
    np.testing.assert_array_equal(got, 2 * (t * 8 + idx))
    return rec.stats.per_sm[0]


def test_local_stores_that_hit_stay_in_the_l1_under_gtx480s_policy():
    """The first pass's 32 line stores miss (no write-allocate) and go to the L2; the
    first load misses the warps' 32 lines into the L1; the second pass's 32 stores hit
    them: GTX480's "L" policy keeps them there, dirty (nothing sent), write-through
    sends them on. The last load hits either way; nothing is evicted."""
    wb, wt = _run("local_wb_global_wt"), _run("write_through")
    assert (wb["l1d_writes"], wb["l1d_write_hits"], wb["l1d_writebacks"]) == (64 + 4, 32, 0)
    assert (wt["l1d_writes"], wt["l1d_write_hits"], wt["l1d_writebacks"]) == (64 + 4, 0, 0)
    assert wt["mem_requests"] - wb["mem_requests"] == 32


@pytest.mark.parametrize("allocation", ["on_fill", "streaming"])
def test_an_allocate_on_fill_l1_reserves_nothing_until_the_fill(allocation):
    c = l1(allocation=allocation)
    lines = [0x1000 + k * 32 * LINE for k in range(6)]           # one set of 4 ways
    for k, a in enumerate(lines[:5]):                             # 5 misses in flight: no set refusal
        assert c.read(a, 0xF, f"t{k}", 1, lambda: True) == ("miss", 0xF)
    assert len(c.array) == 0 and len(c.mshr) == 5 and c.last_evicted == -1
    assert c.read(lines[0], 0x1, "u", 2, lambda: True) == ("merged", 0)    # waits on the MSHR
    assert c.stats.misses == 6 and c.stats.res_fail_set == 0
    assert c.fill(lines[0], 0xF, 3) == ["t0", "u"] and c.array.state(lines[0]) == (0xF, 0, 0)
    for a in lines[1:5]:                                          # the fifth fill evicts the LRU line
        c.fill(a, 0xF, 4)
    assert lines[0] not in c.array and len(c.array) == 4 and c.stats.evictions == 1
    assert c.read(lines[4], 0xF, "h", 5, lambda: True) == ("hit", 5 + 35)


def test_an_allocate_on_fill_l1_refuses_by_mshr_and_queue_not_by_set():
    c = l1(allocation="on_fill")
    c.mshr = MSHR(1, 2)
    assert c.read(0x1000, 0xF, "a", 1, lambda: True)[0] == "miss"
    assert c.read(0x2000, 0xF, "b", 2, lambda: True) == ("fail", 0) and c.last_refusal == "res_fail_mshr"
    assert c.read(0x1000, 0xF, "c", 3, lambda: False) == ("merged", 0)   # nothing to send: no queue needed
    assert c.read(0x1000, 0xF, "d", 4, lambda: True) == ("fail", 0) and c.last_refusal == "res_fail_merge"
