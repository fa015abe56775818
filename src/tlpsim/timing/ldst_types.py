"""The LD/ST unit's records: its parameters (`LdstParams`, from the config) and a
memory warp-instruction in flight (`_Instr`), one per access list the unit works
through (a warp's load, store or atomic, or a plug-in's request)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.static import StaticInstr


@dataclass
class LdstParams:
    smem_latency: int = 26
    smem_wave_cycles: int = 1   # bank cycles per conflict-free wavefront of a shared access
    # a sub-core's path into the unit, per shared warp instruction and per wavefront
    # (sm.shared_subcore_issue_cycles, sm.shared_subcore_cycles_per_conflict); 0: none
    sub_issue_cycles: int = 0
    sub_wave_cycles: int = 0
    # a shared atomic's same-word lanes each take a wavefront (sm.shared_atomic_same_word)
    atomic_serialize: bool = False
    # one round of a compare-and-swap loop (sm.shared_atomic_cas_round_cycles)
    cas_round_cycles: int = 0
    queue_entries: int = 2   # memory instructions waiting for the unit
    # L1D accesses cross its latency pipeline (GPGPU-Sim's l1_latency_queue) before the
    # tag lookup; misses and write-throughs then wait in its miss queue for the interconnect
    l1_pipeline: int = 0
    l1_miss_queue: int = 8
    # L1D banks (l1d.banks, GPGPU-Sim gpgpu_l1_banks): up to this many accesses enter the
    # pipeline and this many lookups leave it a cycle, no two in one bank; a sectored L1
    # interleaves its banks by sector (GPGPU-Sim's Volta finding), a line-filled one by line
    l1_banks: int = 1
    l1_bank_sectors: bool = False
    # one writeback register for shared-memory results and the requests fills (and
    # bypassing or atomic replies) release, one a cycle (GPGPU-Sim's m_next_wb;
    # sm.pipelines.ldst_writeback_register); off: a reply's data is written the cycle after it arrives
    wb_register: bool = False
    # the L2 acknowledges a write once per sector request it splits it into
    # (l2.sector_write_acks): the warp waits for all of them (GPGPU-Sim inc_store_req per sector)
    sector_write_acks: bool = False
    # local memory's placement (trace.localmem): SMs on the GPU and CTA slots per SM
    n_sms: int = 1
    cta_slots: int = 8


class _Instr:
    """A memory warp-instruction in flight."""

    __slots__ = (
        "accesses",
        "cache",
        "callback",
        "dst",
        "issued",
        "kind",
        "local",
        "outstanding",
        "pos",
        "ready",
        "si",
        "warp",
    )

    def __init__(self, warp: Any, dst: int, accesses: list[tuple[int, int]], kind: str, cache: CachePort | None,
                 si: StaticInstr | None, pos: int = -1, callback: Callable[[int], Any] | None = None) -> None:
        self.warp = warp
        self.si = si                  # the static instruction (its destinations are written back)
        self.pos = pos                # its position in the warp's stream
        self.callback = callback      # a plug-in request: called with the cycle its data is usable
        self.dst = dst
        self.accesses = accesses      # [(line address, sector mask)] still to perform
        self.outstanding = 0          # misses whose data has not arrived
        self.ready = 0                # cycle by which every completed access has its data
        self.kind = kind
        self.cache = cache
        self.issued = False
        self.local = False            # a local-memory access (the L1's write policy can tell them apart)
