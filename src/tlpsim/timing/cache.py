"""Cache structures shared by the L1s and the L2 slices: a set-associative tag
array with sectored lines, an MSHR table, and write policies as data. Nothing here
ticks; the components (L1D, `l2.L2Slice`) decide when to call these.

Masks are in 32-byte sector units of the line (bit i = bytes [32i, 32i + 32)), as
`MemRequest.sector_mask`; a cache with a larger fill granule (`sector_bytes=None`:
whole-line fills) widens every mask to it. Modelled on GPGPU-Sim's gpu-cache.{h,cc}
(tag_array probe/access/fill, mshr_table, the data_cache write functions, the
config letters), except that an MSHR entry is a line tracking which sectors are
still on their way, so a multi-sector request is one lookup (GPGPU-Sim's L2 splits
requests into single-sector ones).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64

from tlpsim.timing.cache_policy import (  # noqa: F401
    CachePolicy,
    WriteActions,
    _choice,
    parse_gpgpusim_cache,
)

# write policies live in cache_policy.py (re-exported here for existing imports)
from tlpsim.timing.addrmap import AddressMap
from tlpsim.timing.mem_types import popcount
from tlpsim.timing.mshr import MSHR, MSHRStats  # noqa: F401 - re-exported (MSHR tables live in mshr.py)
from tlpsim.timing.set_index import SET_INDEX_FUNCTIONS, SetIndex, make_set_index  # noqa: F401 - re-exported

SECTOR_BYTES: Final = 32  # unit of MemRequest.sector_mask
ALL: Final = -1        # "every sector" as a mask (x & ALL == x)

HIT: Final = 0
HIT_RESERVED: Final = 1
MISS: Final = 2
SECTOR_MISS: Final = 3
RESERVATION_FAIL: Final = 4
STATUS_NAMES = ("hit", "hit_reserved", "miss", "sector_miss", "reservation_fail")


# ---------------------------------------------------------------------------- statistics

@dataclass
class CacheStats:
    """Event counters of one cache. accesses = hits + pending_hits + misses +
    sector_misses; reservation fails count failed attempts (stalled cycles) by reason."""

    accesses: int = 0
    hits: int = 0
    pending_hits: int = 0      # hit on sectors whose fill is pending (HIT_RESERVED)
    misses: int = 0            # tag miss
    sector_misses: int = 0     # line present, some requested sectors absent
    res_fail_set: int = 0      # every way of the set has a pending fill
    res_fail_mshr: int = 0     # no free MSHR entry
    res_fail_merge: int = 0    # the MSHR entry already holds max_merge requests
    res_fail_queue: int = 0    # the miss queue to the next level is full
    evictions: int = 0         # valid lines replaced
    writebacks: int = 0        # evictions of dirty lines
    writeback_sectors: int = 0
    fills: int = 0
    fill_sectors: int = 0

    def count_fail(self, reason: str, n: int = 1) -> None:
        """Count `n` refused attempts; `reason` names the counter (res_fail_set, _mshr,
        _merge or _queue). (Branches, not setattr: a compiled attribute by name is a
        generic lookup.)"""
        if reason == "res_fail_mshr":
            self.res_fail_mshr += n
        elif reason == "res_fail_queue":
            self.res_fail_queue += n
        elif reason == "res_fail_merge":
            self.res_fail_merge += n
        elif reason == "res_fail_set":
            self.res_fail_set += n
        else:
            raise ValueError(f"unknown reservation-fail counter {reason!r}: res_fail_set, res_fail_mshr, "
                             f"res_fail_merge or res_fail_queue")

    @property
    def reservation_fails(self) -> int:
        return self.res_fail_set + self.res_fail_mshr + self.res_fail_merge + self.res_fail_queue

    def to_dict(self) -> dict:
        d = asdict(self)
        d["reservation_fails"] = self.reservation_fails
        return d


# ---------------------------------------------------------------------------- tag array

class Eviction:
    """A line leaving the cache: its address and which sectors were valid / dirty
    (dirty sectors must be written to the next level). A plain class, not a
    NamedTuple: the compiled core builds a NamedTuple through its Python-level
    `__new__`, a few thousand instructions per eviction."""

    __slots__ = ("addr", "valid", "dirty")

    def __init__(self, addr: int, valid: int, dirty: int) -> None:
        self.addr = addr
        self.valid = valid
        self.dirty = dirty

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Eviction) and self.addr == other.addr and self.valid == other.valid
                and self.dirty == other.dirty)

    def __hash__(self) -> int:
        return hash((self.addr, self.valid, self.dirty))

    def __repr__(self) -> str:
        return f"Eviction(addr={self.addr:#x}, valid={self.valid:#x}, dirty={self.dirty:#x})"


class AccessResult:
    """Outcome of `CacheArray.access`: the status, the sectors the caller must fetch
    (reserved for the fill when `reserve=True`), and the line evicted to make room."""

    __slots__ = ("status", "missing", "evicted")

    def __init__(self, status: int, missing: int, evicted: Eviction | None) -> None:
        self.status = status
        self.missing = missing
        self.evicted = evicted

    def __repr__(self) -> str:
        return f"AccessResult(status={STATUS_NAMES[self.status]}, missing={self.missing:#x}, evicted={self.evicted})"


# the outcomes carrying nothing but their status are immutable: share one each
_HIT_RESULT: Final = AccessResult(HIT, 0, None)
_PENDING_RESULT: Final = AccessResult(HIT_RESERVED, 0, None)


# the line state arrays hold -1 as the tag of an empty way
_EMPTY: Final = -1
# what `_victim` finds in a full set whose every way waits for a fill, and in a set
# with an empty way (nothing to evict)
_NO_VICTIM: Final = -2
_FREE_WAY: Final = -1


def _empty_ways(n: int) -> tuple[vec[i64], vec[i64], vec[i64], vec[i64], vec[i64], vec[i64]]:
    """The state arrays of `n` empty ways: tags, then valid, dirty and reserved sector
    masks, last-use and allocation stamps."""
    return (vec[i64]([_EMPTY] * n), vec[i64]([0] * n), vec[i64]([0] * n), vec[i64]([0] * n),
            vec[i64]([0] * n), vec[i64]([0] * n))


class CacheArray:
    """Tag and state array of a set-associative cache with sectored lines. The
    line-aligned address is the tag. Each way's state lives in flat machine-word arrays
    (tag, valid/dirty/reserved sector masks, last use, allocation time) indexed by
    set x assoc + way: a lookup computes the set and compares its `assoc` tags, as the
    hardware does, with no boxed keys or per-line objects. A line with a pending fill
    (reserved sector) is never a victim: a set whose ways are all reserved cannot
    allocate (RESERVATION_FAIL). Replacement picks the least recent use (LRU) or the
    oldest allocation (FIFO); both stamps come from one counter, so they never tie."""

    def __init__(self, size_bytes: int, assoc: int, line_bytes: int = 128, sector_bytes: int | None = 32,
                 replacement: str = "lru", set_index: str = "linear",
                 index_addr: AddressMap | Callable[[int], int] | None = None) -> None:
        if line_bytes < SECTOR_BYTES or line_bytes & (line_bytes - 1):
            raise ValueError(f"line_bytes must be a power of two >= {SECTOR_BYTES}, not {line_bytes}")
        if assoc < 1 or size_bytes < line_bytes * assoc or size_bytes % (line_bytes * assoc):
            raise ValueError(f"size_bytes ({size_bytes}) must be a positive multiple of "
                             f"line_bytes x assoc ({line_bytes} x {assoc})")
        granule = line_bytes if sector_bytes is None else sector_bytes
        if granule % SECTOR_BYTES or line_bytes % granule:
            raise ValueError(f"sector_bytes ({sector_bytes}) must be a multiple of {SECTOR_BYTES} "
                             f"dividing line_bytes ({line_bytes})")
        self.size_bytes = size_bytes
        self.assoc = assoc
        self.line_bytes = line_bytes
        self.sector_bytes = sector_bytes
        self.n_sets = size_bytes // (line_bytes * assoc)
        self.n_sectors = line_bytes // SECTOR_BYTES
        self.full_mask = (1 << self.n_sectors) - 1
        self._lru = _choice("replacement policy", replacement, {"lru": True, "fifo": False})
        # (an address map as `index_addr`: its partition_address, asked natively)
        self._index = SetIndex(set_index, self.n_sets, line_bytes, index_addr)
        g = granule // SECTOR_BYTES
        self._widen_tbl: list[int] | None = None
        if g > 1:
            gm = (1 << g) - 1
            self._widen_tbl = [sum(gm << k for k in range(0, self.n_sectors, g) if (m >> k) & gm)
                               for m in range(1 << self.n_sectors)]
        # per way (set x assoc + way): tag; sectors holding data, newer than the next level,
        # with a fill on its way (HIT_RESERVED); last use and allocation stamps
        self._tag, self._valid, self._dirty, self._reserved, self._last_use, self._born = _empty_ways(
            self.n_sets * assoc)
        self._n_lines = 0
        self._clock = 0
        self.stats = CacheStats()

    # -- queries (no side effects) ----------------------------------------------------
    def widen(self, mask: int) -> int:
        """`mask` (32-byte sectors) widened to whole fill granules, limited to the line."""
        mask &= self.full_mask
        t = self._widen_tbl
        return mask if t is None else t[mask]

    def set_index(self, addr: int) -> int:
        """The set `addr` falls in."""
        return self._index.index(addr)

    def _find(self, addr: int) -> i64:
        """The way holding `addr` (set x assoc + way), or -1."""
        return self._find_in(addr, self._index.index(addr))

    def _find_in(self, addr: int, set_idx: int) -> i64:
        """The way of set `set_idx` holding `addr`, or -1."""
        assoc: i64 = self.assoc
        base: i64 = set_idx * assoc
        tag = self._tag
        a: i64 = addr
        k: i64 = base
        end: i64 = base + assoc
        while k < end:
            if tag[k] == a:
                return k
            k += 1
        return -1

    def __contains__(self, addr: int) -> bool:
        return self._find(addr) >= 0

    def __len__(self) -> int:
        return self._n_lines

    def state(self, addr: int) -> tuple[int, int, int] | None:
        """(valid, dirty, reserved) sector masks of the line, or None if absent."""
        k = self._find(addr)
        return None if k < 0 else (int(self._valid[k]), int(self._dirty[k]), int(self._reserved[k]))

    def set_lines(self, set_idx: int) -> list[int]:
        """Addresses in a set, next victim first (LRU or FIFO order)."""
        stamp = self._last_use if self._lru else self._born
        base = set_idx * self.assoc
        ways = [(int(stamp[k]), int(self._tag[k])) for k in range(base, base + self.assoc)
                if self._tag[k] != _EMPTY]
        return [addr for _, addr in sorted(ways)]

    def probe(self, addr: int, mask: int = ALL, check_alloc: bool = True) -> int:
        """Classify without side effects: HIT (all sectors valid), HIT_RESERVED (the
        rest pending), SECTOR_MISS (line present, a sector neither), MISS, or
        RESERVATION_FAIL (a miss that could not allocate; MISS to a non-allocating
        write). `check_alloc=False` skips that check (the caller asks `victim()`)."""
        set_idx = self._index.index(addr)
        k = self._find_in(addr, set_idx)
        if k < 0:
            if not check_alloc or self._victim(set_idx) != _NO_VICTIM:
                return MISS
            return RESERVATION_FAIL
        need = self.widen(mask) & ~int(self._valid[k])
        if not need:
            return HIT
        return SECTOR_MISS if need & ~int(self._reserved[k]) else HIT_RESERVED

    def missing(self, addr: int, mask: int = ALL) -> int:
        """Sectors of `mask` neither valid nor pending (what a fetch must bring)."""
        mask = self.widen(mask)
        k = self._find(addr)
        return mask if k < 0 else mask & ~int(self._valid[k]) & ~int(self._reserved[k])

    def victim(self, addr: int) -> tuple[bool, Eviction | None]:
        """(can allocate `addr`, the line that would be evicted or None)."""
        if self._find(addr) >= 0:
            return True, None
        v = self._victim(self._index.index(addr))
        if v == _NO_VICTIM:  # every way has a pending fill
            return False, None
        if v == _FREE_WAY:
            return True, None
        return True, Eviction(int(self._tag[v]), int(self._valid[v]), int(self._dirty[v]))

    def _victim(self, set_idx: int) -> i64:
        """The way to evict from the set; _FREE_WAY when a way is empty, _NO_VICTIM when
        every way waits for a fill."""
        assoc: i64 = self.assoc
        base: i64 = set_idx * assoc
        tag, reserved = self._tag, self._reserved
        stamp = self._last_use if self._lru else self._born
        best: i64 = _NO_VICTIM
        key: i64 = 0
        end: i64 = base + assoc
        k: i64 = base
        while k < end:
            if tag[k] == _EMPTY:
                return _FREE_WAY
            k += 1
        k = base
        while k < end:
            if not reserved[k]:
                s = stamp[k]
                if best == _NO_VICTIM or s < key:
                    best = k
                    key = s
            k += 1
        return best

    # -- updates ------------------------------------------------------------------------
    def access(self, addr: int, mask: int = ALL, allocate: bool = True, reserve: bool = True) -> AccessResult:
        """Look up, count and update replacement state (tag_array::access). A MISS
        with `allocate` installs the line (evicting the victim); with `reserve` the
        missing sectors become pending: the caller fetches them and calls `fill`. A
        RESERVATION_FAIL changes nothing but its counter."""
        st = self.stats
        mask = self.widen(mask)
        set_idx = self._index.index(addr)
        k = self._find_in(addr, set_idx)
        if k >= 0:
            self._clock += 1
            self._last_use[k] = self._clock
            st.accesses += 1
            need = mask & ~int(self._valid[k])
            if not need:
                st.hits += 1
                return _HIT_RESULT
            missing = need & ~int(self._reserved[k])
            if not missing:
                st.pending_hits += 1
                return _PENDING_RESULT
            st.sector_misses += 1
            if reserve:
                self._reserved[k] = self._reserved[k] | missing
            return AccessResult(SECTOR_MISS, missing, None)
        if not allocate:
            st.accesses += 1
            st.misses += 1
            return AccessResult(MISS, mask, None)
        v = self._victim(set_idx)
        if v == _NO_VICTIM:
            st.res_fail_set += 1
            return AccessResult(RESERVATION_FAIL, 0, None)
        st.accesses += 1
        st.misses += 1
        evicted = None if v == _FREE_WAY else self._evict(v)
        k = self._install(addr, set_idx, v)
        if reserve:
            self._reserved[k] = mask
        return AccessResult(MISS, mask, evicted)

    def access_if_hit(self, addr: int, mask: int = ALL) -> bool:
        """`access(addr, mask)` when `probe` would say HIT (True); otherwise change
        nothing (False). The common case of an L1 read in one lookup."""
        k = self._find(addr)
        if k < 0:
            return False
        mask &= self.full_mask
        t = self._widen_tbl
        if t is not None:
            mask = t[mask]
        if mask & ~int(self._valid[k]):
            return False
        self._clock += 1
        self._last_use[k] = self._clock
        st = self.stats
        st.accesses += 1
        st.hits += 1
        return True

    def warm(self, addr: int, mask: int = ALL, dirty: bool = False, allocate: bool = True) -> None:
        """Functional warming (sampled runs): leave what an access that was not simulated
        would have left -- the line present and most recently used, `mask`'s sectors
        valid (and dirty when `dirty`) -- without counting it or timing anything. A
        victim is dropped (its write-back is not timed); a set whose ways all wait for
        fills, or a miss without `allocate`, leaves the array as it is."""
        mask = self.widen(mask)
        set_idx = self._index.index(addr)
        k = self._find_in(addr, set_idx)
        if k < 0:
            if not allocate:
                return
            v = self._victim(set_idx)
            if v == _NO_VICTIM:
                return
            if v != _FREE_WAY:
                self._drop(v)
            k = self._install(addr, set_idx, v)
        else:
            self._clock += 1
            self._last_use[k] = self._clock
        self._valid[k] = self._valid[k] | mask
        if dirty:
            self._dirty[k] = self._dirty[k] | mask

    def reserve(self, addr: int, mask: int = ALL) -> int:
        """Mark the absent sectors of `mask` (present line) as pending; returns them."""
        k = self._line(addr)
        new = self.widen(mask) & ~int(self._valid[k]) & ~int(self._reserved[k])
        self._reserved[k] = self._reserved[k] | new
        return new

    def write(self, addr: int, mask: int = ALL, dirty: bool = True) -> None:
        """Store whole sectors into a present line: valid, and dirty if `dirty`. A
        pending fill of them stays pending and will not clean them."""
        k = self._line(addr)
        mask = self.widen(mask)
        self._valid[k] = self._valid[k] | mask
        if dirty:
            self._dirty[k] = self._dirty[k] | mask

    def mark_dirty(self, addr: int, mask: int = ALL) -> None:
        """Mark sectors modified in place (an atomic performed at this cache)."""
        k = self._line(addr)
        mask = self.widen(mask)
        self._valid[k] = self._valid[k] | mask
        self._dirty[k] = self._dirty[k] | mask

    def fill(self, addr: int, mask: int = ALL) -> Eviction | None:
        """Data arrived: the sectors become valid, no longer pending. An absent line is
        allocated here (allocate-on-fill), returning the eviction; check `victim()` first."""
        mask = self.widen(mask)
        set_idx = self._index.index(addr)
        k = self._find_in(addr, set_idx)
        evicted = None
        if k < 0:
            v = self._victim(set_idx)
            if v == _NO_VICTIM:
                raise RuntimeError(f"fill of {addr:#x} into a set whose ways all have pending fills: "
                                   f"the caller must check victim() first")
            if v != _FREE_WAY:
                evicted = self._evict(v)
            k = self._install(addr, set_idx, v)
        self._valid[k] = self._valid[k] | mask
        self._reserved[k] = self._reserved[k] & ~mask
        self.stats.fills += 1
        self.stats.fill_sectors += popcount(mask)
        return evicted

    def invalidate(self, addr: int, mask: int = ALL) -> Eviction | None:
        """Drop sectors of a line (write-evict); pending fills stay pending. Returns
        what was dropped (write its dirty sectors back if needed) or None."""
        k = self._find(addr)
        if k < 0:
            return None
        mask = self.widen(mask)
        dropped = Eviction(addr, int(self._valid[k]) & mask, int(self._dirty[k]) & mask)
        self._valid[k] = self._valid[k] & ~mask
        self._dirty[k] = self._dirty[k] & ~mask
        if not self._valid[k] and not self._reserved[k]:
            self._drop(k)
        return dropped

    def invalidate_all(self) -> None:
        """Drop every line (kernel-boundary L1 invalidation); lines with pending fills
        keep only their pending sectors. Dirty data is discarded: `flush()` first."""
        for k in self._ways_oldest_first():
            self.invalidate(int(self._tag[k]))

    def resize(self, size_bytes: int) -> None:
        """Give the cache `size_bytes`, keeping its sets and line size: the ways grow or
        shrink (a unified L1's carveout, GPGPU-Sim's adaptive L1 `set_assoc`). Every line
        is dropped, dirty data included; a line waiting for a fill refuses the change."""
        way_bytes = self.n_sets * self.line_bytes
        if size_bytes < way_bytes or size_bytes % way_bytes:
            raise ValueError(f"size_bytes ({size_bytes}) must be a positive multiple of {self.n_sets} sets x "
                             f"{self.line_bytes} B")
        if any(self._reserved[k] for k in range(len(self._tag))):
            raise RuntimeError("resize() with fills in flight: the cache is resized between launches only")
        self.size_bytes = size_bytes
        self.assoc = size_bytes // way_bytes
        self._tag, self._valid, self._dirty, self._reserved, self._last_use, self._born = _empty_ways(
            self.n_sets * self.assoc)
        self._n_lines = 0

    def flush(self) -> list[Eviction]:
        """Clean every dirty line and return what must be written back (in the order
        the lines were allocated)."""
        out = []
        for k in self._ways_oldest_first():
            if self._dirty[k]:
                out.append(Eviction(int(self._tag[k]), int(self._valid[k]), int(self._dirty[k])))
                self._dirty[k] = 0
        return out

    def _ways_oldest_first(self) -> list[int]:
        """The ways holding a line, oldest allocation first."""
        tag, born = self._tag, self._born
        return [k for _, k in sorted((int(born[k]), k) for k in range(len(tag)) if tag[k] != _EMPTY)]

    def _line(self, addr: int) -> i64:
        k = self._find(addr)
        if k < 0:
            raise KeyError(f"line {addr:#x} is not in the cache: allocate it with access() first")
        return k

    def _install(self, addr: int, set_idx: int, way: i64) -> i64:
        """Place `addr` in `way` (a way just freed), or in the set's first empty way
        (`way` is _FREE_WAY)."""
        k = way
        if k < 0:
            assoc: i64 = self.assoc
            j: i64 = set_idx * assoc
            tag = self._tag
            while tag[j] != _EMPTY:  # (the caller found an empty way in the set)
                j += 1
            k = j
        self._clock += 1
        self._tag[k] = addr
        self._valid[k] = 0
        self._dirty[k] = 0
        self._reserved[k] = 0
        self._last_use[k] = self._clock
        self._born[k] = self._clock
        self._n_lines += 1
        return k

    def _drop(self, k: i64) -> None:
        self._tag[k] = _EMPTY
        self._n_lines -= 1

    def _evict(self, k: i64) -> Eviction:
        valid, dirty = int(self._valid[k]), int(self._dirty[k])
        addr = int(self._tag[k])
        self._drop(k)
        st = self.stats
        if valid:
            st.evictions += 1
        if dirty:
            st.writebacks += 1
            st.writeback_sectors += popcount(dirty)
        return Eviction(addr, valid, dirty)
