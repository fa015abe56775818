"""An SM-side cache (L1 data or constant cache) as the LD/ST unit uses it: the
shared tag array and MSHR table of `cache.py` plus a hit latency and a write
policy. It does not tick; the LD/ST unit calls it once per line access.

Stores follow GPGPU-Sim's data_cache for a no-write-allocate L1 (`wr_hit_*`,
`wr_miss_no_wa` in gpu-cache.cc): a write-back hit leaves the line dirty here and
sends nothing; a write-through hit updates the line and sends the write; a
write-evict hit invalidates the written sectors and sends it; a miss (a pending
fill included) sends it without allocating. "local_wb_global_wt" (GTX480's "L")
writes local memory back and global memory through with eviction. A read miss that
evicts a dirty line also sends the line's writeback (`last_writeback`).

An allocate-on-fill cache ("on_fill", and "streaming", which GPGPU-Sim turns into
on-fill) reserves no line at a miss: the MSHR alone tracks what is on its way, a set
never refuses a miss, and `fill` allocates the line, evicting the set's LRU line
then (a dirty victim's data is not written back from there, as in GPGPU-Sim's
tag_array::fill)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from tlpsim.timing.cache_policy import CachePolicy
from tlpsim.timing.cache import (
    ALL,
    HIT,
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

# what `write` did with a store: the caller sends it to the next level, or the line took it
WRITE_SENT: Final = 0
WRITE_ABSORBED: Final = 1

_WRITE_THROUGH: Final = CachePolicy(write_policy="write_through")


class CachePort:
    """`read` classifies and books one line access; `fill` completes misses."""

    def __init__(self, name: str, array: CacheArray, mshr: MSHR, hit_latency: int,
                 policy: CachePolicy | None = None) -> None:
        self.name = name
        self.array = array
        self.mshr = mshr
        self.hit_latency = hit_latency
        if policy is not None and policy.write_allocate != "no_write_allocate":
            raise ValueError(f"{name}: write_allocate {policy.write_allocate!r} is not modelled for an SM-side "
                             f"cache (GPGPU-Sim's Fermi, Maxwell and Hopper L1s are no_write_allocate)")
        # the stores' policy; none given, or a read-only cache (plug-in requests may still
        # store through it): write-through, a store updating a present line
        self.policy = (policy if policy is not None and policy.write_policy != "read_only"
                       else _WRITE_THROUGH)
        # allocation when the fill arrives ("on_fill"; GPGPU-Sim treats "streaming" so too)
        # rather than at the miss: no line is reserved, so a set never refuses a miss
        self.on_fill = policy is not None and policy.allocate_on_fill
        # whether a line can become dirty here: a read miss then keeps room for a
        # writeback beside its request (GPGPU-Sim's rd_miss_base: miss_queue_full(1))
        self.holds_dirty = self.policy.write_policy in ("write_back", "local_wb_global_wt")
        self.last_evicted = -1   # line address the last "miss" evicted, or -1 (for l1d_access events)
        # (line address, dirty sectors) the last "miss" evicted dirty, or (-1, 0): the caller sends it
        self.last_writeback: tuple[int, int] = (-1, 0)
        self.last_refusal = ""   # why the last "fail" was refused (a FAIL_* counter name)
        # bumped by every change of the tags or MSHRs: a refused read retried with the
        # same version (and the same room to send) is refused again, for the same reason
        self.version = 0

    @property
    def stats(self) -> CacheStats:
        return self.array.stats

    def read(self, line: int, mask: int, token: Any, now: int, can_send: Callable[[], bool] | None = None,
             room: bool = True) -> tuple[str, int]:
        """Returns ("hit", ready cycle), ("merged", 0) — waiting on a pending fill —,
        ("miss", sectors to fetch) — the caller must send that request —, or
        ("fail", 0) when it must retry (set, MSHR, merge or queue full: `last_refusal`
        names the counter it bumped). Whether a miss can be sent: `can_send()`, asked
        only when a miss needs it (a queue's can_push counts refusals), or else `room`
        (known beforehand: a bound method made per read costs more than the answer)."""
        arr, mshr = self.array, self.mshr
        if arr.access_if_hit(line, mask):
            self.version += 1
            return "hit", now + self.hit_latency
        if self.on_fill:
            return self._read_on_fill(line, mask, token, can_send, room)
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
        if not (room if can_send is None else can_send()):
            return self._refuse(FAIL_QUEUE)
        r = arr.access(line, mask, allocate=True, reserve=True)
        if r.status == RESERVATION_FAIL:  # (probe said a way is free: not reached; access counted it)
            self.last_refusal = FAIL_SET
            return "fail", 0
        self.version += 1
        ev = r.evicted
        self.last_evicted = ev.addr if ev is not None else -1
        self.last_writeback = (ev.addr, arr.widen(ev.dirty)) if ev is not None and ev.dirty else (-1, 0)
        if entry:
            mshr.merge(line, token, mask, fetch=r.missing)
        else:
            mshr.allocate(line, token, r.missing)
        assert st in (MISS, SECTOR_MISS)
        return "miss", r.missing

    def _read_on_fill(self, line: int, mask: int, token: Any, can_send: Callable[[], bool] | None,
                      room: bool) -> tuple[str, int]:
        """A read that misses in an allocate-on-fill cache: the MSHR alone tracks the
        sectors on their way (GPGPU-Sim's send_read_request with m_alloc_policy ON_FILL);
        the lookup counts as a miss and nothing is allocated until `fill`."""
        arr, mshr = self.array, self.mshr
        entry = mshr.lookup(line)
        if entry:
            if not mshr.can_merge(line):
                return self._refuse(FAIL_MERGE)
        elif not mshr.can_allocate(line):
            return self._refuse(FAIL_MSHR)
        fetch = arr.missing(line, mask) & ~mshr.pending(line)
        if fetch and not (room if can_send is None else can_send()):
            return self._refuse(FAIL_QUEUE)
        arr.access(line, mask, allocate=False, reserve=False)
        self.version += 1
        self.last_evicted = -1
        self.last_writeback = (-1, 0)
        if entry:
            mshr.merge(line, token, mask, fetch=fetch)
            return ("miss", fetch) if fetch else ("merged", 0)
        mshr.allocate(line, token, fetch)
        return "miss", fetch

    def _refuse(self, reason: str) -> tuple[str, int]:
        self.array.stats.count_fail(reason)
        self.last_refusal = reason
        return "fail", 0

    def fill(self, line: int, mask: int, now: int) -> list[Any]:
        """Sectors arrived from L2: install them and release the waiting requests."""
        self.version += 1
        # an allocate-on-fill cache allocates the line now, evicting the set's LRU line (like
        # GPGPU-Sim's tag_array::fill, a dirty victim's data is not written back from here)
        if self.on_fill or line in self.array:
            self.array.fill(line, mask)
        return self.mshr.fill(line, mask) if self.mshr.lookup(line) else []

    def install(self, line: int) -> bool:
        """A prefetched line arrived: place it whole, evicting its set's LRU line;
        False (dropped) when every way of the set waits for a fill."""
        arr = self.array
        if line not in arr and not arr.victim(line)[0]:
            return False
        arr.fill(line, ALL)
        self.version += 1
        return True

    def write(self, line: int, mask: int, local: bool, now: int) -> int:
        """A store of `mask`'s sectors (`local`: to local memory): WRITE_ABSORBED when
        the line keeps it (a write-back hit), else WRITE_SENT (the caller sends it on).
        A hit is a present line whose written sectors are all valid; it counts as an
        access and updates the replacement order, as GPGPU-Sim's wr_hit_* do."""
        self.version += 1
        arr = self.array
        if arr.probe(line, mask, check_alloc=False) != HIT:
            return WRITE_SENT  # no write-allocate: the line (or its pending fill) is left as it is
        act = self.policy.on_write(True, local)
        arr.access(line, mask, allocate=False, reserve=False)
        if act.invalidate:
            arr.invalidate(line, mask)
            return WRITE_SENT
        arr.write(line, mask, dirty=act.dirty)
        return WRITE_SENT if act.send else WRITE_ABSORBED

    def flush(self) -> None:
        self.version += 1
        self.array.invalidate_all()

    @property
    def size_bytes(self) -> int:
        """The cache's capacity now."""
        return self.array.size_bytes

    def resize(self, size_bytes: int) -> None:
        """The array at `size_bytes` (a unified L1's carveout), emptied; nothing if it has them."""
        if size_bytes != self.array.size_bytes:
            self.version += 1
            self.array.resize(size_bytes)


__all__ = ["CachePort", "FAIL_MERGE", "FAIL_MSHR", "FAIL_QUEUE", "FAIL_SET", "MISS", "SECTOR_MISS",
           "WRITE_ABSORBED", "WRITE_SENT"]
