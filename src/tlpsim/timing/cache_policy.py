"""Cache write and allocation policies as data (GPGPU-Sim's cache-config letters),
and the parser of GPGPU-Sim cache option strings."""

from __future__ import annotations

from dataclasses import dataclass, field


def _choice(what: str, value: str, choices: dict):
    try:
        return choices[value]
    except KeyError:
        raise ValueError(f"unknown {what} {value!r}; choose one of {sorted(choices)}") from None


@dataclass(frozen=True, slots=True)
class WriteActions:
    """What a cache does for one write: `allocate` the line on a miss, `fetch` its
    missing sectors, `write_line` the data (`dirty` for write-back), `send` the write
    to the next level now, `invalidate` the line's copy of the written sectors."""

    allocate: bool = False
    fetch: bool = False
    write_line: bool = False
    dirty: bool = False
    send: bool = False
    invalidate: bool = False


_REPLACEMENT = {"L": "lru", "F": "fifo"}
_WRITE = {"R": "read_only", "B": "write_back", "T": "write_through", "E": "write_evict",
          "L": "local_wb_global_wt"}
_ALLOC = {"m": "on_miss", "f": "on_fill", "s": "streaming"}
_WRITE_ALLOC = {"N": "no_write_allocate", "W": "write_allocate", "F": "fetch_on_write",
                "L": "lazy_fetch_on_read"}
_SET_INDEX = {"L": "linear", "H": "hash", "P": "ipoly", "X": "xor"}


@dataclass(frozen=True)
class CachePolicy:
    """Replacement, write, allocation and set-index policies of a cache, named as in
    tlpsim's config (GPGPU-Sim letters via `from_gpgpusim`)."""

    replacement: str = "lru"
    write_policy: str = "write_back"
    allocation: str = "on_miss"
    write_allocate: str = "no_write_allocate"
    set_index: str = "linear"
    _table: dict = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        for what, value, names in (("replacement", self.replacement, _REPLACEMENT),
                                   ("write_policy", self.write_policy, _WRITE),
                                   ("allocation", self.allocation, _ALLOC),
                                   ("write_allocate", self.write_allocate, _WRITE_ALLOC)):
            if value not in names.values():
                raise ValueError(f"unknown {what} {value!r}; choose one of {sorted(names.values())}")
        from tlpsim.timing.set_index import SET_INDEX_FUNCTIONS

        if self.set_index not in SET_INDEX_FUNCTIONS:
            raise ValueError(f"unknown set_index {self.set_index!r}; choose one of {list(SET_INDEX_FUNCTIONS)}")
        if self.write_policy != "read_only":
            for hit in (False, True):
                for local in (False, True):
                    for partial in (False, True):
                        self._table[hit, local, partial] = self._decide(hit, local, partial)

    @classmethod
    def from_gpgpusim(cls, letters: str) -> CachePolicy:
        """Parse GPGPU-Sim's `<rep>:<wr>:<alloc>:<wr_alloc>:<set_index>` (e.g. the
        GTX480 dl2 "L:B:m:L:L": LRU, write-back, allocate on miss, lazy fetch on
        read, linear index)."""
        parts = letters.strip().split(":")
        if len(parts) != 5:
            raise ValueError(f"cache policy letters {letters!r}: expected <rep>:<wr>:<alloc>:<wr_alloc>:<set_index>")
        rp, wp, ap, wap, sif = parts
        return cls(replacement=_choice("replacement letter", rp, _REPLACEMENT),
                   write_policy=_choice("write policy letter", wp, _WRITE),
                   allocation=_choice("allocation letter", ap, _ALLOC),
                   write_allocate=_choice("write-allocate letter", wap, _WRITE_ALLOC),
                   set_index=_choice("set-index letter", sif, _SET_INDEX))

    @property
    def allocate_on_fill(self) -> bool:
        """Read misses install the line when the data returns (GPGPU-Sim treats
        'streaming' as on-fill)."""
        return self.allocation != "on_miss"

    def on_write(self, hit: bool, local: bool = False, partial: bool = False) -> WriteActions:
        """Actions for a write that hits (all written sectors valid) or misses;
        `local`: local memory (matters for local_wb_global_wt); `partial`: part of a
        sector (fetch_on_write then fetches). As GPGPU-Sim's wr_hit_*/wr_miss_*; its
        "L" policy evicts on a global write hit (wr_hit_global_we_local_wb)."""
        try:
            return self._table[hit, local, partial]
        except KeyError:
            raise ValueError("write to a read_only cache") from None

    def _decide(self, hit: bool, local: bool, partial: bool) -> WriteActions:
        wp = self.write_policy
        if wp == "local_wb_global_wt":
            wp = "write_back" if local else "write_evict"
        wb = wp == "write_back"
        if hit:
            if wp == "write_evict":
                return WriteActions(send=True, invalidate=True)
            return WriteActions(write_line=True, dirty=wb, send=not wb)
        wa = self.write_allocate
        if wa == "no_write_allocate":
            return WriteActions(send=True)
        if wa == "write_allocate":  # GPGPU-Sim 3.x naive: write through and read the line
            return WriteActions(allocate=True, fetch=True, send=True)
        fetch = wa == "fetch_on_write" and partial
        return WriteActions(allocate=True, fetch=fetch, write_line=True, dirty=wb, send=not wb)


def parse_gpgpusim_cache(spec: str) -> dict:
    """Decode a GPGPU-Sim cache option such as the GTX480 dl2
    "S:64:128:8,L:B:m:L:L,A:256:4,4:0,32" —
    `<type>:<nsets>:<line>:<assoc>,<policy letters>,<mshr>:<entries>:<merge>,<miss queue>[:<result fifo>][,<data port>]`
    — into constructor arguments (type S = sectored, N = whole-line fills)."""
    groups = [g.strip() for g in spec.strip().split(",")]
    if len(groups) < 4:
        raise ValueError(f"cache spec {spec!r}: expected at least 4 comma-separated groups")
    geo, pol, mshr, mq = groups[0].split(":"), groups[1], groups[2].split(":"), groups[3].split(":")
    if len(geo) != 4 or geo[0] not in ("S", "N") or len(mshr) != 3:
        raise ValueError(f"cache spec {spec!r}: bad geometry {groups[0]!r} or MSHR {groups[2]!r}")
    n_sets, line, assoc = int(geo[1]), int(geo[2]), int(geo[3])
    port = int(groups[4]) if len(groups) > 4 and groups[4] else 0
    from tlpsim.timing.cache import SECTOR_BYTES

    return {
        "size_bytes": n_sets * line * assoc, "n_sets": n_sets, "line_bytes": line, "assoc": assoc,
        "sector_bytes": SECTOR_BYTES if geo[0] == "S" else None,
        "policy": CachePolicy.from_gpgpusim(pol),
        "mshr_type": mshr[0], "mshr_entries": int(mshr[1]), "mshr_max_merge": int(mshr[2]),
        "miss_queue_entries": int(mq[0]), "result_fifo_entries": int(mq[1]) if len(mq) > 1 else 0,
        "data_port_bytes": port or line,
    }
