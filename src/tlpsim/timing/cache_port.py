"""An SM-side cache (L1 data or constant cache) as the LD/ST unit uses it: the
shared tag array and MSHR table of `cache.py` plus a hit latency and a write
policy. It does not tick; the LD/ST unit calls it once per line access."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tlpsim.timing.cache import (
    HIT_RESERVED,
    MISS,
    MSHR,
    RESERVATION_FAIL,
    SECTOR_MISS,
    CacheArray,
    CacheStats,
)


class CachePort:
    """`read` classifies and books one line access; `fill` completes misses."""

    def __init__(self, name: str, array: CacheArray, mshr: MSHR, hit_latency: int,
                 write_through_no_allocate: bool = True) -> None:
        self.name = name
        self.array = array
        self.mshr = mshr
        self.hit_latency = hit_latency
        self.wt_na = write_through_no_allocate
        self.last_evicted = -1   # line address the last "miss" evicted, or -1 (for l1d_access events)

    @property
    def stats(self) -> CacheStats:
        return self.array.stats

    def read(self, line: int, mask: int, token: Any, now: int, can_send: Callable[[], bool]) -> tuple[str, int]:
        """Returns ("hit", ready cycle), ("merged", 0) — waiting on a pending fill —,
        ("miss", sectors to fetch) — the caller must send that request —, or
        ("fail", 0) when it must retry (set, MSHR, merge or queue full)."""
        arr, mshr = self.array, self.mshr
        if arr.access_if_hit(line, mask):
            return "hit", now + self.hit_latency
        st = arr.probe(line, mask)
        if st == HIT_RESERVED:
            if not mshr.can_merge(line):
                arr.stats.res_fail_merge += 1
                return "fail", 0
            arr.access(line, mask)
            mshr.merge(line, token, mask)
            return "merged", 0
        if st == RESERVATION_FAIL:
            arr.stats.res_fail_set += 1
            return "fail", 0
        # MISS or SECTOR_MISS: something must be fetched
        entry = mshr.lookup(line)
        if entry and not mshr.can_merge(line):
            arr.stats.res_fail_merge += 1
            return "fail", 0
        if not entry and not mshr.can_allocate(line):
            arr.stats.res_fail_mshr += 1
            return "fail", 0
        if not can_send():
            arr.stats.res_fail_queue += 1
            return "fail", 0
        r = arr.access(line, mask, allocate=True, reserve=True)
        if r.status == RESERVATION_FAIL:
            return "fail", 0
        ev = r.evicted
        self.last_evicted = ev.addr if ev is not None else -1
        if entry:
            mshr.merge(line, token, mask, fetch=r.missing)
        else:
            mshr.allocate(line, token, r.missing)
        assert st in (MISS, SECTOR_MISS)
        return "miss", r.missing

    def fill(self, line: int, mask: int, now: int) -> list[Any]:
        """Sectors arrived from L2: install them and release the waiting requests."""
        if line in self.array:
            self.array.fill(line, mask)
        return self.mshr.fill(line, mask) if self.mshr.lookup(line) else []

    def write(self, line: int, mask: int, now: int) -> None:
        """A store (write-through, no write-allocate: update a present line only)."""
        if line in self.array:
            self.array.write(line, mask, dirty=not self.wt_na)

    def flush(self) -> None:
        self.array.invalidate_all()


__all__ = ["CachePort", "MISS", "SECTOR_MISS"]
