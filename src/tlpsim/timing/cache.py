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

from tlpsim.timing.cache_policy import (  # noqa: F401
    CachePolicy,
    WriteActions,
    _choice,
    parse_gpgpusim_cache,
)

# write policies live in cache_policy.py (re-exported here for existing imports)
from tlpsim.timing.addrmap import AddressMap
from tlpsim.timing.mem_types import popcount
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


@dataclass
class MSHRStats:
    """Counters of one MSHR table."""

    allocations: int = 0
    merges: int = 0
    fills: int = 0        # fill() calls
    released: int = 0     # tokens handed back by fills
    peak_entries: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


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


class _Line:
    __slots__ = ("addr", "set_idx", "valid", "dirty", "reserved", "last_use", "born")

    def __init__(self, addr: int, set_idx: int, now: int) -> None:
        self.addr = addr
        self.set_idx = set_idx
        self.valid = 0      # sectors holding data
        self.dirty = 0      # sectors newer than the next level
        self.reserved = 0   # sectors with a fill on its way (HIT_RESERVED)
        self.last_use = now
        self.born = now


class CacheArray:
    """Tag and state array of a set-associative cache with sectored lines. The
    line-aligned address is the tag; lookup is a dict access and the set index is
    computed only to allocate. A line with a pending fill (reserved sector) is never
    a victim: a set whose ways are all reserved cannot allocate (RESERVATION_FAIL)."""

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
        self._lines: dict[int, _Line] = {}
        self._sets: list[list[_Line]] = [[] for _ in range(self.n_sets)]
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

    def __contains__(self, addr: int) -> bool:
        return addr in self._lines

    def __len__(self) -> int:
        return len(self._lines)

    def state(self, addr: int) -> tuple[int, int, int] | None:
        """(valid, dirty, reserved) sector masks of the line, or None if absent."""
        ln = self._lines.get(addr)
        return None if ln is None else (ln.valid, ln.dirty, ln.reserved)

    def set_lines(self, set_idx: int) -> list[int]:
        """Addresses in a set, next victim first (LRU or FIFO order)."""
        key = (lambda ln: ln.last_use) if self._lru else (lambda ln: ln.born)
        return [ln.addr for ln in sorted(self._sets[set_idx], key=key)]

    def probe(self, addr: int, mask: int = ALL, check_alloc: bool = True) -> int:
        """Classify without side effects: HIT (all sectors valid), HIT_RESERVED (the
        rest pending), SECTOR_MISS (line present, a sector neither), MISS, or
        RESERVATION_FAIL (a miss that could not allocate; MISS to a non-allocating
        write). `check_alloc=False` skips that check (the caller asks `victim()`)."""
        ln = self._lines.get(addr)
        if ln is None:
            if not check_alloc or self._victim(self._index.index(addr)) is not False:
                return MISS
            return RESERVATION_FAIL
        need = self.widen(mask) & ~ln.valid
        if not need:
            return HIT
        return SECTOR_MISS if need & ~ln.reserved else HIT_RESERVED

    def missing(self, addr: int, mask: int = ALL) -> int:
        """Sectors of `mask` neither valid nor pending (what a fetch must bring)."""
        mask = self.widen(mask)
        ln = self._lines.get(addr)
        return mask if ln is None else mask & ~ln.valid & ~ln.reserved

    def victim(self, addr: int) -> tuple[bool, Eviction | None]:
        """(can allocate `addr`, the line that would be evicted or None)."""
        if addr in self._lines:
            return True, None
        v = self._victim(self._index.index(addr))
        if isinstance(v, bool):  # False: every way has a pending fill
            return False, None
        return True, (None if v is None else Eviction(v.addr, v.valid, v.dirty))

    def _victim(self, set_idx: int) -> _Line | None | bool:
        ways = self._sets[set_idx]
        if len(ways) < self.assoc:
            return None
        best: _Line | bool = False
        key = 0
        lru = self._lru
        for ln in ways:
            if ln.reserved:
                continue
            k = ln.last_use if lru else ln.born
            if best is False or k < key:
                best, key = ln, k
        return best

    # -- updates ------------------------------------------------------------------------
    def access(self, addr: int, mask: int = ALL, allocate: bool = True, reserve: bool = True) -> AccessResult:
        """Look up, count and update replacement state (tag_array::access). A MISS
        with `allocate` installs the line (evicting the victim); with `reserve` the
        missing sectors become pending: the caller fetches them and calls `fill`. A
        RESERVATION_FAIL changes nothing but its counter."""
        st = self.stats
        mask = self.widen(mask)
        ln = self._lines.get(addr)
        if ln is not None:
            self._clock += 1
            ln.last_use = self._clock
            st.accesses += 1
            need = mask & ~ln.valid
            if not need:
                st.hits += 1
                return _HIT_RESULT
            missing = need & ~ln.reserved
            if not missing:
                st.pending_hits += 1
                return _PENDING_RESULT
            st.sector_misses += 1
            if reserve:
                ln.reserved |= missing
            return AccessResult(SECTOR_MISS, missing, None)
        if not allocate:
            st.accesses += 1
            st.misses += 1
            return AccessResult(MISS, mask, None)
        set_idx = self._index.index(addr)
        v = self._victim(set_idx)
        if isinstance(v, bool):
            st.res_fail_set += 1
            return AccessResult(RESERVATION_FAIL, 0, None)
        st.accesses += 1
        st.misses += 1
        evicted = None if v is None else self._evict(v)
        ln = self._install(addr, set_idx)
        if reserve:
            ln.reserved = mask
        return AccessResult(MISS, mask, evicted)

    def access_if_hit(self, addr: int, mask: int = ALL) -> bool:
        """`access(addr, mask)` when `probe` would say HIT (True); otherwise change
        nothing (False). The common case of an L1 read in one lookup."""
        ln = self._lines.get(addr)
        if ln is None:
            return False
        mask &= self.full_mask
        t = self._widen_tbl
        if t is not None:
            mask = t[mask]
        if mask & ~ln.valid:
            return False
        self._clock += 1
        ln.last_use = self._clock
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
        ln = self._lines.get(addr)
        if ln is None:
            if not allocate:
                return
            set_idx = self._index.index(addr)
            v = self._victim(set_idx)
            if isinstance(v, bool):
                return
            if v is not None:
                del self._lines[v.addr]
                self._sets[v.set_idx].remove(v)
            ln = self._install(addr, set_idx)
        else:
            self._clock += 1
            ln.last_use = self._clock
        ln.valid |= mask
        if dirty:
            ln.dirty |= mask

    def reserve(self, addr: int, mask: int = ALL) -> int:
        """Mark the absent sectors of `mask` (present line) as pending; returns them."""
        ln = self._line(addr)
        new = self.widen(mask) & ~ln.valid & ~ln.reserved
        ln.reserved |= new
        return new

    def write(self, addr: int, mask: int = ALL, dirty: bool = True) -> None:
        """Store whole sectors into a present line: valid, and dirty if `dirty`. A
        pending fill of them stays pending and will not clean them."""
        ln = self._line(addr)
        mask = self.widen(mask)
        ln.valid |= mask
        if dirty:
            ln.dirty |= mask

    def mark_dirty(self, addr: int, mask: int = ALL) -> None:
        """Mark sectors modified in place (an atomic performed at this cache)."""
        ln = self._line(addr)
        mask = self.widen(mask)
        ln.valid |= mask
        ln.dirty |= mask

    def fill(self, addr: int, mask: int = ALL) -> Eviction | None:
        """Data arrived: the sectors become valid, no longer pending. An absent line is
        allocated here (allocate-on-fill), returning the eviction; check `victim()` first."""
        mask = self.widen(mask)
        ln = self._lines.get(addr)
        evicted = None
        if ln is None:
            set_idx = self._index.index(addr)
            v = self._victim(set_idx)
            if isinstance(v, bool):
                raise RuntimeError(f"fill of {addr:#x} into a set whose ways all have pending fills: "
                                   f"the caller must check victim() first")
            if v is not None:
                evicted = self._evict(v)
            ln = self._install(addr, set_idx)
        ln.valid |= mask
        ln.reserved &= ~mask
        self.stats.fills += 1
        self.stats.fill_sectors += popcount(mask)
        return evicted

    def invalidate(self, addr: int, mask: int = ALL) -> Eviction | None:
        """Drop sectors of a line (write-evict); pending fills stay pending. Returns
        what was dropped (write its dirty sectors back if needed) or None."""
        ln = self._lines.get(addr)
        if ln is None:
            return None
        mask = self.widen(mask)
        dropped = Eviction(addr, ln.valid & mask, ln.dirty & mask)
        ln.valid &= ~mask
        ln.dirty &= ~mask
        if not ln.valid and not ln.reserved:
            del self._lines[addr]
            self._sets[ln.set_idx].remove(ln)
        return dropped

    def invalidate_all(self) -> None:
        """Drop every line (kernel-boundary L1 invalidation); lines with pending fills
        keep only their pending sectors. Dirty data is discarded: `flush()` first."""
        for addr in list(self._lines):
            self.invalidate(addr)

    def flush(self) -> list[Eviction]:
        """Clean every dirty line and return what must be written back."""
        out = []
        for ln in self._lines.values():
            if ln.dirty:
                out.append(Eviction(ln.addr, ln.valid, ln.dirty))
                ln.dirty = 0
        return out

    def _line(self, addr: int) -> _Line:
        ln = self._lines.get(addr)
        if ln is None:
            raise KeyError(f"line {addr:#x} is not in the cache: allocate it with access() first")
        return ln

    def _install(self, addr: int, set_idx: int) -> _Line:
        self._clock += 1
        ln = _Line(addr, set_idx, self._clock)
        self._lines[addr] = ln
        self._sets[set_idx].append(ln)
        return ln

    def _evict(self, v: _Line) -> Eviction:
        del self._lines[v.addr]
        self._sets[v.set_idx].remove(v)
        st = self.stats
        if v.valid:
            st.evictions += 1
        if v.dirty:
            st.writebacks += 1
            st.writeback_sectors += popcount(v.dirty)
        return Eviction(v.addr, v.valid, v.dirty)


# ---------------------------------------------------------------------------- MSHR

class _Entry:
    __slots__ = ("pending", "waiters")

    def __init__(self, pending: int) -> None:
        self.pending = pending              # sectors requested below and not yet back
        self.waiters: list[tuple[Any, int]] = []  # (token, sectors it waits for)


class MSHR:
    """Miss-status holding registers keyed by line: an entry per line with fills
    outstanding, holding up to `max_merge` waiting tokens. A fill releases the tokens
    whose sectors are all back and frees the entry when nothing is pending. A None
    token (a fetch nobody waits for) still takes a merge slot."""

    def __init__(self, entries: int, max_merge: int) -> None:
        if entries < 1 or max_merge < 1:
            raise ValueError(f"MSHR needs entries >= 1 and max_merge >= 1, not {entries}, {max_merge}")
        self.entries = entries
        self.max_merge = max_merge
        self._e: dict[int, _Entry] = {}
        self.stats = MSHRStats()

    def __len__(self) -> int:
        return len(self._e)

    def lines(self) -> dict:
        """The live line -> entry dict (never replaced): owners test its truthiness
        per cycle without a method call. Read only."""
        return self._e

    @property
    def full(self) -> bool:
        return len(self._e) >= self.entries

    def lookup(self, addr: int) -> bool:
        """Is there an entry for this line?"""
        return addr in self._e

    def pending(self, addr: int) -> int:
        """Sectors still awaited for this line (0 when there is no entry)."""
        e = self._e.get(addr)
        return 0 if e is None else e.pending

    def can_allocate(self, addr: int) -> bool:
        return addr not in self._e and len(self._e) < self.entries

    def can_merge(self, addr: int) -> bool:
        e = self._e.get(addr)
        return e is not None and len(e.waiters) < self.max_merge

    def allocate(self, addr: int, token: Any, sector_mask: int = ALL) -> None:
        """New entry for a miss fetching `sector_mask`; `token` waits for all of it."""
        if not self.can_allocate(addr):
            raise RuntimeError(f"MSHR allocate for {addr:#x}: entry exists or table full "
                               f"(caller must check can_allocate())")
        e = _Entry(sector_mask)
        e.waiters.append((token, sector_mask))
        self._e[addr] = e
        st = self.stats
        st.allocations += 1
        st.peak_entries = max(st.peak_entries, len(self._e))

    def merge(self, addr: int, token: Any, sector_mask: int = ALL, fetch: int = 0) -> bool:
        """Add a token waiting for the pending sectors of `sector_mask` (the rest are
        valid); `fetch` adds sectors just requested below. False (no change) when
        the entry already holds `max_merge` tokens."""
        e = self._e.get(addr)
        if e is None:
            raise KeyError(f"MSHR merge for {addr:#x} without an entry (caller must lookup() first)")
        if len(e.waiters) >= self.max_merge:
            return False
        e.pending |= fetch
        e.waiters.append((token, sector_mask & e.pending))
        self.stats.merges += 1
        return True

    def fill(self, addr: int, sector_mask: int = ALL) -> list[Any]:
        """Sectors arrived: return the tokens whose sectors are now all present, in
        arrival order; the entry is freed when nothing is pending."""
        e = self._e.get(addr)
        if e is None:
            raise KeyError(f"MSHR fill for {addr:#x} without an entry")
        e.pending &= ~sector_mask
        st = self.stats
        st.fills += 1
        if not e.pending:
            del self._e[addr]
            out = [t for t, _ in e.waiters]
        else:
            pending = e.pending
            out = [t for t, m in e.waiters if not m & pending]
            e.waiters = [w for w in e.waiters if w[1] & pending]
        st.released += len(out)
        return out
