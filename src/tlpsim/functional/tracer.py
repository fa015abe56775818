"""Records what the SIMT engine executes into trace pieces: one row per warp
instruction, plus per-warp memory summaries (32-byte sectors touched; shared-memory
bank-conflict degree) and RegLess value-pattern classes of written registers.

Rows are handed to a sink (trace.spill.TraceWriter) in runs of at most `run_rows`
rows, each sorted into a piece of the chunk's warps, so a chunk of CTAs is never
held whole however long its warps run."""

from __future__ import annotations

import re

import numpy as np

from tlpsim.frontend.ir import Function, Reg
from tlpsim.functional.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from tlpsim.trace.format import DEGREE_COLUMNS, SHARED_BANK_COUNTS, SPACE_CODES
from tlpsim.trace.localmem import cta_relative
from tlpsim.trace.pieces import canonical, skeleton

LANES = np.arange(32, dtype=np.int64)
_SECTOR_BITS = 48  # warp position << 48 | sector number stays unique in a uint64
_TYPE = re.compile(r"[a-z]+(\d+)(x2)?")
_LOCAL, _GENERIC, _SHARED = SPACE_CODES["local"], SPACE_CODES["generic"], SPACE_CODES["shared"]
_LOCAL_LO, _LOCAL_HI = np.uint64(LOCAL_WINDOW), np.uint64(LOCAL_WINDOW + WINDOW_SIZE)
_SHARED_LO, _SHARED_HI = np.uint64(SHARED_WINDOW), np.uint64(SHARED_WINDOW + WINDOW_SIZE)
_CLASS = {"uniform": 0, "stride1": 1, "stride4": 2, "half_uniform": 3, "half_stride1": 4, "half_stride4": 5,
          "other": 6, "partial": 7}


def _type_bytes(ptx_type: str | None) -> int:
    """Bytes of one element of a PTX load/store type (f16x2 and bf16x2 are 4)."""
    m = _TYPE.fullmatch(ptx_type or "")
    return max(int(m.group(1)) // 8, 1) * (2 if m.group(2) else 1) if m else 4


def _warps_all_inside(inside: np.ndarray, pos: np.ndarray, nw: int) -> np.ndarray:
    """Per warp position: it has lanes, and every one of them is `inside` a window."""
    return (np.bincount(pos[~inside], minlength=nw) == 0) & (np.bincount(pos, minlength=nw) > 0)


class TraceRecorder:
    """Collects rows during a launch chunk by chunk (`begin_chunk`, `record`,
    `end_chunk`) and hands them to `sink` as pieces: `sink.add_run(piece)` for each
    run of at most `run_rows` rows, then `sink.end_chunk(first_warp, n_warps)`."""

    def __init__(self, fn: Function, spaces: list[str | None], grid, block, n_warps: int, warps_per_cta: int,
                 value_classes: bool = True, *, sink, run_rows: int, meta: dict | None = None) -> None:
        self.fn = fn
        self.grid, self.block = tuple(grid), tuple(block)
        self.n_warps = n_warps
        self.warps_per_cta = warps_per_cta
        self.sink = sink
        self.run_rows = max(int(run_rows), 1)
        self.template = skeleton(fn.name, self.grid, self.block, warps_per_cta,
                                 tuple(i.opclass for i in fn.instructions), meta or {})
        self.chunk_warps = 0
        self.n_rows = 0
        self.rows: list[tuple] = []
        self.mem_space: list[np.ndarray] = []
        self.mem_size: list[np.ndarray] = []
        self.mem_counts: list[np.ndarray] = []
        self.sectors: list[np.ndarray] = []
        self.bank_degree: list[np.ndarray] = []
        self.n_mem = 0
        self.warp_base = 0
        self._inverse = np.zeros(0, dtype=np.int64)
        n = len(fn.instructions)
        self.space_code = np.full(n, -1, dtype=np.int8)
        self.access_size = np.zeros(n, dtype=np.int64)
        self.value_reg: list[str | None] = [None] * n
        self.atomic = [ins.opclass == "atomic" for ins in fn.instructions]  # (red included)
        for ins in fn.instructions:
            if ins.opclass in ("mem", "atomic") and ins.base not in ("prefetch", "prefetchu", "discard",
                                                                         "applypriority", "cvta", "isspacep"):
                space = spaces[ins.index] or "generic"
                self.space_code[ins.index] = SPACE_CODES.get(space, SPACE_CODES["generic"])
                self.access_size[ins.index] = _type_bytes(ins.type) * ins.vec
            elif ins.base == "tex":  # a texture fetch is modelled as a 4-byte global load of its first texel
                self.space_code[ins.index] = SPACE_CODES["global"]
                self.access_size[ins.index] = 4
            if value_classes and ins.dsts and isinstance(ins.dsts[0], Reg):
                rtype = fn.reg_types.get(ins.dsts[0].name, "")
                if rtype in ("b32", "u32", "s32", "f32"):
                    self.value_reg[ins.index] = ins.dsts[0].name

    def begin_chunk(self, warp_base: int, n_warps: int | None = None) -> None:
        self.warp_base = warp_base
        self.chunk_warps = self.n_warps - warp_base if n_warps is None else n_warps

    def end_chunk(self) -> None:
        """The chunk's last run, then the sink turns the chunk's runs into pieces."""
        if self.rows or not self.sink.has_runs():
            self._flush()
        self.sink.end_chunk(self.warp_base, self.chunk_warps)

    def record(self, pc: int, warps: np.ndarray, active: np.ndarray, executed: np.ndarray, st, eidx: np.ndarray,
               addrs) -> None:
        nw = warps.size
        mem_rows = None
        code = self.space_code[pc]
        if code >= 0 and addrs is not None:
            mem_rows = self._memory(pc, code, warps, eidx, np.asarray(addrs))
        vclass = None
        reg = self.value_reg[pc]
        if reg is not None:
            vclass = self._value_class(st.regs[reg], warps - self.warp_base, executed)
        self.rows.append((pc, warps, active, executed, mem_rows, vclass, nw))
        self.n_rows += nw
        if self.n_rows >= self.run_rows:
            self._flush()

    # ------------------------------------------------------------ memory summaries

    def _memory(self, pc: int, code: int, warps: np.ndarray, eidx: np.ndarray, addrs: np.ndarray) -> np.ndarray:
        nw = warps.size
        local = warps - self.warp_base
        if nw == 1:
            pos = np.zeros(eidx.size, dtype=np.int64)
        else:  # position of each lane's warp in `warps`, by an inverse map (O(lanes))
            if self._inverse.size <= int(local.max()):
                self._inverse = np.zeros(int(local.max()) + 1, dtype=np.int64)
            self._inverse[local] = np.arange(nw, dtype=np.int64)
            pos = self._inverse[eidx >> 5]
        size = int(self.access_size[pc])
        first = self.n_mem
        self.n_mem += nw
        a = addrs.astype(np.uint64, copy=False)
        spaces = np.full(nw, code, dtype=np.int8)
        degree = None  # bank degrees of generic accesses that resolve to shared memory
        if code == _GENERIC:
            a, pos, eidx, degree = self._generic_shared(pc, a, pos, eidx, size, spaces)
        if code == _LOCAL or code == _GENERIC:
            a, pos = self._local(code, a, pos, eidx, size, spaces)
        self.mem_space.append(spaces)
        self.mem_size.append(np.full(nw, size, dtype=np.int16))
        if code == SPACE_CODES["shared"]:
            self.bank_degree.append(self._bank_degree(a, pos, nw, size, eidx.size == nw * 32, self.atomic[pc]))
            self.mem_counts.append(np.zeros(nw, dtype=np.int64))
        else:
            key = (pos.astype(np.uint64) << np.uint64(_SECTOR_BITS)) | (a >> np.uint64(5))
            if key.size > 1 and not (key[1:] >= key[:-1]).all():
                key = np.sort(key)  # lanes out of address order: sort so duplicates are adjacent
            if key.size:
                new = np.empty(key.size, dtype=bool)
                new[0] = True
                np.not_equal(key[1:], key[:-1], out=new[1:])
                key = key[new]
            counts = np.bincount((key >> np.uint64(_SECTOR_BITS)).astype(np.int64), minlength=nw)
            self.sectors.append(key & np.uint64((1 << _SECTOR_BITS) - 1))
            self.mem_counts.append(counts)
            self.bank_degree.append(degree if degree is not None else np.zeros((nw, DEGREE_COLUMNS), dtype=np.int16))
        return np.arange(first, first + nw, dtype=np.int32)

    def _generic_shared(self, pc: int, a: np.ndarray, pos: np.ndarray, eidx: np.ndarray, size: int,
                        spaces: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """A warp's generic access whose lanes all reach the shared window is a shared-memory
        access (GPGPU-Sim resolves a generic address's space per access): its rows get
        `spaces` shared and bank degrees; the other lanes are returned for the sector path."""
        inside = (a >= _SHARED_LO) & (a < _SHARED_HI)
        if not inside.any():
            return a, pos, eidx, None
        nw = spaces.size
        whole = _warps_all_inside(inside, pos, nw)
        if not whole.any():
            return a, pos, eidx, None
        spaces[whole] = _SHARED
        sel = whole[pos]
        rows = np.flatnonzero(whole)
        remap = np.zeros(nw, dtype=np.int64)
        remap[rows] = np.arange(rows.size, dtype=np.int64)
        degree = np.zeros((nw, DEGREE_COLUMNS), dtype=np.int16)
        degree[rows] = self._bank_degree(a[sel] - _SHARED_LO, remap[pos[sel]], rows.size, size,
                                         int(sel.sum()) == rows.size * 32, self.atomic[pc])
        keep = ~sel
        return a[keep], pos[keep], eidx[keep], degree

    def _local(self, code: int, a: np.ndarray, pos: np.ndarray, eidx: np.ndarray, size: int,
               spaces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Local lanes' per-thread offsets laid out across their CTA's threads
        (trace.localmem); a warp's generic access whose lanes all reach the local window
        counts as local (`spaces` updated), any other keeps its addresses."""
        if code == _LOCAL:
            loc, off = None, a
        else:
            inside = (a >= _LOCAL_LO) & (a < _LOCAL_HI)
            if not inside.any():
                return a, pos
            # (a warp resolved to shared memory has no lanes left here: it stays shared)
            whole = _warps_all_inside(inside, pos, spaces.size)
            spaces[whole] = _LOCAL
            loc = whole[pos]
            off = a[loc] - _LOCAL_LO
        e = eidx if loc is None else eidx[loc]
        thread = ((self.warp_base + (e >> 5)) % self.warps_per_cta) * 32 + (e & 31)
        rel, lane = cta_relative(off.astype(np.int64), thread, self.warps_per_cta * 32, size)
        if loc is None:
            return rel.astype(np.uint64), pos[lane]
        return (np.concatenate([a[~loc], rel.astype(np.uint64)]),
                np.concatenate([pos[~loc], pos[loc][lane]]))

    @staticmethod
    def _bank_degree(a: np.ndarray, pos: np.ndarray, nw: int, size: int, full: bool,
                     atomic: bool = False) -> np.ndarray:
        """Per warp and per bank count of SHARED_BANK_COUNTS, the most distinct 4-byte
        words any one bank must deliver (same word = broadcast); for an atomic, also the
        most lanes one bank serves and the most lanes on one word (trace.format). Rows of
        (warp, lane-words) are sorted in C, so this is O(lanes) Python-side."""
        k = max(size // 4, 1)
        words = a >> np.uint64(2)
        if k > 1:
            words = (words[:, None] + np.arange(k, dtype=np.uint64)).ravel()
        out = np.zeros((nw, DEGREE_COLUMNS), dtype=np.int16)
        nbc = len(SHARED_BANK_COUNTS)
        if atomic and words.size:
            lane_row = np.repeat(pos, k)  # the warp (row) of every lane-word
            for c, nb in enumerate(SHARED_BANK_COUNTS):
                bank = (words & np.uint64(nb - 1)).astype(np.int64)
                out[:, nbc + c] = np.bincount(lane_row * nb + bank, minlength=nw * nb).reshape(nw, nb).max(axis=1)
            _, first, counts = np.unique((lane_row.astype(np.uint64) << np.uint64(40)) | words,
                                         return_index=True, return_counts=True)
            np.maximum.at(out[:, 2 * nbc], lane_row[first], counts.astype(np.int16))
        if full:
            mat = words.reshape(nw, 32 * k)
        else:  # pad inactive lanes with a copy of a lane of the same warp (a broadcast: no extra word)
            lane_pos = np.repeat(pos, k)
            counts = np.bincount(lane_pos, minlength=nw)
            width = int(counts.max()) if counts.size else 1
            starts = np.zeros(nw, dtype=np.int64)
            np.cumsum(counts[:-1], out=starts[1:])
            col = np.arange(lane_pos.size) - starts[lane_pos]
            mat = np.empty((nw, max(width, 1)), dtype=np.uint64)
            first = np.zeros(nw, dtype=np.uint64)
            has = counts > 0
            first[has] = words[starts[has]]
            mat[:] = first[:, None]
            mat[lane_pos, col] = words
        mat = np.sort(mat, axis=1)
        distinct = np.ones(mat.shape, dtype=bool)
        np.not_equal(mat[:, 1:], mat[:, :-1], out=distinct[:, 1:])
        rows = np.broadcast_to(np.arange(nw)[:, None], mat.shape)[distinct]
        words_d = mat[distinct]
        for c, nb in enumerate(SHARED_BANK_COUNTS):
            bank = (words_d & np.uint64(nb - 1)).astype(np.int64)
            per_bank = np.bincount(rows * nb + bank, minlength=nw * nb).reshape(nw, nb)
            out[:, c] = per_bank.max(axis=1)
        return out

    # ------------------------------------------------------------ value classes

    @staticmethod
    def _value_class(reg: np.ndarray, local: np.ndarray, executed: np.ndarray) -> np.ndarray:
        """RegLess compressibility class per warp: a stride (0, 1 or 4) over the warp, or
        over each half-warp with the same stride; differences wrap at 32 bits."""
        full = executed == np.uint32(0xFFFFFFFF)
        if not full.any():
            return np.full(local.size, _CLASS["partial"], dtype=np.int8)
        vals = reg.reshape(-1, 32)[local].view(np.int32)
        d = vals[:, 1:] - vals[:, :-1]
        step = d[:, 0]
        lo, hi = d[:, :15], d[:, 16:]
        half = (lo == step[:, None]).all(axis=1) & (hi == step[:, None]).all(axis=1)
        whole = half & (d[:, 15] == step)
        out = np.full(local.size, _CLASS["other"], dtype=np.int8)
        for k, (w_name, h_name) in {0: ("uniform", "half_uniform"), 1: ("stride1", "half_stride1"),
                                    4: ("stride4", "half_stride4")}.items():
            is_k = step == k
            out[half & is_k] = _CLASS[h_name]
            out[whole & is_k] = _CLASS[w_name]
        out[~full] = _CLASS["partial"]
        return out

    # ------------------------------------------------------------ result

    def _flush(self) -> None:
        """The rows recorded since the last run, as a piece of the chunk's warps, to the sink."""
        if self.rows:
            counts = np.array([r[6] for r in self.rows], dtype=np.int64)
            pc = np.repeat(np.array([r[0] for r in self.rows], dtype=np.int32), counts)
            warp = np.concatenate([r[1] for r in self.rows]).astype(np.int32)
            active = np.concatenate([r[2] for r in self.rows]).astype(np.uint32)
            executed = np.concatenate([r[3] for r in self.rows]).astype(np.uint32)
            starts = np.zeros(counts.size + 1, dtype=np.int64)
            np.cumsum(counts, out=starts[1:])
            mem = np.full(pc.size, -1, dtype=np.int32)
            vclass = np.full(pc.size, -1, dtype=np.int8)
            for k, r in enumerate(self.rows):
                if r[4] is not None:
                    mem[starts[k]: starts[k + 1]] = r[4]
                if r[5] is not None:
                    vclass[starts[k]: starts[k + 1]] = r[5]
        else:
            pc = warp = mem = np.zeros(0, dtype=np.int32)
            active = executed = np.zeros(0, dtype=np.uint32)
            vclass = np.zeros(0, dtype=np.int8)
        rows = {"pc": pc, "warp": warp, "active": active, "executed": executed, "mem": mem, "vclass": vclass}
        table = {"mem_space": np.concatenate(self.mem_space) if self.mem_space else np.zeros(0, dtype=np.int8),
                 "mem_size": np.concatenate(self.mem_size) if self.mem_size else np.zeros(0, dtype=np.int16),
                 "mem_bank_degree": (np.concatenate(self.bank_degree) if self.bank_degree
                                     else np.zeros((0, DEGREE_COLUMNS), dtype=np.int16))}
        counts_mem = np.concatenate(self.mem_counts) if self.mem_counts else np.zeros(0, dtype=np.int64)
        sectors = np.concatenate(self.sectors) if self.sectors else np.zeros(0, dtype=np.uint64)
        self.rows, self.mem_space, self.mem_size, self.mem_counts, self.sectors, self.bank_degree = [], [], [], [], [], []
        self.n_rows = self.n_mem = 0
        self.sink.add_run(canonical(self.template, self.warp_base, self.chunk_warps, rows, table, counts_mem, sectors))
