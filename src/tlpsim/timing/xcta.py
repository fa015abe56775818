"""Cross-CTA dependencies in the timing model: a warp that, in the functional
execution, read a value another CTA of its launch wrote (`Trace.deps`, recorded by
`tlpsim.functional.xcta`) may not pass that read before the writer's CTA has been
dispatched (is or was resident). A replay that let it would be of an execution the
simulated machine cannot produce — e.g. CTA 0 spinning on a flag CTA 1 sets, on a
machine with one CTA slot, "finishing" in a few hundred cycles.

At the read the warp is held (HOLD_XCTA) until the writer's CTA is dispatched; the
dispatch releases it. If no SM can ever take the writer while the reader holds its
slot, the launch ends with nothing left to do and the GPU reports the deadlock
(`deadlock_error`) instead of statistics. A launch without such reads carries no
gates: each warp's `gate` is -1 and the issue stage's check is one comparison.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tlpsim.errors import KernelError
from tlpsim.timing.plugin import HOLD_BITS

HOLD_XCTA = 1 << len(HOLD_BITS)  # a hold bit of its own, beside the plug-ins' ones


class CoResidencyDeadlock(KernelError):
    """A CTA waits for a value a CTA writes that can never be resident at the same time."""


class CrossCtaGates:
    """The dependencies of one launch: per reader warp, (position, writer CTA, writer
    warp, reader pc, writer pc) in trace order, and the warps held on each writer CTA."""

    def __init__(self, deps: np.ndarray, warps_per_cta: int) -> None:
        self.wpc = max(warps_per_cta, 1)
        self.by_warp: dict[int, list[tuple[int, int, int, int, int]]] = {}
        for r, pos, rpc, w, wpc_ in deps.tolist():
            self.by_warp.setdefault(r, []).append((pos, w // self.wpc, w, rpc, wpc_))
        for lst in self.by_warp.values():
            lst.sort()
        self.waiting: dict[int, list[Any]] = {}  # writer CTA -> held warps

    def first(self, gwarp: int) -> int:
        """Trace position of the warp's first gate (-1: none)."""
        lst = self.by_warp.get(gwarp)
        return lst[0][0] if lst else -1

    def reach(self, w: Any, sm: Any, run: Any) -> None:
        """Warp `w` is about to issue trace position `w.gate`: pass the gates whose
        writer is dispatched; hold it at the first whose writer is not."""
        if w.done:
            return
        lst = self.by_warp[w.gwarp]
        k = w.gate_k
        while k < len(lst) and lst[k][0] == w.pos:
            writer_cta = lst[k][1]
            if writer_cta >= run.next_cta:  # not dispatched yet: wait for it
                w.gate_k = k
                if not w.holds & HOLD_XCTA:
                    w.holds |= HOLD_XCTA
                    self.waiting.setdefault(writer_cta, []).append(w)
                    sm.issue.update_ready(w)
                return
            k += 1
        w.gate_k = k
        w.gate = lst[k][0] if k < len(lst) else -1

    def dispatched(self, run: Any, index: int, sms: list[Any]) -> None:
        """CTA `index` of the launch was dispatched: release the warps waiting for it."""
        held = self.waiting.pop(index, None)
        if not held:
            return
        for w in held:
            sm = sms[w.view.sm]
            if sm.slots.warps[w.slot] is not w:
                continue
            w.holds &= ~HOLD_XCTA
            self.reach(w, sm, run)
            if not w.holds & HOLD_XCTA:
                sm.issue.update_ready(w)
                sm.wake()

    # ------------------------------------------------------------ deadlock report

    def deadlock_error(self, run: Any, gpu: Any) -> CoResidencyDeadlock | None:
        """The error of a launch that stopped with warps held here (None if none are)."""
        held = [(cta, w) for cta, ws in sorted(self.waiting.items()) for w in ws]
        if not held:
            return None
        writer_cta, w = held[0]
        _, _, writer_warp, rpc, wpc_ = self.by_warp[w.gwarp][w.gate_k]
        fn = run.static.fn
        line = fn.instructions[rpc].line
        wline = fn.instructions[wpc_].line
        grid = tuple(run.trace.grid)
        reader = _coords(w.cta.index, grid)
        writer = _coords(writer_cta, grid)
        resident = sorted(c.index for sm in gpu.sms for c in sm.slots.ctas if c is not None and c.run is run)
        waiters = sorted({x.cta.index for _, x in held})
        kernel = qualified(run.name)
        msg = (f"deadlock: CTA {_fmt(reader)} waits for a value CTA {_fmt(writer)} writes (warp "
               f"{writer_warp % self.wpc}, PTX line {wline}), but the two CTAs cannot be co-resident on this GPU")
        hint = (f"{gpu.cfg.gpu.n_sms} SM(s); the {len(resident)} resident CTA(s) of the kernel "
                f"({_list(resident, grid)}) stay until they finish, {len(waiters)} of them wait for CTAs not yet "
                f"dispatched, and no SM can take CTA {_fmt(writer)}. The functional model ran the CTAs together; "
                "CUDA only guarantees progress between co-resident CTAs (use fewer CTAs, or room for more per SM)")
        module = getattr(run.static.analyzed, "module", None)
        return CoResidencyDeadlock(msg, kernel=kernel, cta=reader, line=line,
                                   filename=getattr(module, "filename", "") or "", hint=hint)


def _coords(index: int, grid: tuple) -> tuple[int, int, int]:
    gx, gy = grid[0], grid[1]
    return index % gx, (index // gx) % gy, index // (gx * gy)


def _fmt(c: tuple) -> str:
    return f"({', '.join(map(str, c))})"


def _list(indices: list[int], grid: tuple) -> str:
    shown = ", ".join(_fmt(_coords(i, grid)) for i in indices[:6])
    return shown + (f" and {len(indices) - 6} more" if len(indices) > 6 else "")


def qualified(name: str) -> str:
    from tlpsim.frontend.names import qualified_name  # (the timing layer may use the frontend)

    return qualified_name(name)


__all__ = ["HOLD_XCTA", "CoResidencyDeadlock", "CrossCtaGates"]
