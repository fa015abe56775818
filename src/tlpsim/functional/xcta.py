"""Cross-CTA waits observed by the functional model.

The engine runs the CTAs of a chunk together, so a CTA can spin on a flag another
CTA sets and leave its loop once that CTA has run. A GPU on which the two CTAs are
never resident at the same time cannot produce that execution: the reader would
spin forever. Each wait read (analysis.wait_reads: a load or atomic deciding
whether its loop ends) that returns a value another CTA of the launch wrote is
recorded — the reader's warp, trace position and PTX instruction, the writer's
warp and PTX instruction — and travels in the trace (`Trace.deps`); the timing
model does not let the reader pass that read before the writer's CTA has been
dispatched, and reports a deadlock when it never can be (`tlpsim.timing.xcta`).

Reads that only choose a path (a benign race on a BFS level array, a "last block"
reading published partial sums) are not waits: without the other CTA's write the
reader still progresses, along another path. So only kernels with wait reads are
tracked at all; the others cost nothing.

Bookkeeping: a shadow map over the 4-byte words of device memory holds, for each
word written during the launch, ``(writer warp + 1) << PC_BITS | writer pc``
(sub-word stores use a byte map, made only when one occurs); an atomic's lanes
also see the lanes before them at the same address.
"""

from __future__ import annotations

import numpy as np

from tlpsim.analysis.wait_reads import wait_reads
from tlpsim.frontend.ir import Reg
from tlpsim.functional.memory import GLOBAL_BASE, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from tlpsim.trace.format import DEP_COLUMNS

PC_BITS = 24
PC_MASK = (1 << PC_BITS) - 1
READ, WRITE, READ_WRITE = 1, 2, 3  # access kinds per static instruction (0: not tracked)


def access_kinds(ck) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """Per static instruction of a CompiledKernel: its access kind on global memory
    (0, READ, WRITE, READ_WRITE), its size in bytes, and the destination register of
    each READ_WRITE atomic. Only wait reads
    (analysis.wait_reads) are READs; every store and atomic is a WRITE. A kernel
    without wait reads gets all zeros: nothing is tracked."""
    fn = ck.fn
    kinds = np.zeros(len(fn.instructions), dtype=np.int8)
    sizes = np.zeros(len(fn.instructions), dtype=np.int64)
    dsts: dict[int, str] = {}
    waits = wait_reads(fn)
    for ins in fn.instructions:
        base = ins.base
        if base not in ("ld", "ldu", "st", "atom", "red"):
            continue
        if ck.oc.space_of_access(ins) not in ("global", "generic"):  # const is read-only; the rest per CTA
            continue
        bits = int("".join(ch for ch in (ins.type or "b32")[1:] if ch.isdigit()) or 32)
        sizes[ins.index] = max(bits // 8, 1) * (ins.vec if base in ("ld", "ldu", "st") else 1)
        read = READ if ins.index in waits else 0
        if base == "atom" and read:
            dst = ins.dsts[0] if ins.dsts else None
            if not isinstance(dst, Reg):
                read = 0
            else:
                dsts[ins.index] = dst.name
        kinds[ins.index] = read if base in ("ld", "ldu") else WRITE | read
    if not (kinds & READ).any():
        kinds[:] = 0
    return kinds, sizes, dsts


class CrossCtaTracker:
    """Shadow of who wrote each global word during one launch, and the cross-CTA
    wait reads found (one per reader warp and writer CTA: the first)."""

    def __init__(self, memory, kinds: np.ndarray, sizes: np.ndarray, dsts: dict[int, str],
                 warps_per_cta: int) -> None:
        self.memory = memory
        self.kinds = kinds
        self.sizes = sizes
        self.dsts = dsts  # READ_WRITE atomics: their destination register (the old values)
        self.wpc = warps_per_cta
        self.limit = int(memory.top)
        self.owner: np.ndarray | None = None   # per word (allocated at the first store)
        self.owner8: np.ndarray | None = None  # per byte, for sub-word stores
        self.found: dict[tuple[int, int], tuple[int, int, int, int, int]] = {}
        self.runner = None

    def begin_chunk(self, runner) -> None:
        self.runner = runner

    # ------------------------------------------------------------ accesses

    def access(self, pc: int, eidx: np.ndarray, addrs) -> None:
        """Warps executed memory instruction `pc` for the lanes `eidx` at `addrs`."""
        if addrs is None or eidx.size == 0:
            return
        a = np.asarray(addrs, dtype=np.uint64)
        if a.shape != eidx.shape:
            a = np.broadcast_to(a, eidx.shape)
        outside = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
        outside |= (a >= np.uint64(LOCAL_WINDOW)) & (a < np.uint64(LOCAL_WINDOW + WINDOW_SIZE))
        if outside.any():  # generic accesses to shared/local memory: per CTA, not tracked
            keep = ~outside
            a, eidx = a[keep], eidx[keep]
            if not a.size:
                return
        offs = a.astype(np.int64) - GLOBAL_BASE
        kind = int(self.kinds[pc])
        size = int(self.sizes[pc])
        if int(offs.min()) < 0 or int(offs.max()) + size > self.limit:  # oob_reads="zero" lanes read no one
            keep = (offs >= 0) & (offs + size <= self.limit)
            offs, eidx = offs[keep], eidx[keep]
            if not offs.size:
                return
        if kind == READ_WRITE:
            self._atomic(pc, offs, eidx, size)
        elif kind == READ:
            self._read(pc, offs, eidx, size)
        else:
            self._write(pc, offs, eidx, size)

    def _write(self, pc: int, offs: np.ndarray, eidx: np.ndarray, size: int) -> None:
        if self.owner is None:
            self.owner = np.zeros(self.limit // 4 + 8, dtype=np.int64)
        runner = self.runner
        value = (((eidx >> 5) + (runner.warp_base + 1)) << PC_BITS) | pc
        words = offs >> 2
        if size >= 4:
            n = size // 4
            if n == 1:
                self.owner[words] = value
            else:
                self.owner[(words[:, None] + np.arange(n)).ravel()] = np.repeat(value, n)
            if self.owner8 is not None:  # word stores supersede earlier byte owners
                self.owner8[((words * 4)[:, None] + np.arange(4 * n)).ravel()] = 0
            return
        if self.owner8 is None:
            self.owner8 = np.zeros(self.owner.size * 4, dtype=np.int64)
        prev = self.owner[words]
        moved = prev != 0
        if moved.any():  # a word owned as a whole becomes owned byte by byte
            w = words[moved]
            self.owner8[((w * 4)[:, None] + np.arange(4)).ravel()] = np.repeat(prev[moved], 4)
            self.owner[w] = 0
        self.owner8[(offs[:, None] + np.arange(size)).ravel()] = np.repeat(value, size)

    def _owners(self, offs: np.ndarray, size: int) -> np.ndarray:
        """(lanes, words or bytes read) of who last wrote what each lane reads (0: nobody)."""
        if self.owner is None:
            return np.zeros((offs.size, 1), dtype=np.int64)
        if self.owner8 is None:
            return self.owner[(offs >> 2)[:, None] + np.arange(max(size // 4, 1))]
        cols = offs[:, None] + np.arange(size)  # a word's owner covers its bytes, else the byte's own
        word = self.owner[cols >> 2]
        return np.where(word != 0, word, self.owner8[cols])

    def _read(self, pc: int, offs: np.ndarray, eidx: np.ndarray, size: int) -> None:
        if self.owner is None:
            return  # nothing written yet
        writer = self._owners(offs, size)
        self._observe(pc, writer.ravel(), np.repeat(eidx, writer.shape[1]))

    def _atomic(self, pc: int, offs: np.ndarray, eidx: np.ndarray, size: int) -> None:
        """A wait-read atomic (its result is used). Its lanes apply one after the other:
        a lane sees the last lane before it at the same address that changed the value
        (a failed compare-and-swap, an add of 0 change nothing), else the shadow; the
        lanes that changed the value become its writers. Old values come from the
        destination register, new ones from the next lane's old value or memory."""
        runner = self.runner
        dt = np.dtype(np.uint64 if size == 8 else np.uint32)
        old = runner.st.regs[self.dsts[pc]][eidx].astype(dt)
        order = np.argsort(offs, kind="stable")
        so, o, lanes = offs[order], old[order], eidx[order]
        n = so.size
        final = self.memory.data.view(dt)[so // size]
        nxt_same = np.zeros(n, dtype=bool)
        nxt_same[:-1] = so[1:] == so[:-1]
        new = final.copy()
        new[:-1][nxt_same[:-1]] = o[1:][nxt_same[:-1]]
        changed = o != new
        # the last changing lane before each lane, within its address's run of lanes
        start = np.ones(n, dtype=bool)
        start[1:] = so[1:] != so[:-1]
        seg_start = np.maximum.accumulate(np.where(start, np.arange(n), 0))
        pos = np.where(changed, np.arange(n), -1)
        before = np.empty(n, dtype=np.int64)
        before[0] = -1
        before[1:] = np.maximum.accumulate(pos)[:-1]
        inside = before >= seg_start
        value = (((lanes >> 5) + (runner.warp_base + 1)) << PC_BITS) | pc
        writer = self._owners(so, size)[:, 0]
        writer = np.where(inside, value[np.maximum(before, 0)], writer)
        self._observe(pc, writer, lanes)
        if changed.any():
            self._write(pc, so[changed], lanes[changed], size)

    def _observe(self, pc: int, writer: np.ndarray, lanes: np.ndarray) -> None:
        runner = self.runner
        wpc = self.wpc
        wwarp = (writer >> PC_BITS) - 1
        rwarp = (lanes >> 5) + runner.warp_base
        other = (writer != 0) & (wwarp // wpc != rwarp // wpc)
        if not other.any():
            return
        rwarp, wwarp, wpcs = rwarp[other], wwarp[other], writer[other] & PC_MASK
        # a spinning warp sees the same writer every round: look at each (reader warp, writer CTA) once
        _, first = np.unique((rwarp << 32) | (wwarp // wpc), return_index=True)
        found = self.found
        for r, w, wp in zip(rwarp[first].tolist(), wwarp[first].tolist(), wpcs[first].tolist()):
            key = (r, w // wpc)
            if key not in found:
                # count[] was advanced before the instruction ran: its trace position is count - 1
                found[key] = (r, int(runner.count[r - runner.warp_base]) - 1, pc, w, wp)

    # ------------------------------------------------------------ result

    def dependencies(self) -> np.ndarray:
        """(n, 5) int64 rows of DEP_COLUMNS, sorted by reader warp and position."""
        if not self.found:
            return np.zeros((0, len(DEP_COLUMNS)), dtype=np.int64)
        rows = np.array(sorted(self.found.values()), dtype=np.int64)
        return rows


__all__ = ["DEP_COLUMNS", "CrossCtaTracker", "READ", "READ_WRITE", "WRITE", "access_kinds"]
