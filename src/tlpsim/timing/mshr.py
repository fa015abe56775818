"""Miss-status holding registers (GPGPU-Sim's mshr_table): the misses a cache has sent
below and the requests waiting for each, keyed by line.

The table is open addressing in machine words (linear probing, at most half full):
a lookup hashes the line address and compares a few unboxed keys. A dict keyed by the
line boxed the address on every access and compared it through the object protocol,
a few percent of a memory-bound run's time (docs/compiled-core.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

from librt.vecs import vec
from mypy_extensions import i64

_EMPTY: Final = -1  # the key of a free slot (line addresses are never negative)


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


class _Entry:
    __slots__ = ("pending", "waiters")

    def __init__(self, pending: int) -> None:
        self.pending = pending              # sectors requested below and not yet back
        self.waiters: list[tuple[Any, int]] = []  # (token, sectors it waits for)


class MSHR:
    """Miss-status holding registers keyed by line: an entry per line with fills
    outstanding, holding up to `max_merge` waiting tokens. A fill releases the tokens
    whose sectors are all back and frees the entry when nothing is pending. A None
    token (a fetch nobody waits for) still takes a merge slot. Masks are in 32-byte
    sectors (-1: all)."""

    def __init__(self, entries: int, max_merge: int) -> None:
        if entries < 1 or max_merge < 1:
            raise ValueError(f"MSHR needs entries >= 1 and max_merge >= 1, not {entries}, {max_merge}")
        self.entries = entries
        self.max_merge = max_merge
        cap = 8
        while cap < 2 * entries:
            cap *= 2
        self._mask = cap - 1
        self._bits = cap.bit_length() - 1
        self._keys = vec[i64]([_EMPTY] * cap)
        self._vals: list[_Entry | None] = [None] * cap
        self._n = 0
        # the last line looked up and its entry (None: absent): a miss asks lookup,
        # can_allocate and allocate for one line in a row, a fill lookup and fill
        self._memo_addr: i64 = -1
        self._memo: _Entry | None = None
        self.stats = MSHRStats()

    # -- the table ----------------------------------------------------------------------
    def _home(self, addr: i64) -> i64:
        """The slot a line's probe starts at (the line number folded to the table's bits)."""
        x = addr >> 7
        b = self._bits
        return (x ^ (x >> b) ^ (x >> (2 * b))) & self._mask

    def _slot(self, addr: i64) -> i64:
        """The slot holding `addr`, or -1."""
        keys = self._keys
        mask = self._mask
        h = self._home(addr)
        while True:
            k = keys[h]
            if k == addr:
                return h
            if k == _EMPTY:
                return -1
            h = (h + 1) & mask

    def _get(self, addr: int) -> _Entry | None:
        if addr == self._memo_addr:
            return self._memo
        s = self._slot(addr)
        e = self._vals[s] if s >= 0 else None
        self._memo_addr = addr
        self._memo = e
        return e

    def _insert(self, addr: i64, e: _Entry) -> None:
        keys = self._keys
        mask = self._mask
        h = self._home(addr)
        while keys[h] != _EMPTY:
            h = (h + 1) & mask
        keys[h] = addr
        self._vals[h] = e
        self._n += 1

    def _remove(self, addr: i64) -> None:
        """Free `addr`'s slot, moving later entries of its probe run back (backward-shift
        deletion: every entry stays reachable from its home slot without tombstones)."""
        keys, vals = self._keys, self._vals
        mask = self._mask
        j = self._slot(addr)
        keys[j] = _EMPTY
        vals[j] = None
        k = j
        while True:
            k = (k + 1) & mask
            key = keys[k]
            if key == _EMPTY:
                break
            h = self._home(key)
            # it stays when its home lies cyclically in (j, k]: j is not on its probe path
            stays = (j < h and h <= k) if j <= k else (h > j or h <= k)
            if stays:
                continue
            keys[j] = key
            vals[j] = vals[k]
            keys[k] = _EMPTY
            vals[k] = None
            j = k
        self._n -= 1

    # -- the interface -------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def lines(self) -> dict[int, _Entry]:
        """Line -> entry, for inspection (a new dict)."""
        out: dict[int, _Entry] = {}
        for s in range(len(self._vals)):
            e = self._vals[s]
            if e is not None:
                out[int(self._keys[s])] = e
        return out

    @property
    def full(self) -> bool:
        return self._n >= self.entries

    def lookup(self, addr: int) -> bool:
        """Is there an entry for this line?"""
        return self._get(addr) is not None

    def pending(self, addr: int) -> int:
        """Sectors still awaited for this line (0 when there is no entry)."""
        e = self._get(addr)
        return 0 if e is None else e.pending

    def can_allocate(self, addr: int) -> bool:
        return self._n < self.entries and self._get(addr) is None

    def can_merge(self, addr: int) -> bool:
        e = self._get(addr)
        return e is not None and len(e.waiters) < self.max_merge

    def allocate(self, addr: int, token: Any, sector_mask: int = -1) -> None:
        """New entry for a miss fetching `sector_mask`; `token` waits for all of it."""
        if not self.can_allocate(addr):
            raise RuntimeError(f"MSHR allocate for {addr:#x}: entry exists or table full "
                               f"(caller must check can_allocate())")
        e = _Entry(sector_mask)
        e.waiters.append((token, sector_mask))
        self._insert(addr, e)
        self._memo_addr = addr
        self._memo = e
        st = self.stats
        st.allocations += 1
        st.peak_entries = max(st.peak_entries, self._n)

    def merge(self, addr: int, token: Any, sector_mask: int = -1, fetch: int = 0) -> bool:
        """Add a token waiting for the pending sectors of `sector_mask` (the rest are
        valid); `fetch` adds sectors just requested below. False (no change) when
        the entry already holds `max_merge` tokens."""
        e = self._get(addr)
        if e is None:
            raise KeyError(f"MSHR merge for {addr:#x} without an entry (caller must lookup() first)")
        if len(e.waiters) >= self.max_merge:
            return False
        e.pending |= fetch
        e.waiters.append((token, sector_mask & e.pending))
        self.stats.merges += 1
        return True

    def fill(self, addr: int, sector_mask: int = -1) -> list[Any]:
        """Sectors arrived: return the tokens whose sectors are now all present, in
        arrival order; the entry is freed when nothing is pending."""
        e = self._get(addr)
        if e is None:
            raise KeyError(f"MSHR fill for {addr:#x} without an entry")
        e.pending &= ~sector_mask
        st = self.stats
        st.fills += 1
        if not e.pending:
            self._remove(addr)
            self._memo = None  # (the memo is this line's)
            out = [t for t, _ in e.waiters]
        else:
            pending = e.pending
            out = [t for t, m in e.waiters if not m & pending]
            e.waiters = [w for w in e.waiters if w[1] & pending]
        st.released += len(out)
        return out
