"""Tag array, MSHR table and write policies on hand-made access sequences."""

import pytest

from tlpsim.timing.cache import (ALL, HIT, HIT_RESERVED, MISS, RESERVATION_FAIL, SECTOR_MISS, STATUS_NAMES,
                                 CacheArray, CachePolicy, Eviction, MSHR, WriteActions, make_set_index,
                                 parse_gpgpusim_cache)

L = 128  # line bytes


def run(cache, lines, mask=ALL):
    """Access each line number in turn, filling misses at once; the status names."""
    out = []
    for n in lines:
        r = cache.access(n * L, mask)
        if r.missing:
            cache.fill(n * L, r.missing)
        out.append(STATUS_NAMES[r.status])
    return out


def test_direct_mapped_conflicts():
    c = CacheArray(4 * L, 1, sector_bytes=None)           # 4 sets x 1 way
    assert c.n_sets == 4
    assert run(c, [0, 1, 0, 4, 0, 1, 5, 1]) == ["miss", "miss", "hit", "miss", "miss", "hit", "miss", "miss"]
    s = c.stats
    assert (s.accesses, s.hits, s.misses, s.evictions, s.fills) == (8, 2, 6, 4, 6)


def test_lru_evicts_least_recently_used():
    c = CacheArray(2 * L, 2, replacement="lru")            # one set, 2 ways
    assert run(c, [0, 1, 0, 2, 0, 1]) == ["miss", "miss", "hit", "miss", "hit", "miss"]
    assert c.set_lines(0) == [0, 1 * L]                     # 0 used before 1 was refilled


def test_fifo_evicts_oldest_allocation():
    c = CacheArray(2 * L, 2, replacement="fifo")
    assert run(c, [0, 1, 0, 2, 0, 1]) == ["miss", "miss", "hit", "miss", "miss", "miss"]


def test_sector_states():
    c = CacheArray(8 * L, 2)                                # sectored, 32-byte sectors
    r = c.access(0, 0b0001)
    assert (r.status, r.missing, r.evicted) == (MISS, 0b0001, None)
    assert c.probe(0, 0b0001) == HIT_RESERVED
    assert c.probe(0, 0b0011) == SECTOR_MISS
    assert c.missing(0, 0b0011) == 0b0010
    c.fill(0, 0b0001)
    assert c.probe(0, 0b0001) == HIT
    r = c.access(0, 0b0011)                                 # sector 1 absent: sector miss
    assert (r.status, r.missing) == (SECTOR_MISS, 0b0010)
    assert c.probe(0, 0b0011) == HIT_RESERVED
    assert c.access(0, 0b0011).status == HIT_RESERVED
    c.fill(0, 0b0010)
    assert c.access(0, 0b0011).status == HIT
    assert c.state(0) == (0b0011, 0, 0)
    s = c.stats
    assert (s.misses, s.sector_misses, s.pending_hits, s.hits, s.fill_sectors) == (1, 1, 1, 1, 2)


def test_non_sectored_and_wide_sectors_widen_masks():
    assert CacheArray(8 * L, 2, sector_bytes=None).access(0, 0b0100).missing == 0b1111
    c64 = CacheArray(8 * L, 2, sector_bytes=64)
    assert c64.access(0, 0b0100).missing == 0b1100
    assert c64.access(L, 0b0011).missing == 0b0011
    assert c64.widen(0b1001) == 0b1111


def test_reserved_lines_are_never_victims():
    c = CacheArray(2 * L, 2)
    c.access(1 * L)                                          # older, stays pending
    c.access(0)
    assert c.probe(2 * L) == RESERVATION_FAIL
    assert c.victim(2 * L) == (False, None)
    assert c.access(2 * L).status == RESERVATION_FAIL
    assert c.stats.res_fail_set == 1 and len(c) == 2 and c.stats.accesses == 2
    c.fill(0)                                                # 0 is younger but the only candidate
    ok, ev = c.victim(2 * L)
    assert ok and ev.addr == 0
    r = c.access(2 * L)
    assert r.status == MISS and r.evicted.addr == 0
    assert 1 * L in c and 0 not in c


def test_dirty_eviction_and_write_states():
    c = CacheArray(2 * L, 2)
    c.access(0, 0b0011, reserve=False)                       # write-validate: allocate, no fetch
    c.write(0, 0b0011)
    assert c.state(0) == (0b0011, 0b0011, 0)
    c.access(L, 0b0001)
    c.fill(L, 0b0001)
    r = c.access(2 * L, 0b0001)                              # LRU victim is line 0, dirty
    assert r.evicted == Eviction(0, 0b0011, 0b0011)
    s = c.stats
    assert (s.evictions, s.writebacks, s.writeback_sectors) == (1, 1, 2)
    c.write(L, 0b0100, dirty=False)                          # write-through store: valid, clean
    assert c.state(L) == (0b0101, 0, 0)
    c.mark_dirty(L, 0b0001)                                  # an atomic in place
    assert c.state(L)[1] == 0b0001


def test_write_to_pending_sector_survives_fill():
    c = CacheArray(2 * L, 2)
    c.access(0, 0b0001)                                      # fetch of sector 0 pending
    c.write(0, 0b0001)
    assert c.probe(0, 0b0001) == HIT
    c.fill(0, 0b0001)
    assert c.state(0) == (0b0001, 0b0001, 0)


def test_fill_allocates_on_fill_and_reports_eviction():
    c = CacheArray(L, 1)
    assert c.access(0, allocate=False).status == MISS and 0 not in c
    assert c.fill(0, 0b1111) is None
    c.mark_dirty(0, 0b0010)
    ev = c.fill(L, 0b0001)
    assert ev == Eviction(0, 0b1111, 0b0010)


def test_invalidate_and_flush():
    c = CacheArray(4 * L, 2)
    c.access(0, reserve=False)
    c.write(0, 0b0011)
    c.access(L, 0b0001)                                      # pending
    assert c.flush() == [Eviction(0, 0b0011, 0b0011)]
    assert c.state(0) == (0b0011, 0, 0) and c.flush() == []
    assert c.invalidate(0, 0b0001) == Eviction(0, 0b0001, 0)
    assert c.state(0) == (0b0010, 0, 0)
    c.invalidate_all()
    assert 0 not in c and c.state(L) == (0, 0, 0b0001)        # pending fill kept
    assert c.invalidate(5 * L) is None


def test_probe_and_misuse_errors():
    c = CacheArray(2 * L, 2)
    with pytest.raises(KeyError, match="access"):
        c.write(0, 1)
    c.access(0)
    c.access(L)
    with pytest.raises(RuntimeError, match="victim"):
        c.fill(2 * L, 1)
    with pytest.raises(ValueError, match="multiple"):
        CacheArray(3 * L, 2)
    with pytest.raises(ValueError, match="sector_bytes"):
        CacheArray(2 * L, 2, sector_bytes=48)
    with pytest.raises(ValueError, match="lru"):
        CacheArray(2 * L, 2, replacement="plru")


# ---------------------------------------------------------------------------- set index

def test_set_index_functions():
    lin = make_set_index("linear", 64, 128)
    assert [lin(n * 128) for n in (0, 1, 63, 64, 65)] == [0, 1, 63, 0, 1]
    assert make_set_index("linear", 48, 128)(50 * 128) == 2    # non-power-of-two sets: modulo
    xor = make_set_index("xor", 4, 128)
    assert xor((1 + 4 * 2) * 128) == 1 ^ 2
    assert xor((3 + 4 * 7) * 128) == 3 ^ 3
    fermi64, fermi32 = make_set_index("hash", 64, 128), make_set_index("hash", 32, 128)
    assert fermi64(0x1000) == 32 and fermi32(0x1000) == 0    # bit 12 prepends the 64-set index
    assert fermi32(0x2000) == 1 and fermi32(0x2080) == 0     # bit 13 XORs into index bit 0
    assert fermi32(0x80000) == 0b10000                       # bit 19 -> index bit 4
    with pytest.raises(ValueError, match="choose one of"):
        make_set_index("random", 64, 128)
    with pytest.raises(ValueError, match="power-of-two"):
        make_set_index("xor", 48, 128)
    with pytest.raises(ValueError, match="32 or 64"):
        make_set_index("hash", 16, 128)


@pytest.mark.parametrize("n_sets", [16, 32, 64])
def test_ipoly_spreads_power_of_two_strides(n_sets):
    f = make_set_index("ipoly", n_sets, 128)
    lin = make_set_index("linear", n_sets, 128)
    for k in range(7, 20):                                   # strides 128 B .. 512 KiB
        stride = 1 << k
        sets = {f(i * stride) for i in range(n_sets)}
        assert len(sets) == n_sets, stride                   # conflict-free
    camp = {lin(i * n_sets * 128) for i in range(n_sets)}
    assert len(camp) == 1                                    # linear indexing camps on one set


def test_index_addr_hook():
    # lines interleaved over 2 slices in 256-byte chunks: strip the slice digit
    local = lambda a: (a // 512) * 256 + a % 256
    c = CacheArray(4 * L, 1, index_addr=local)
    assert [c.set_index(a) for a in (0, 128, 512, 640, 1024)] == [0, 1, 2, 3, 0]


# ---------------------------------------------------------------------------- MSHR

def test_mshr_allocate_merge_fill():
    m = MSHR(entries=2, max_merge=3)
    assert m.can_allocate(0) and not m.lookup(0)
    m.allocate(0, "a")
    assert m.lookup(0) and not m.can_allocate(0)
    assert m.merge(0, "b") and m.merge(0, "c")
    assert not m.can_merge(0) and not m.merge(0, "d")        # entry full: unchanged
    m.allocate(L, "x")
    assert m.full and not m.can_allocate(2 * L)
    assert m.fill(0) == ["a", "b", "c"]
    assert not m.lookup(0) and m.can_allocate(2 * L)
    s = m.stats
    assert (s.allocations, s.merges, s.released, s.peak_entries) == (2, 2, 3, 2)
    with pytest.raises(KeyError):
        m.fill(0)
    with pytest.raises(KeyError):
        m.merge(0, "z")
    with pytest.raises(RuntimeError, match="can_allocate"):
        m.allocate(L, "y")


def test_mshr_sector_release():
    m = MSHR(entries=4, max_merge=4)
    m.allocate(0, "s0", 0b0001)
    assert m.merge(0, "s01", 0b0011, fetch=0b0010)           # needs the pending 0 and the new 1
    assert m.merge(0, "s2", 0b0100, fetch=0b0100)
    assert m.pending(0) == 0b0111
    assert m.fill(0, 0b0100) == ["s2"]
    assert m.fill(0, 0b0001) == ["s0"]
    assert m.lookup(0)
    assert m.fill(0, 0b0010) == ["s01"]
    assert not m.lookup(0) and len(m) == 0


# ---------------------------------------------------------------------------- policies

def test_policy_letters():
    p = CachePolicy.from_gpgpusim("L:B:m:L:L")               # GTX480 dl2
    assert (p.replacement, p.write_policy, p.allocation, p.write_allocate, p.set_index) == \
        ("lru", "write_back", "on_miss", "lazy_fetch_on_read", "linear")
    assert not p.allocate_on_fill
    q = CachePolicy.from_gpgpusim("L:L:m:N:H")               # GTX480 dl1
    assert (q.write_policy, q.write_allocate, q.set_index) == ("local_wb_global_wt", "no_write_allocate", "hash")
    assert CachePolicy.from_gpgpusim("F:R:s:N:P").allocate_on_fill
    with pytest.raises(ValueError, match="choose one of"):
        CachePolicy.from_gpgpusim("L:Q:m:L:L")
    with pytest.raises(ValueError, match="write_back"):
        CachePolicy(write_policy="writeback")


def test_write_actions():
    wb_lazy = CachePolicy.from_gpgpusim("L:B:m:L:L")
    assert wb_lazy.on_write(True) == WriteActions(write_line=True, dirty=True)
    assert wb_lazy.on_write(False) == WriteActions(allocate=True, write_line=True, dirty=True)
    wt_noalloc = CachePolicy.from_gpgpusim("L:T:m:N:L")
    assert wt_noalloc.on_write(True) == WriteActions(write_line=True, send=True)
    assert wt_noalloc.on_write(False) == WriteActions(send=True)
    fermi_l1 = CachePolicy.from_gpgpusim("L:L:m:N:H")
    assert fermi_l1.on_write(True) == WriteActions(send=True, invalidate=True)       # global: evict
    assert fermi_l1.on_write(True, local=True) == WriteActions(write_line=True, dirty=True)
    assert fermi_l1.on_write(False, local=True) == WriteActions(send=True)
    fow = CachePolicy.from_gpgpusim("L:B:m:F:L")
    assert fow.on_write(False) == WriteActions(allocate=True, write_line=True, dirty=True)
    assert fow.on_write(False, partial=True).fetch
    naive = CachePolicy.from_gpgpusim("L:B:m:W:L")
    assert naive.on_write(False) == WriteActions(allocate=True, fetch=True, send=True)
    with pytest.raises(ValueError, match="read_only"):
        CachePolicy.from_gpgpusim("L:R:f:N:L").on_write(True)


def test_parse_gpgpusim_cache_specs():
    dl2 = parse_gpgpusim_cache("S:64:128:8,L:B:m:L:L,A:256:4,4:0,32")
    assert dl2["size_bytes"] == 64 * 1024 and dl2["sector_bytes"] == 32
    assert (dl2["mshr_entries"], dl2["mshr_max_merge"], dl2["miss_queue_entries"], dl2["data_port_bytes"]) == \
        (256, 4, 4, 32)
    dl1 = parse_gpgpusim_cache("N:32:128:4,L:L:m:N:H,S:64:8,8")
    assert dl1["size_bytes"] == 16 * 1024 and dl1["sector_bytes"] is None
    assert dl1["policy"].set_index == "hash" and dl1["data_port_bytes"] == 128
    c = CacheArray(dl1["size_bytes"], dl1["assoc"], dl1["line_bytes"], dl1["sector_bytes"],
                   dl1["policy"].replacement, dl1["policy"].set_index)
    assert c.n_sets == 32
    with pytest.raises(ValueError):
        parse_gpgpusim_cache("S:64:128,L:B:m:L:L")
