"""Cache sections: `[l1d]`, `[l1c]` (constant), `[l1i]` (instruction), `[l1t]`
(texture) per SM, and `[l2]` (total capacity, split into slices per memory
partition).

Each field names the part of GPGPU-Sim's cache micro-syntax
`<nsets>:<bsize>:<assoc>,<rep>:<wr>:<alloc>:<wr_alloc>:<set_index>,<mshr>:<N>:<merge>,<mq>`
it replaces; capacity is given directly (`size_kb`) and the set count is derived
(`n_sets`), so sizes read the way paper tables give them.
"""

from __future__ import annotations

from typing import Literal

from tlpsim.config.base import Section, is_pow2
from tlpsim.config.types import Bytes, KiB, field

__all__ = ["CacheConfig", "L1CConfig", "L1DConfig", "L1IConfig", "L1TConfig", "L2Config"]

Replacement = Literal["lru", "fifo"]
WritePolicy = Literal["read_only", "write_back", "write_through", "write_evict", "local_wb_global_wt"]
Allocation = Literal["on_miss", "on_fill", "streaming"]
WriteAllocate = Literal["no_write_allocate", "write_allocate", "fetch_on_write", "lazy_fetch_on_read"]
SetIndex = Literal["linear", "hash", "ipoly", "xor"]


class CacheConfig(Section):
    """Geometry, policies and miss handling of one cache (defaults: a read-only 2 KiB cache)."""

    size_kb: KiB = field(2, "capacity", unit="KiB", ge=1, le=1 << 20)
    assoc: int = field(4, "ways per set", unit="ways", ge=1, le=1024)
    line_bytes: Bytes = field(128, "line (block) size", unit="bytes", ge=16, le=4096)
    sector_bytes: Bytes = field(32, "sector size: the unit of fills and of DRAM/L2 traffic when sectored",
                                unit="bytes", ge=4, le=4096)
    sectored: bool = field(False, "lines are filled per sector ('S' cache type in GPGPU-Sim) rather than whole "
                                  "('N')")
    replacement: Replacement = field("lru", "replacement policy (<rep>: L = lru, F = fifo)")
    write_policy: WritePolicy = field("read_only", "write policy (<wr>: R read_only, B write_back, "
                                                   "T write_through, E write_evict, L local_wb_global_wt)")
    allocation: Allocation = field("on_fill", "when a missing line is allocated (<alloc>: m on_miss, f on_fill, "
                                              "s streaming)")
    write_allocate: WriteAllocate = field("no_write_allocate",
                                          "write-miss policy (<wr_alloc>: N no_write_allocate, W write_allocate, "
                                          "F fetch_on_write, L lazy_fetch_on_read)")
    set_index: SetIndex = field("linear", "set-index function (<set_index>: L linear, H hash, P ipoly, X xor)")
    mshr_entries: int = field(2, "miss-status holding registers (<N> of the MSHR spec)", unit="entries",
                              ge=1, le=65536)
    mshr_max_merge: int = field(32, "requests merged into one MSHR entry (<merge>)", unit="requests",
                                ge=1, le=4096)
    miss_queue_entries: int = field(4, "miss queue towards the next level (<mq>)", unit="entries",
                                    ge=0, le=65536)
    hit_latency: int = field(1, "hit latency", unit="cycles", ge=0, le=100000)

    def problems(self) -> list[str]:
        out = []
        k = self.k
        if not is_pow2(self.line_bytes):
            out.append(f"{k('line_bytes')} ({self.line_bytes}) must be a power of two")
        if self.line_bytes % self.sector_bytes:
            out.append(f"{k('line_bytes')} ({self.line_bytes}) must be a multiple of {k('sector_bytes')} "
                       f"({self.sector_bytes})")
        out += self._sector_problems()
        out += self._geometry(self.size_kb * 1024, k("size_kb"))
        return out

    def _sector_problems(self) -> list[str]:
        # the memory system moves 32-byte sectors (timing/flits.py SECTOR_BYTES): a
        # line holds whole sectors, and a sectored cache fills whole sectors
        from tlpsim.timing.flits import SECTOR_BYTES

        out = []
        if self.line_bytes < SECTOR_BYTES:
            out.append(f"{self.k('line_bytes')} ({self.line_bytes}) must be at least {SECTOR_BYTES}, the memory "
                       "system's sector")
        if self.sectored and self.sector_bytes % SECTOR_BYTES:
            out.append(f"{self.k('sector_bytes')} ({self.sector_bytes}) must be a multiple of {SECTOR_BYTES}, the "
                       f"memory system's sector, when {self.k('sectored')} is true")
        return out

    def _geometry(self, nbytes: int, what: str) -> list[str]:
        way_bytes = self.line_bytes * self.assoc
        if nbytes % way_bytes or nbytes < way_bytes:
            return [f"{what} gives {nbytes} bytes, not a whole number of sets of {self.k('assoc')} "
                    f"({self.assoc}) × {self.k('line_bytes')} ({self.line_bytes}) bytes"]
        sets = nbytes // way_bytes
        if not is_pow2(sets):
            return [f"{what} gives {sets} sets of {self.k('assoc')} ({self.assoc}) × {self.k('line_bytes')} "
                    f"({self.line_bytes}) bytes; the set count must be a power of two (change the size or "
                    f"the associativity)"]
        # the set-index function's own limits (the Fermi hash knows only 32 or 64 sets
        # of 128 B), asked of the function the cache will use rather than restated here
        from tlpsim.timing.set_index import make_set_index

        try:
            make_set_index(self.set_index, sets, self.line_bytes)
        except ValueError as exc:
            return [f"{self.k('set_index')} = '{self.set_index}' does not fit {what}: {sets} sets of "
                    f"{self.k('line_bytes')} ({self.line_bytes}) bytes ({exc}; set_index = 'linear' fits any)"]
        return []

    @property
    def size_bytes(self) -> int:
        """Capacity in bytes."""
        return self.size_kb * 1024

    @property
    def n_sets(self) -> int:
        """Sets = capacity / (line × ways)."""
        return self.size_bytes // (self.line_bytes * self.assoc)

    @property
    def sectors_per_line(self) -> int:
        """Sectors in one line."""
        return self.line_bytes // self.sector_bytes


class L1DConfig(CacheConfig):
    """Per-SM L1 data cache (GPGPU-Sim gpgpu_cache:dl1). Defaults: GTX480."""

    KEY = "l1d"

    enabled: bool = field(True, "false models an SM without an L1D ('none' in GPGPU-Sim)")
    size_kb: KiB = field(16, "capacity", unit="KiB", ge=1, le=1 << 20)
    write_policy: WritePolicy = field("local_wb_global_wt", "write policy (<wr>: R read_only, B write_back, "
                                                            "T write_through, E write_evict, L local_wb_global_wt)")
    allocation: Allocation = field("on_miss", "when a missing line is allocated (<alloc>: m on_miss, f on_fill, "
                                              "s streaming)")
    set_index: SetIndex = field("hash", "set-index function (<set_index>: L linear, H hash, P ipoly, X xor)")
    mshr_entries: int = field(64, "miss-status holding registers", unit="entries", ge=1, le=65536)
    mshr_max_merge: int = field(8, "requests merged into one MSHR entry", unit="requests", ge=1, le=4096)
    miss_queue_entries: int = field(8, "miss queue towards the interconnect", unit="entries", ge=0, le=65536)
    hit_latency: int = field(35, "hit latency (gpgpu_l1_latency)", unit="core cycles", ge=0, le=100000)
    bypass_global: bool = field(False, "global loads skip the L1D (gpgpu_gmem_skip_L1D, nvcc -dlcm=cg); "
                                       "local memory is still cached")
    banks: int = field(1, "L1D banks (gpgpu_l1_banks): up to this many of a memory instruction's accesses enter "
                          "the L1's latency pipeline a cycle, no two in one bank, and as many tag lookups leave it; "
                          "a sectored L1 interleaves its banks by 32-byte sector (GPGPU-Sim's Volta model), a "
                          "line-filled one by line", unit="banks", ge=1, le=64)
    requests_per_cycle: int = field(1, "memory instructions the LD/ST unit starts per core cycle "
                                       "(gpgpu_mem_unit_ports); tlpsim models one, every preset's value",
                                    unit="requests/cycle", ge=1, le=1)
    shared_carveouts_kb: tuple[int, ...] = field(
        (), "shared-memory capacities the L1/shared array can be split at (GPGPU-Sim gpgpu_shmem_option with "
            "gpgpu_adaptive_cache_config): when given, size_kb is the whole array (gpgpu_unified_l1d_size) and "
            "each batch of launches gets the L1 that its carveout leaves, in whole ways of the same sets "
            "(timing/carveout.py); empty: the L1 is size_kb for every launch", unit="KiB")
    carveout_preference: int = field(
        -1, "shared-memory carveout preference, in percent of the largest carveout, for launches whose kernel "
            "sets none (its own cudaFuncAttributePreferredSharedMemoryCarveout, or CuPy's "
            "preferred_shared_memory_carveout, comes first): -1 = none, the smallest carveout that keeps the "
            "launch's occupancy (the driver's default); 0..100 = the smallest carveout at or above that "
            "share, raised if the occupancy needs more (a preference never lowers occupancy here)",
        unit="%", ge=-1, le=100)

    def problems(self) -> list[str]:
        out = super().problems()
        # the LD/ST unit models GPGPU-Sim's no-write-allocate L1 stores (timing/cache_port.py)
        if self.write_policy == "read_only":
            out.append(f"{self.k('write_policy')} = 'read_only': the L1D takes stores; choose write_back, "
                       "write_through, write_evict or local_wb_global_wt")
        if self.write_policy in ("write_back", "local_wb_global_wt") and self.miss_queue_entries < 2:
            out.append(f"{self.k('miss_queue_entries')} ({self.miss_queue_entries}) must be at least 2 with "
                       f"{self.k('write_policy')} = '{self.write_policy}': a read miss keeps room for its request "
                       "and a dirty victim's writeback (GPGPU-Sim's miss_queue_full(1))")
        if self.write_allocate != "no_write_allocate":
            out.append(f"{self.k('write_allocate')} = '{self.write_allocate}' is not modelled for the L1D "
                       "(GPGPU-Sim's Fermi, Maxwell and Hopper L1s are no_write_allocate): use no_write_allocate")
        out += self._carveout_problems()
        return out

    def _carveout_problems(self) -> list[str]:
        k = self.k
        options = self.shared_carveouts_kb
        if not options:
            if self.carveout_preference != -1:
                return [f"{k('carveout_preference')} ({self.carveout_preference}) needs {k('shared_carveouts_kb')}: "
                        "without carveouts the L1 is size_kb for every launch"]
            return []
        if list(options) != sorted(set(options)) or options[0] < 0:
            return [f"{k('shared_carveouts_kb')} {list(options)} must be distinct sizes >= 0 in increasing order"]
        if options[-1] >= self.size_kb:
            return [f"{k('shared_carveouts_kb')}: the largest carveout ({options[-1]} KiB) leaves no L1 out of "
                    f"{k('size_kb')} ({self.size_kb} KiB, the whole L1/shared array)"]
        set_kb = self.size_bytes // self.assoc / 1024    # KiB one way adds across all sets
        uneven = [c for c in options if ((self.size_kb - c) * 1024) % (self.size_bytes // self.assoc)]
        if uneven:
            return [f"{k('shared_carveouts_kb')}: carveouts {uneven} leave an L1 that is not a whole number of "
                    f"ways of {set_kb:g} KiB ({self.n_sets} sets x {self.line_bytes} B): the sets stay, the ways "
                    f"shrink (GPGPU-Sim's adaptive L1)"]
        return []


class L1CConfig(CacheConfig):
    """Per-SM constant cache (GPGPU-Sim gpgpu_const_cache:l1). Defaults: GTX480, 8 KiB."""

    KEY = "l1c"

    size_kb: KiB = field(8, "capacity", unit="KiB", ge=1, le=1 << 20)
    assoc: int = field(2, "ways per set", unit="ways", ge=1, le=1024)
    line_bytes: Bytes = field(64, "line (block) size", unit="bytes", ge=16, le=4096)


class L1IConfig(CacheConfig):
    """Per-SM instruction cache (GPGPU-Sim gpgpu_cache:il1). Defaults: GTX480, 2 KiB."""

    KEY = "l1i"

    perfect: bool = field(False, "every instruction fetch hits (GPGPU-Sim gpgpu_perfect_inst_const_cache); "
                                 "false: misses fetch the line from L2")
    prefetch_lines: int = field(0, "stream-buffer instruction prefetcher: a miss starts a stream at the next line, "
                                   "whose lines are requested one a cycle, at most this many in flight, keeping "
                                   "this many lines ahead of the fetches that use it (Huerta et al. 2025, §5.2: 16 "
                                   "on NVIDIA's recent SMs); 0: none, as GPGPU-Sim. Unused with perfect = true, "
                                   "like the cache's geometry", unit="lines", ge=0, le=1024)

    def problems(self) -> list[str]:
        out = super().problems()
        if self.prefetch_lines and self.line_bytes != 128:
            out.append(f"{self.k('prefetch_lines')} needs 128-byte instruction lines (the fetch stage's), not "
                       f"{self.k('line_bytes')} = {self.line_bytes}")
        return out


class L1TConfig(CacheConfig):
    """Per-SM texture cache (GPGPU-Sim gpgpu_tex_cache:l1). Defaults: GTX480, 12 KiB."""

    KEY = "l1t"

    size_kb: KiB = field(12, "capacity", unit="KiB", ge=1, le=1 << 20)
    assoc: int = field(24, "ways per set", unit="ways", ge=1, le=1024)
    allocation: Allocation = field("on_miss", "when a missing line is allocated (<alloc>: m on_miss, f on_fill, "
                                              "s streaming)")
    mshr_entries: int = field(128, "texture fetch FIFO entries (MSHR spec T:<N>:<merge>)", unit="entries",
                              ge=1, le=65536)
    mshr_max_merge: int = field(4, "requests merged into one entry", unit="requests", ge=1, le=4096)
    miss_queue_entries: int = field(128, "miss queue towards the interconnect", unit="entries", ge=0, le=65536)


class L2Config(CacheConfig):
    """The shared L2: `size_kb` is the whole chip's capacity, split evenly over
    dram.n_partitions × slices_per_partition slices (GPGPU-Sim gpgpu_cache:dl2
    gives one slice). Defaults: GTX480, 768 KiB in 12 slices."""

    KEY = "l2"

    size_kb: KiB = field(768, "total capacity over all slices", unit="KiB", ge=1, le=1 << 22)
    slices_per_partition: int = field(2, "L2 slices (memory sub-partitions) per memory partition "
                                         "(gpgpu_n_sub_partition_per_mchannel)", unit="slices", ge=1, le=16)
    assoc: int = field(8, "ways per set", unit="ways", ge=1, le=1024)
    sectored: bool = field(True, "lines are filled per sector")
    write_policy: WritePolicy = field("write_back", "write policy (<wr>: R read_only, B write_back, "
                                                    "T write_through, E write_evict, L local_wb_global_wt)")
    allocation: Allocation = field("on_miss", "when a missing line is allocated (<alloc>: m on_miss, f on_fill, "
                                              "s streaming)")
    write_allocate: WriteAllocate = field("lazy_fetch_on_read",
                                          "write-miss policy (<wr_alloc>: N no_write_allocate, W write_allocate, "
                                          "F fetch_on_write, L lazy_fetch_on_read)")
    mshr_entries: int = field(256, "MSHR entries per slice", unit="entries", ge=1, le=65536)
    mshr_max_merge: int = field(4, "requests merged into one MSHR entry", unit="requests", ge=1, le=4096)
    hit_latency: int = field(120, "cycles from a request reaching its slice to the hit reply "
                                  "(GPGPU-Sim gpgpu_l2_rop_latency)", unit="L2 cycles", ge=1, le=100000)
    queue_entries: int = field(64, "entries of each partition queue: icnt→L2, L2→DRAM, DRAM→L2, L2→icnt "
                                   "(gpgpu_dram_partition_queues)", unit="entries", ge=1, le=65536)
    data_port_bytes: Bytes = field(32, "bytes the slice's data array returns per L2 cycle (dl2 data port width)",
                                   unit="bytes", ge=4, le=4096)
    memcpy_fills: bool = field(True, "host-to-device copies leave their data in the L2, as GPGPU-Sim's "
                                     "gpgpu_perf_sim_memcpy does")
    far_latency: int = field(0, "near/far halves: an SM's request to a line whose home slice is in the other "
                                "half of the L2 takes this much longer, and its read leaves a copy of the line "
                                "in the requester's half that later reads from that half hit at hit_latency "
                                "(Ampere/Hopper's two L2 partitions; memory channels 0..n/2-1 are half 0, SM i "
                                "is on half i mod 2); 0 = one uniform L2", unit="L2 cycles", ge=0, le=100000)
    sector_lookups: bool = field(False, "a sectored slice looks up each sector of a request in its own cycle, "
                                        "whether it hits or not, as GPGPU-Sim splits a line request into "
                                        "sector requests (memory_sub_partition::breakdown_request_to_sector_"
                                        "requests); off: a miss or pending hit takes one cycle")
    sector_write_acks: bool = field(False, "a sectored slice acknowledges a write once per sector request "
                                           "GPGPU-Sim splits it into (4 for a segment touching both halves "
                                           "of the line, else one per sector), each ack a packet of its own "
                                           "and the warp waiting for all (breakdown_request_to_sector_requests, "
                                           "inc_store_req per sector); off: one ack per write")
    sector_replies: bool = field(False, "a sectored slice returns a read's data once per sector request GPGPU-Sim "
                                        "splits it into (4 for a segment touching both halves of the line, else one "
                                        "per sector), each sector a packet of its own (header + 32 bytes) and the "
                                        "requester using the line once all are back (breakdown_request_to_sector_"
                                        "requests; baseline_cache::fill's pending_read); off: one packet per read")

    def problems(self) -> list[str]:
        # per-slice geometry is checked by GPUConfig, which knows the slice count
        out = []
        if not is_pow2(self.line_bytes):
            out.append(f"{self.k('line_bytes')} ({self.line_bytes}) must be a power of two")
        if self.line_bytes % self.sector_bytes:
            out.append(f"{self.k('line_bytes')} ({self.line_bytes}) must be a multiple of "
                       f"{self.k('sector_bytes')} ({self.sector_bytes})")
        for knob in ("sector_write_acks", "sector_replies"):
            if getattr(self, knob) and not self.sectored:
                out.append(f"{self.k(knob)} needs a sectored L2 ({self.k('sectored')} = true)")
        return out + self._sector_problems()

    def slice_problems(self, n_slices: int) -> list[str]:
        """Geometry violations once the capacity is split over `n_slices` slices."""
        total = self.size_kb * 1024
        if total % n_slices:
            return [f"{self.k('size_kb')} ({self.size_kb}) does not split evenly over {n_slices} L2 slices"]
        return self._geometry(total // n_slices, f"{self.k('size_kb')} / {n_slices} slices")
