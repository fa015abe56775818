"""SIMT execution of one chunk of CTAs: warps grouped by PC, per-warp IPDOM
reconvergence stacks, barriers.

Every step takes the group of runnable warps at the lowest PC and executes that
instruction for all of them at once (one NumPy operation over all their active
lanes). Lowest-PC-first lets warps that fell behind catch up, so groups stay
large. A warp's current SIMT entry lives in arrays (`pc`, `rpc`, `mask`); the
entries beneath it (pending paths and reconvergence entries) in per-warp stack
arrays, so divergence and reconvergence of many warps are batch operations too.
"""

from __future__ import annotations

import heapq

import numpy as np

from tlpsim.analysis.kernel_cfg import EXIT
from tlpsim.errors import DeviceAssertError, KernelError
from tlpsim.functional.kernel import BARRIER, BRANCH, BRX, EXIT_OP, NOP, NORMAL, TRAP, CompiledKernel
from tlpsim.functional.memory import MemoryFault
from tlpsim.functional.runaway import InstructionBudgetExceeded, RunawayGuard, RunLimits
from tlpsim.functional.semantics.syscalls import DeviceAssertion
from tlpsim.functional.state import ChunkState

FULL = np.uint32(0xFFFFFFFF)
LANES = np.arange(32, dtype=np.int64)
LANES_U32 = LANES.astype(np.uint32)
LANE_BITS = (np.uint64(1) << LANES.astype(np.uint64)).astype(np.float64)

__all__ = ["ChunkRunner", "InstructionBudgetExceeded"]


class ChunkRunner:
    """Runs one ChunkState to completion, reporting each executed group to `tracer`."""

    def __init__(self, ck: CompiledKernel, st: ChunkState, tracer=None, budget: int | None = None,
                 warp_base: int = 0, limits: RunLimits | None = None, deadline: float | None = None) -> None:
        self.ck = ck
        self.st = st
        self.tracer = tracer
        self.budget = budget  # warp instructions this chunk may still execute (None: no limit)
        self.warp_base = warp_base
        self.runaway = RunawayGuard(self, limits or RunLimits(budget), deadline)
        n_w = st.n_warps
        wpc = st.geom.warps_per_cta
        self.wpc = wpc
        self.pc = np.zeros(n_w, dtype=np.int64)
        self.rpc = np.full(n_w, EXIT, dtype=np.int64)
        tpc = st.geom.threads_per_cta
        first = np.full(wpc, FULL, dtype=np.uint32)
        if tpc % 32:
            first[-1] = np.uint32((1 << (tpc % 32)) - 1)
        self.mask = np.tile(first, st.n_ctas)
        self.exited = np.zeros(n_w, dtype=np.uint32)
        # SIMT stacks beneath the current entry: (pc, rpc, mask) per level, `depth` levels per warp
        self.depth = np.zeros(n_w, dtype=np.int64)
        self.stk_pc = np.zeros((n_w, 4), dtype=np.int64)
        self.stk_rpc = np.zeros((n_w, 4), dtype=np.int64)
        self.stk_mask = np.zeros((n_w, 4), dtype=np.uint32)
        self.groups: dict[int, list[np.ndarray]] = {0: [np.arange(n_w, dtype=np.int64)]}
        self.heap = [0]
        self.live = np.full(st.n_ctas, wpc, dtype=np.int64)  # unfinished warps per CTA
        self.waiting: dict[tuple[int, int], list] = {}  # (cta, barrier) -> [(warps, pcs, red data)]
        self.arrived: dict[tuple[int, int], int] = {}
        self.expected: dict[tuple[int, int], int] = {}  # warps a counted (named) barrier waits for
        self.warp_insts = 0
        self.count = np.zeros(n_w, dtype=np.int64)  # warp instructions executed per warp (= trace position)
        self.xcta = None  # a functional.xcta.CrossCtaTracker when the launch is traced

    # ------------------------------------------------------------ scheduling

    def _enqueue(self, warps: np.ndarray, new_pc: int) -> None:
        if warps.size == 0:
            return
        grp = self.groups.get(new_pc)
        if grp is None:
            self.groups[new_pc] = [warps]
            heapq.heappush(self.heap, new_pc)
        else:
            grp.append(warps)

    def move(self, warps: np.ndarray, new_pc: int) -> None:
        """Advance `warps` to `new_pc`, popping SIMT entries that reach their reconvergence PC."""
        if warps.size == 0:
            return
        hit = self.rpc[warps] == new_pc
        if not hit.any():
            self.pc[warps] = new_pc
            self._enqueue(warps, new_pc)
            return
        stay = warps[~hit]
        self.pc[stay] = new_pc
        self._enqueue(stay, new_pc)
        self._pop_many(warps[hit])

    def _push(self, warps: np.ndarray, pcs, rpcs, masks) -> None:
        """Push one SIMT entry on each of `warps` (values broadcast)."""
        need = int(self.depth[warps].max()) + 1
        if need > self.stk_pc.shape[1]:
            grow = max(need, 2 * self.stk_pc.shape[1]) - self.stk_pc.shape[1]
            self.stk_pc = np.pad(self.stk_pc, ((0, 0), (0, grow)))
            self.stk_rpc = np.pad(self.stk_rpc, ((0, 0), (0, grow)))
            self.stk_mask = np.pad(self.stk_mask, ((0, 0), (0, grow)))
        d = self.depth[warps]
        self.stk_pc[warps, d] = pcs
        self.stk_rpc[warps, d] = rpcs
        self.stk_mask[warps, d] = masks
        self.depth[warps] = d + 1

    def _pop_many(self, warps) -> None:
        """The top entries of `warps` are done: resume the entries beneath them (skipping
        emptied or already-reconverged ones) and enqueue by PC; retire warps with none."""
        todo = np.asarray(warps, dtype=np.int64)
        while todo.size:
            d = self.depth[todo]
            empty = d == 0
            if empty.any():
                self._finish_many(todo[empty])
                todo, d = todo[~empty], d[~empty]
                if not todo.size:
                    return
            d = d - 1
            self.depth[todo] = d
            pcs = self.stk_pc[todo, d]
            rpcs = self.stk_rpc[todo, d]
            masks = self.stk_mask[todo, d] & ~self.exited[todo]
            go = (masks != 0) & (pcs != rpcs)
            ready = todo[go]
            if ready.size:
                self.rpc[ready] = rpcs[go]
                self.mask[ready] = masks[go]
                new_pcs = pcs[go]
                self.pc[ready] = new_pcs
                if ready.size == 1 or (new_pcs == new_pcs[0]).all():
                    self._enqueue(ready, int(new_pcs[0]))
                else:
                    for p in np.unique(new_pcs).tolist():
                        self._enqueue(ready[new_pcs == p], p)
            todo = todo[~go]

    def _finish_many(self, warps: np.ndarray) -> None:
        """Retire warps with empty SIMT stacks (the common end of a kernel)."""
        if warps.size == 0:
            return
        self.mask[warps] = 0
        ctas = warps // self.wpc
        np.subtract.at(self.live, ctas, 1)
        if self.waiting:
            for cta in np.unique(ctas).tolist():
                self._check_barriers(cta)

    # ------------------------------------------------------------ main loop

    def run(self) -> None:
        ck, st = self.ck, self.st
        kinds, runs, guards = ck.kinds, ck.runs, ck.guards
        heap, groups = self.heap, self.groups
        tracer = self.tracer
        runaway, count, back = self.runaway, self.count, ck.back_edges
        timed = runaway.deadline is not None
        xcta = self.xcta
        xkinds = xcta.kinds if xcta is not None else None
        while True:
            if not heap:
                if runaway.resume():  # parked spinning warps get another turn
                    continue
                if self.waiting:
                    self._deadlock()
                return
            pc = heapq.heappop(heap)
            parts = groups.pop(pc)
            warps = parts[0] if len(parts) == 1 else np.concatenate(parts)
            masks = self.mask[warps]
            full = bool((masks == FULL).all())
            if full:
                idx = (warps[:, None] * 32 + LANES).ravel()
                pos = None
            else:
                flat = np.flatnonzero(np.unpackbits(masks.view(np.uint8), bitorder="little"))
                rows, lanes = flat >> 5, flat & 31
                idx = warps[rows] * 32 + lanes
                pos = (rows, lanes)
            guard = guards[pc]
            if guard is not None:
                g = guard(st, idx)
                if g.shape != idx.shape:
                    g = np.broadcast_to(g, idx.shape)
                eidx = idx[g]
            else:
                g = None
                eidx = idx
            self.warp_insts += warps.size
            count[warps] += 1
            st.clock += 1
            if self.budget is not None and self.warp_insts > self.budget:
                raise runaway.budget_error(pc, warps)
            if timed and not st.clock & 1023:
                runaway.check_time(pc, warps)
            kind = kinds[pc]
            addrs = None
            poison = ck.poison
            if poison is not None and pc in poison.pre:
                poison.apply(st, poison.pre[pc], warps)
            if kind == NORMAL:
                try:
                    addrs = runs[pc](st, eidx)
                except MemoryFault as fault:
                    self._fault(pc, eidx, fault)
                except DeviceAssertion as failed:
                    raise self._error(str(failed), pc, int(eidx[failed.lane]), cls=DeviceAssertError) from None
                if xkinds is not None and xkinds[pc]:
                    xcta.access(pc, eidx, addrs)
                if poison is not None and pc in poison.post:
                    poison.apply(st, poison.post[pc], warps)
                self.move(warps, pc + 1)
            elif kind == BRANCH:
                self._branch(pc, warps, masks, g, pos)
                if pc in back:
                    runaway.back_edge(pc, back[pc], warps)
            elif kind == EXIT_OP:
                self._exit(pc, warps, masks, g, pos)
            elif kind == BARRIER:
                self._barrier(pc, warps, eidx, g)
            elif kind == NOP:
                self.move(warps, pc + 1)
            elif kind == BRX:
                self._brx(pc, warps, eidx)
            elif kind == TRAP:
                if eidx.size:
                    self._trap(pc, eidx)
                self.move(warps, pc + 1)
            if tracer is not None:
                executed = masks if g is None else self._lane_mask(warps, masks, g, pos)
                tracer.record(pc, warps + self.warp_base, masks, executed, st, eidx, addrs)

    def _lane_mask(self, warps, masks, g, pos) -> np.ndarray:
        """Per-warp bit mask of the lanes (among the active ones) where `g` is true."""
        if pos is None:
            bits = g.reshape(len(warps), 32)
            return (bits * LANE_BITS).sum(axis=1).astype(np.uint64).astype(np.uint32)
        rows, lanes = pos
        w = np.bincount(rows[g], weights=LANE_BITS[lanes[g]], minlength=len(warps))
        return w.astype(np.uint64).astype(np.uint32)

    # ------------------------------------------------------------ control flow

    def _branch(self, pc, warps, masks, g, pos) -> None:
        target = self.ck.targets[pc][0]
        if g is None:
            self.move(warps, target)
            return
        taken = self._lane_mask(warps, masks, g, pos)
        all_t = taken == masks
        none_t = taken == 0
        self.move(warps[all_t], target)
        self.move(warps[none_t], pc + 1)
        div = ~(all_t | none_t)
        if div.any():
            rp = self.ck.reconvergence(pc)
            dw = warps[div]
            taken_d = taken[div]
            if rp != EXIT:
                self._push(dw, rp, self.rpc[dw], masks[div])
            self._push(dw, pc + 1, rp, masks[div] & ~taken_d)
            self.mask[dw] = taken_d
            self.rpc[dw] = rp
            self.move(dw, target)

    def _diverge(self, w: int, paths: list[tuple[int, int]], rp: int, mask: int) -> None:
        """Split warp w into `paths` [(pc, lanes)], reconverging at `rp`."""
        one = np.array([w], dtype=np.int64)
        if rp != EXIT:
            self._push(one, rp, self.rpc[w], mask)
        for p, m in paths[1:]:
            if m:
                self._push(one, p, rp, m)
        first_pc, first_mask = paths[0]
        self.mask[w] = first_mask
        self.rpc[w] = rp
        self.move(one, first_pc)

    def _brx(self, pc, warps, eidx) -> None:
        sel = self.ck.runs[pc](self.st, eidx)
        targets = self.ck.targets[pc]
        sel = np.broadcast_to(np.asarray(sel, dtype=np.int64), eidx.shape)
        if ((sel < 0) | (sel >= len(targets))).any():
            lane = int(np.argmax((sel < 0) | (sel >= len(targets))))
            raise self._error(f"brx.idx index {int(sel[lane])} is outside its {len(targets)}-entry table", pc,
                              int(eidx[lane]))
        rp = self.ck.reconvergence(pc)
        wid = eidx // 32
        lane_bit = np.uint64(1) << (eidx % 32).astype(np.uint64)
        for w in warps.tolist():
            on = wid == w
            paths = {}
            for t, b in zip(sel[on].tolist(), lane_bit[on].tolist()):
                paths[targets[t]] = paths.get(targets[t], 0) | int(b)
            items = list(paths.items())
            if len(items) == 1:
                self.move(np.array([w], dtype=np.int64), items[0][0])
            else:
                self._diverge(w, items, rp, int(self.mask[w]))

    def _exit(self, pc, warps, masks, g, pos) -> None:
        gone = masks if g is None else self._lane_mask(warps, masks, g, pos)
        self.exited[warps] |= gone
        rest = masks & ~gone
        self.mask[warps] = rest
        cont = rest != 0
        self.move(warps[cont], pc + 1)
        done = warps[~cont]
        if done.size:
            self._pop_many(done)

    # ------------------------------------------------------------ barriers

    def _barrier(self, pc, warps, eidx, g) -> None:
        op = self.ck.runs[pc]
        st = self.st
        bid = int(np.asarray(op.barrier_id(st, eidx[:1] if eidx.size else warps[:1] * 32)).reshape(-1)[0]) \
            if eidx.size else 0
        count = None
        if op.count is not None and eidx.size:
            count = int(np.asarray(op.count(st, eidx[:1])).reshape(-1)[0])
        red = None
        if op.reduce is not None:
            red = (eidx, np.broadcast_to(op.pred(st, eidx), eidx.shape).copy())
        ctas = warps // self.wpc
        for cta in np.unique(ctas).tolist():
            ws = warps[ctas == cta]
            key = (cta, bid)
            self.arrived[key] = self.arrived.get(key, 0) + ws.size
            if count is not None:
                self.expected[key] = -(-count // 32)
            if op.wait:
                sel = None if red is None else (red[0] // 32 // self.wpc) == cta
                rdata = None if red is None else (red[0][sel], red[1][sel], op)
                self.waiting.setdefault(key, []).append((ws, pc, rdata))
            else:
                self.move(ws, pc + 1)
            self._check_barriers(cta)

    def _check_barriers(self, cta: int) -> None:
        """Release barriers of `cta` whose arrivals cover every live warp (or the
        warp count a named barrier asked for). Exited warps count as arrived."""
        for key in [k for k in self.waiting if k[0] == cta]:
            need = min(self.expected.get(key, self.live[cta]), self.live[cta])
            if self.arrived.get(key, 0) >= need:
                entries = self.waiting.pop(key)
                self.arrived.pop(key, None)
                self.expected.pop(key, None)
                self._release(entries)

    def _release(self, entries) -> None:
        reds = [e[2] for e in entries if e[2] is not None]
        if reds:
            op = reds[0][2]
            lanes = np.concatenate([r[0] for r in reds])
            vals = np.concatenate([r[1] for r in reds])
            if op.reduce == "popc":
                result = np.uint32(np.count_nonzero(vals))
            elif op.reduce == "and":
                result = np.bool_(vals.all())
            else:
                result = np.bool_(vals.any())
            op.dst(self.st, lanes, np.broadcast_to(result, lanes.shape))
        for ws, pc, _ in entries:
            self.move(ws, pc + 1)

    # ------------------------------------------------------------ errors

    def _coords(self, thread: int) -> tuple[tuple, tuple]:
        st = self.st
        cta = tuple(int(st.sreg[f"ctaid.{c}"][thread]) for c in "xyz")
        tid = tuple(int(st.sreg[f"tid.{c}"][thread]) for c in "xyz")
        return cta, tid

    def _error(self, message: str, pc: int, thread: int | None, address: int | None = None,
               cls: type[KernelError] = KernelError, hint: str = "") -> KernelError:
        cta = tid = None
        if thread is not None:
            cta, tid = self._coords(thread)
        ins = self.ck.fn.instructions[pc]
        return cls(message, kernel=self.ck.display_name, cta=cta, thread=tid, line=ins.line,
                   address=address, filename=self.ck.module.filename, hint=hint)

    def _fault(self, pc: int, eidx: np.ndarray, fault: MemoryFault):
        thread = int(eidx[fault.lane]) if fault.lane < eidx.size else None
        ins = self.ck.fn.instructions[pc]
        hint = ""
        if ins.base in ("ld", "ldu") and fault.reason == "out-of-bounds access" and not self.st.oob_zero:
            hint = "to let loads outside every allocation read 0, use Device(oob_reads='zero') or --oob-reads zero"
        raise self._error(f"illegal memory access: {fault.reason} at {fault.space} address {fault.address:#x} "
                          f"by '{ins}'", pc, thread, fault.address, hint=hint) from None

    def _trap(self, pc: int, eidx: np.ndarray):
        msg = "trap instruction executed (e.g. a failed device-side assert)"
        if self.ck.reads_envreg and "envreg1" not in self.st.constants:
            msg += ("; this kernel uses a cooperative-groups grid (cg::this_grid()), whose grid.sync() traps unless "
                    "the launch is cooperative: create the kernel with enable_cooperative_groups=True")
        raise self._error(msg, pc, int(eidx[0]))

    def _deadlock(self):
        (cta, bid), entries = next(iter(self.waiting.items()))
        n_wait = sum(len(e[0]) for e in entries)
        pc = entries[0][1]
        thread = int(entries[0][0][0]) * 32
        raise self._error(f"barrier {bid} can never complete: {n_wait} warp(s) wait at "
                          f"'{self.ck.fn.instructions[pc]}' but the other {int(self.live[cta]) - n_wait} live warp(s) "
                          "of the CTA are blocked elsewhere or exited", pc, thread)
