"""Runaway launches: instruction budgets, a wall-clock limit, and spin detection.

A kernel that never ends must be reported, not hung on. Three guards, all per launch:

* **Budget.** Every warp may execute at most ``factor × S`` warp instructions, where
  ``S`` is the kernel's static instruction count (after call inlining), and the
  launch at most ``factor × S × warps`` (``launch_limits``). The default factor,
  10,000, is ~40× the most any built-in workload needs at ``small`` (nbody: 239)
  and ~5× at ``paper``. Override with ``Device(budget_factor=...)``, ``tlpsim run
  --budget-factor``, or ``TLPSIM_BUDGET_FACTOR``; ``Device(budget=N)`` sets the
  launch's total instead, ``budget=None`` turns both off. The per-warp budget is
  checked at loop back edges (a warp can only exceed it by looping).
* **Time limit.** ``Device(time_limit=seconds)`` / ``--time-limit`` /
  ``TLPSIM_TIME_LIMIT``: wall-clock seconds per launch (off by default).
* **Spin detection.** A warp that goes once round a loop without changing any
  register the loop writes is spinning: it waits for memory somebody else must
  change. It is parked, so the other warps run (the engine runs the lowest PC first,
  which would otherwise starve a producer placed after the spin loop). When nothing
  but parked warps (and warps at barriers) is left, they run again; if the whole
  chunk state — registers, SIMT stacks, barriers, shared/local and device memory —
  is then the same as the last time that happened, the execution is
  deterministic and provably makes no progress: an infinite loop, reported with the
  kernel, the looping PC and PTX line, and the warps.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import time
from dataclasses import dataclass

import numpy as np

from tlpsim.errors import KernelError, TlpsimError
from tlpsim.frontend.ir import Reg, Vec

DEFAULT_BUDGET_FACTOR = 10_000
SPIN_CHECK_INTERVAL = 128  # executions of a back edge between two spin checks


class InstructionBudgetExceeded(KernelError):
    """A warp or the launch executed more instructions than its budget allows."""


class TimeLimitExceeded(KernelError):
    """A launch ran longer than its wall-clock limit."""


class InfiniteLoop(KernelError):
    """Warps loop without changing anything that could let them leave."""


@dataclass(frozen=True)
class RunLimits:
    """What one launch may use. None = unlimited."""

    budget: int | None = None      # warp instructions of the whole launch
    per_warp: int | None = None    # warp instructions of any one warp
    time_limit: float | None = None  # wall-clock seconds
    spin_detection: bool = True
    factor: float | None = None    # the factor the budgets came from (for messages)

    def deadline(self, start: float) -> float | None:
        return None if self.time_limit is None else start + self.time_limit


def env_factor() -> float:
    """`TLPSIM_BUDGET_FACTOR` or the default."""
    return _env_number("TLPSIM_BUDGET_FACTOR", DEFAULT_BUDGET_FACTOR)


def env_time_limit() -> float | None:
    """`TLPSIM_TIME_LIMIT` seconds, or None."""
    v = _env_number("TLPSIM_TIME_LIMIT", None)
    return None if v is None else float(v)


def _env_number(name: str, default):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        v = float(raw)
    except ValueError:
        raise TlpsimError(f"environment variable {name}={raw!r} is not a number") from None
    if not v > 0:
        raise TlpsimError(f"environment variable {name}={raw!r} must be positive")
    return v


def check_limit(value, what: str, *, integer: bool = False):
    """A positive number (or None) for a budget/limit option, or a TlpsimError naming it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TlpsimError(f"{what} must be a positive number or None, got {value!r}")
    if not value > 0 or value != value or value == float("inf"):
        raise TlpsimError(f"{what} must be positive and finite, got {value!r}")
    return int(value) if integer else float(value)


def launch_limits(n_static: int, n_warps: int, budget="auto", factor: float | None = DEFAULT_BUDGET_FACTOR,
                  time_limit: float | None = None) -> RunLimits:
    """The limits of a launch of `n_warps` warps of a kernel of `n_static` instructions.

    `budget`: "auto" (factor × S × warps), an int (the launch's total), or None (no
    instruction budgets at all). `factor` None disables the per-warp budget."""
    if budget is None:
        return RunLimits(None, None, time_limit, True, None)
    per_warp = None if factor is None else max(int(factor * max(n_static, 1)), 1)
    if budget == "auto":
        total = None if per_warp is None else per_warp * max(n_warps, 1)
    else:
        total = check_limit(budget, "budget", integer=True)
    return RunLimits(total, per_warp, time_limit, True, factor)


def loop_registers(fn, target: int, latch: int) -> tuple[str, ...]:
    """Registers written by the instructions from `target` to the back edge at `latch`:
    those a loop iteration can change (a heuristic for parking; the verdict compares
    the whole state)."""
    out: set[str] = set()
    for ins in fn.instructions[target: latch + 1]:
        for d in ins.dsts:
            for e in (d.elems if isinstance(d, Vec) else (d,)):
                if isinstance(e, Reg):
                    out.add(e.name)
    return tuple(sorted(out))


class RunawayGuard:
    """Budgets, time limit and spin detection for one chunk runner (see module doc)."""

    def __init__(self, runner, limits: RunLimits, deadline: float | None) -> None:
        self.r = runner
        self.limits = limits
        self.deadline = deadline
        self.visits: dict[int, int] = {}
        self.snaps: dict[int, tuple] = {}
        self.loop_regs: dict[int, tuple[str, ...]] = {}
        self.parked: list[tuple[np.ndarray, int]] = []
        self.last_fingerprint: bytes | None = None

    # ------------------------------------------------------------ budgets and time

    def check_time(self, pc: int, warps: np.ndarray) -> None:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise self._error(TimeLimitExceeded, f"launch exceeded its time limit of {self.limits.time_limit:g} s "
                              "(Device(time_limit=...), tlpsim run --time-limit, TLPSIM_TIME_LIMIT)", pc, warps)

    def budget_error(self, pc: int, warps: np.ndarray) -> KernelError:
        return self._error(InstructionBudgetExceeded,
                           f"launch exceeded its instruction budget of {self.limits.budget:,} warp instructions "
                           f"(an infinite loop?){self._how_to_raise()}", pc, warps)

    def back_edge(self, pc: int, target: int, warps: np.ndarray) -> None:
        """Warps executed the loop branch at `pc` (to `target` <= pc)."""
        r = self.r
        per_warp = self.limits.per_warp
        if per_warp is not None:
            counts = r.count[warps]
            if int(counts.max()) > per_warp:
                over = warps[counts > per_warp]
                raise self._error(InstructionBudgetExceeded,
                                  f"warp(s) exceeded the per-warp instruction budget of {per_warp:,} "
                                  f"(factor {self.limits.factor:g} × {len(r.ck.fn.instructions)} static "
                                  f"instructions) looping at this branch (an infinite loop?){self._how_to_raise()}",
                                  pc, over)
        if not self.limits.spin_detection:
            return
        n = self.visits.get(pc, 0) + 1
        self.visits[pc] = n
        snap = self.snaps.pop(pc, None)
        if snap is not None:
            self._compare(pc, target, warps, snap)
        elif n % SPIN_CHECK_INTERVAL == 0:
            looping = warps[r.pc[warps] == target]
            if looping.size:
                self.snaps[pc] = (looping, self._state(pc, target, looping))

    def _how_to_raise(self) -> str:
        return ("; if the kernel really needs more, raise the factor (Device(budget_factor=...), "
                "tlpsim run --budget-factor, TLPSIM_BUDGET_FACTOR) or pass Device(budget=None)")

    # ------------------------------------------------------------ spin detection

    def _state(self, pc: int, target: int, warps: np.ndarray) -> list[np.ndarray]:
        regs = self.loop_regs.get(pc)
        if regs is None:
            regs = self.loop_regs[pc] = loop_registers(self.r.ck.fn, target, pc)
        r = self.r
        lanes = (warps[:, None] * 32 + np.arange(32)).ravel()
        st_regs = r.st.regs
        out = [st_regs[name][lanes].reshape(warps.size, 32) for name in regs]
        out += [r.mask[warps][:, None], r.depth[warps][:, None], r.rpc[warps][:, None]]
        return out

    def _compare(self, pc: int, target: int, warps: np.ndarray, snap) -> None:
        r = self.r
        old_warps, old_state = snap
        looping = warps[r.pc[warps] == target]
        common, i_old, i_new = np.intersect1d(old_warps, looping, assume_unique=True, return_indices=True)
        if common.size == 0:
            return
        new_state = self._state(pc, target, common)
        same = np.ones(common.size, dtype=bool)
        for a, b in zip(old_state, new_state):
            same &= (a[i_old] == b).all(axis=1)
        if same.any():
            self._park(common[same], target)

    def _park(self, warps: np.ndarray, pc: int) -> None:
        """Take `warps` (queued at `pc`) out of the schedule until nothing else can run."""
        r = self.r
        parts = [p[~np.isin(p, warps)] for p in r.groups.get(pc, [])]
        parts = [p for p in parts if p.size]
        if parts:
            r.groups[pc] = parts
        elif pc in r.groups:
            del r.groups[pc]
            r.heap.remove(pc)
            heapq.heapify(r.heap)
        self.parked.append((warps, pc))

    def resume(self) -> bool:
        """Nothing is runnable: requeue the parked warps (True), or raise when the
        chunk is exactly where it was the last time (no progress is possible)."""
        if not self.parked:
            return False
        fp = self._fingerprint()
        if fp == self.last_fingerprint:
            raise self._no_progress()
        self.last_fingerprint = fp
        parked, self.parked = self.parked, []
        self.snaps.clear()
        for warps, pc in parked:
            self.r._enqueue(warps, pc)
        return True

    def _fingerprint(self) -> bytes:
        r, st = self.r, self.r.st
        h = hashlib.blake2b(digest_size=32)
        for warps, pc in sorted(self.parked, key=lambda p: (p[1], int(p[0][0]))):
            h.update(np.int64(pc).tobytes())
            h.update(np.ascontiguousarray(warps).data)
        for key in sorted(r.waiting):
            h.update(repr((key, r.arrived.get(key), r.expected.get(key),
                           [(e[0].tolist(), e[1]) for e in r.waiting[key]])).encode())
        for name in sorted(st.regs):
            h.update(np.ascontiguousarray(st.regs[name]).data)
        for arr in (r.pc, r.rpc, r.mask, r.exited, r.depth, r.stk_pc, r.stk_rpc, r.stk_mask, r.live, st.carry,
                    st.shared, st.local, st.param_frame):
            h.update(np.ascontiguousarray(arr).data)
        mem = st.memory
        h.update(mem.data[: mem.top].data)
        return h.digest()

    def _no_progress(self) -> KernelError:
        r = self.r
        warps, pc = self.parked[0]
        allw = np.concatenate([w for w, _ in self.parked])
        ins = r.ck.fn.instructions
        branch = next((k for k in range(pc, len(ins)) if ins[k].base in ("bra", "brx")), pc)
        msg = (f"infinite loop: {self._describe(allw)} go round the loop at PTX lines {ins[pc].line}-"
               f"{ins[branch].line} (back edge '{ins[branch]}') without changing any register, and no other "
               "warp can change the memory they read")
        if r.waiting:
            n_bar = sum(len(e[0]) for es in r.waiting.values() for e in es)
            msg += f"; {n_bar} warp(s) wait at a barrier"
        geom = r.st.geom
        end = r.st.cta_begin + r.st.n_ctas
        if end < geom.n_ctas or r.st.cta_begin > 0:
            msg += (f". This chunk runs CTAs {r.st.cta_begin}-{end - 1} of {geom.n_ctas} together; a wait for a "
                    "CTA outside it cannot end here (Device(chunk_threads=...) runs more CTAs together, but CUDA "
                    "only guarantees progress between co-resident CTAs)")
        return self._error(InfiniteLoop, msg, branch, warps, describe=False)

    # ------------------------------------------------------------ messages

    def _describe(self, warps: np.ndarray) -> str:
        """'warps 0-3 of CTA (0, 0, 0) and 2 more CTAs' for chunk-local warp ids."""
        r = self.r
        wpc = r.wpc
        glob = np.unique(warps) + r.warp_base
        ctas = np.unique(glob // wpc)
        first = glob[glob // wpc == ctas[0]] % wpc
        cta = r._coords(int(ctas[0] - r.warp_base // wpc) * wpc * 32)[0]
        ids = _ranges(first.tolist())
        text = f"warp{'s' if first.size > 1 else ''} {ids} of CTA ({', '.join(map(str, cta))})"
        if ctas.size > 1:
            text += f" and {ctas.size - 1} more CTA{'s' if ctas.size > 2 else ''}"
        return f"{glob.size} warp(s) ({text})"

    def _error(self, cls, message: str, pc: int, warps: np.ndarray, describe: bool = True) -> KernelError:
        r = self.r
        ins = r.ck.fn.instructions[pc]
        w = int(np.min(warps)) if np.size(warps) else None
        cta = tid = None
        if w is not None:
            cta, tid = r._coords(w * 32)
            if describe:
                message = f"{message}; {self._describe(np.asarray(warps))} at '{ins}'"
        return cls(message, kernel=r.ck.display_name, cta=cta, thread=tid, line=ins.line,
                   filename=r.ck.module.filename)


def _ranges(ids: list[int]) -> str:
    out, start, prev = [], None, None
    for k in ids:
        if start is None:
            start = prev = k
        elif k == prev + 1:
            prev = k
        else:
            out.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = k
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(out)
