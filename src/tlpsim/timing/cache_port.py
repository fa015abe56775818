"""An SM-side cache (L1 data or constant cache) as the LD/ST unit uses it: the
shared tag array and MSHR table of `cache.py` plus a hit latency and a write
policy. It does not tick; the LD/ST unit calls it once per line access."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from tlpsim.timing.cache import (
    HIT_RESERVED,
    MISS,
    MSHR,
    RESERVATION_FAIL,
    SECTOR_MISS,
    CacheArray,
    CacheStats,
)


# why `read` refused an access: the name of the CacheStats counter it bumped
FAIL_SET: Final = "res_fail_set"        # every way of the set has a pending fill
FAIL_MSHR: Final = "res_fail_mshr"      # no free MSHR entry
FAIL_MERGE: Final = "res_fail_merge"    # the line's MSHR entry holds max_merge requests
FAIL_QUEUE: Final = "res_fail_queue"    # no room to send the miss


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
        self.last_refusal = ""   # why the last "fail" was refused (a FAIL_* counter name)
        # bumped by every change of the tags or MSHRs: a refused read retried with the
        # same version (and the same room to send) is refused again, for the same reason
        self.version = 0

    @property
    def stats(self) -> CacheStats:
        return self.array.stats

    def read(self, line: int, mask: int, token: Any, now: int, can_send: Callable[[], bool]) -> tuple[str, int]:
        """Returns ("hit", ready cycle), ("merged", 0) — waiting on a pending fill —,
        ("miss", sectors to fetch) — the caller must send that request —, or
        ("fail", 0) when it must retry (set, MSHR, merge or queue full: `last_refusal`
        names the counter it bumped)."""
        arr, mshr = self.array, self.mshr
        if arr.access_if_hit(line, mask):
            self.version += 1
            return "hit", now + self.hit_latency
        st = arr.probe(line, mask)
        if st == HIT_RESERVED:
            if not mshr.can_merge(line):
                return self._refuse(FAIL_MERGE)
            arr.access(line, mask)
            mshr.merge(line, token, mask)
            self.version += 1
            return "merged", 0
        if st == RESERVATION_FAIL:
            return self._refuse(FAIL_SET)
        # MISS or SECTOR_MISS: something must be fetched
        entry = mshr.lookup(line)
        if entry and not mshr.can_merge(line):
            return self._refuse(FAIL_MERGE)
        if not entry and not mshr.can_allocate(line):
            return self._refuse(FAIL_MSHR)
        if not can_send():
            return self._refuse(FAIL_QUEUE)
        r = arr.access(line, mask, allocate=True, reserve=True)
        if r.status == RESERVATION_FAIL:  # (probe said a way is free: not reached; access counted it)
            self.last_refusal = FAIL_SET
            return "fail", 0
        self.version += 1
        ev = r.evicted
        self.last_evicted = ev.addr if ev is not None else -1
        if entry:
            mshr.merge(line, token, mask, fetch=r.missing)
        else:
            mshr.allocate(line, token, r.missing)
        assert st in (MISS, SECTOR_MISS)
        return "miss", r.missing

    def _refuse(self, reason: str) -> tuple[str, int]:
        self.array.stats.count_fail(reason)
        self.last_refusal = reason
        return "fail", 0

    def fill(self, line: int, mask: int, now: int) -> list[Any]:
        """Sectors arrived from L2: install them and release the waiting requests."""
        self.version += 1
        if line in self.array:
            self.array.fill(line, mask)
        return self.mshr.fill(line, mask) if self.mshr.lookup(line) else []

    def write(self, line: int, mask: int, now: int) -> None:
        """A store (write-through, no write-allocate: update a present line only)."""
        self.version += 1
        if line in self.array:
            self.array.write(line, mask, dirty=not self.wt_na)

    def flush(self) -> None:
        self.version += 1
        self.array.invalidate_all()


__all__ = ["CachePort", "FAIL_MERGE", "FAIL_MSHR", "FAIL_QUEUE", "FAIL_SET", "MISS", "SECTOR_MISS"]
