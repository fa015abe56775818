"""Timing state of one resident warp and of one resident CTA."""

from __future__ import annotations

from array import array
from typing import Any, cast

import numpy as np

from tlpsim.timing.static import StaticInstr
from tlpsim.timing.views import CTAView, WarpView


def popcount32(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint32)
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * np.uint32(0x01010101)) & 0xFFFFFFFF) >> 24


def _int64s(values: Any) -> Any:
    """A NumPy integer array as an array.array of int64 (indexing gives Python ints)."""
    out = array("q")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return out


class MemRows:
    """A launch's memory table as Python lists, so the LD/ST unit reads a row without
    NumPy scalar indexing: per memory row its state space and shared-memory conflict
    degree, and its accesses — one per 128-byte line touched, ascending, with the
    mask of the line's 32-byte sectors — derived once from the trace's sector sets."""

    def __init__(self, trace: Any, shared_banks: int = 32, atomic_lanes: bool = False) -> None:
        self.space: list[int] = trace.mem_space.tolist()
        self.bank_degree: list[int] = trace.bank_degrees(shared_banks).tolist()
        # shared atomics: the most lanes one bank serves and the most lanes on one word
        # (read only when the SM serialises same-word lanes: sm.shared_atomic_same_word)
        self.lane_degree: list[int] = trace.lane_degrees(shared_banks).tolist() if atomic_lanes else []
        self.word_lanes: list[int] = trace.word_lanes().tolist() if atomic_lanes else []
        sec = np.asarray(trace.sectors).astype(np.int64)
        offs = np.asarray(trace.mem_sector_offsets, dtype=np.int64)
        n_rows = offs.size - 1
        row = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(offs))
        if sec.size > 1:
            ascending = (sec[1:] >= sec[:-1]) | (row[1:] != row[:-1])
            if not ascending.all():  # (the tracer writes each row's sectors ascending)
                sec = sec[np.lexsort((sec, row))]
        line = sec >> 2
        first = np.ones(sec.size, dtype=bool)  # a row's first sector of each line
        if sec.size > 1:
            first[1:] = (row[1:] != row[:-1]) | (line[1:] != line[:-1])
        idx = np.flatnonzero(first)
        masks = (np.bitwise_or.reduceat(np.left_shift(1, sec & 3), idx) if idx.size
                 else np.zeros(0, dtype=np.int64))
        # compact arrays (8 bytes an entry, not a Python int object each): a `paper`-size
        # launch has tens of millions of line accesses
        self.line_addr: Any = _int64s(line[idx] << 7)
        self.line_mask: Any = _int64s(masks)
        counts = np.bincount(row[idx], minlength=n_rows) if n_rows else np.zeros(0, dtype=np.int64)
        self.line_offsets: Any = _int64s(np.concatenate(([0], np.cumsum(counts))))

    def accesses(self, row: int) -> list[tuple[int, int]]:
        """The row's (line address, sector mask) pairs, lines ascending."""
        addr, mask = self.line_addr, self.line_mask
        out: list[Any] = [(addr[k], mask[k]) for k in range(self.line_offsets[row], self.line_offsets[row + 1])]
        return cast("list[tuple[int, int]]", out)


class FeedPiece:
    """One piece of a launch's trace as the timing model reads it: the piece, its
    first warp, and (built on first use) its memory table and executed-lane counts."""

    __slots__ = ("trace", "first_warp", "mem_rows", "lanes")

    def __init__(self, trace: Any) -> None:
        self.trace = trace
        self.first_warp: int = int(trace.first_warp)
        self.mem_rows: MemRows | None = None
        self.lanes: Any = None


class TraceFeed:
    """A launch's trace, a piece at a time: warps are created in CTA order, so a
    streamed trace (trace.spill.TraceFile) is read piece after piece and only the
    pieces of resident warps stay in memory (a warp keeps what it needs of its
    piece). An in-memory Trace is one piece."""

    KEEP = 2  # pieces kept loaded for warps still to come (partial CTAs admit late)

    def __init__(self, trace: Any, shared_banks: int = 32, atomic_lanes: bool = False) -> None:
        self.trace = trace
        self.shared_banks = shared_banks
        self.atomic_lanes = atomic_lanes  # MemRows keep the atomics' lane columns
        self.loaded: dict[int, FeedPiece] = {}
        self.loads = 0  # pieces read (a piece evicted and needed again is read again)

    def piece(self, gwarp: int) -> FeedPiece:
        k = int(self.trace.piece_index(gwarp))
        p = self.loaded.get(k)
        if p is None:
            p = FeedPiece(self.trace.piece(k))
            self.loads += 1
            if len(self.loaded) >= self.KEEP:
                del self.loaded[next(iter(self.loaded))]
            self.loaded[k] = p
        if p.mem_rows is None:
            p.mem_rows = MemRows(p.trace, self.shared_banks, self.atomic_lanes)
            p.lanes = popcount32(p.trace.executed)
        return p

    def release(self) -> None:
        self.loaded.clear()


class Warp:
    """A warp occupying a slot: its instruction stream (from the trace) and the
    state that decides when its next instruction may issue."""

    __slots__ = ("slot", "sched", "cta", "run", "gwarp", "pcs", "lanes", "mem", "pos", "n", "pending",
                 "pending_mem", "ibuf", "at_barrier", "done", "view", "mem_blocked", "in_fetch", "si",
                 "thread_total", "pc_slice", "instrs", "mem_rows", "holds", "masks", "vclass", "watch", "block",
                 "code_addr", "inflight", "gate", "gate_k", "refetch_delay", "age")

    def __init__(self, slot: int, sched: int, cta: CTA, run: Any, gwarp: int, age: int, sm_id: int = 0,
                 keep_masks: bool = False, keep_vclass: bool = False, watch: list[Any] | None = None) -> None:
        piece = run.feed.piece(gwarp)
        trace = piece.trace
        local = gwarp - piece.first_warp
        a, b = int(trace.warp_offsets[local]), int(trace.warp_offsets[local + 1])
        self.slot = slot
        self.sched = sched
        self.age = age          # dynamic warp id in its SM (its view's age)
        self.cta = cta
        self.run = run
        self.gwarp = gwarp
        self.pcs: list[int] = trace.pc[a:b].tolist()
        self.instrs: list[StaticInstr] = run.static.instrs
        # thread instructions as GPGPU-Sim counts them
        self.lanes: list[int] = piece.lanes[a:b].tolist()
        # whole-stream totals, credited to the launch and the SM's per-class counters when
        # the warp finishes (every resident warp runs its stream to the end)
        self.thread_total = sum(self.lanes)
        self.pc_slice: Any = trace.pc[a:b]
        self.mem: list[int] = trace.mem[a:b].tolist()
        rows = piece.mem_rows
        assert rows is not None
        self.mem_rows: MemRows = rows
        self.pos = 0
        self.n = b - a
        self.pending = 0        # register bits awaiting writeback
        self.pending_mem = 0    # the subset written by outstanding memory instructions
        self.ibuf = 0           # fetched instructions waiting to issue
        self.at_barrier = False
        self.done = self.n == 0
        self.mem_blocked = False
        self.in_fetch = False
        self.refetch_delay = 0  # cycles after its buffer's last instruction issues before the next fetch
        self.si: StaticInstr | None = None  # static info of the next instruction (kept while the warp is ready)
        self.view = WarpView(slot, age, cta.slot, -1, False, sched, sm_id, run.kid, cta.index, gwarp)
        self.holds = 0          # hold bits set by plug-ins (one per extension point): held warps do not issue
        # per dynamic instruction, kept only when a plug-in needs them: executed-lane
        # masks (instr_issued) and value classes of written registers (writeback)
        self.masks: list[int] | None = trace.executed[a:b].tolist() if keep_masks else None
        self.vclass: list[int] | None = trace.vclass[a:b].tolist() if keep_vclass else None
        # per pc: the instr_issued handlers watching that instruction (None: nobody watches)
        self.watch: list[Any] | None = watch
        self.block = ""         # blocking reason last reported to plug-ins ("" = not blocked)
        self.code_addr: int = run.static.code_addr  # where its kernel's instructions are (I-cache lines)
        # memory instructions and store acknowledgments still outstanding: a warp that has
        # issued its last instruction holds its CTA's slots until they are done (GPGPU-Sim's
        # hardware_done: stores acknowledged, nothing in the pipeline)
        self.inflight = 0
        # the next trace position at which the warp read another CTA's write (timing.xcta), -1: none
        gates = run.gates
        self.gate: int = gates.first(gwarp) if gates is not None else -1
        self.gate_k = 0         # index of that dependency in the warp's list


class CTA:
    """A resident thread block: its warps and barrier bookkeeping."""

    __slots__ = ("slot", "run", "index", "warps", "live", "arrived", "alloc", "view", "waiting", "draining")

    def __init__(self, slot: int, run: Any, index: int, sm_id: int = 0, now: int = -1) -> None:
        self.slot = slot
        self.run = run
        self.index = index
        self.warps: list[Warp] = []
        self.live = 0           # warps not finished, admitted or not
        self.arrived = 0
        self.alloc: Any = None  # what the resource allocator granted
        wpc = run.trace.warps_per_cta
        self.view = CTAView(sm_id, run.kid, index, slot, wpc, [], 0, now)
        # warps (index within the CTA) not admitted yet: an allocator that admits
        # partial CTAs grants them later; they count as live for barriers
        self.waiting: list[int] = []
        self.draining = 0       # warps that finished issuing but still have memory operations outstanding

    def issued(self) -> int:
        """Warp instructions the CTA's admitted warps have issued so far."""
        n = 0
        for w in self.warps:
            n += w.pos
        return n
