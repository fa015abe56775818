"""Soundness check of the register analyses by execution.

With `Device(poison_dead_registers=True)` every register is overwritten with
garbage wherever the analyses say its value is no longer needed by any lane of
the warp: after the instruction carrying its RFV release flag (and at a dead
write), at the per-branch release points, and at the start of each RegLess region
for every register that is neither an input of the region nor live through it
(values live across a region stay in the backing store; everything else may be
erased from the staging unit). If an analysis frees a
value too early, the kernel computes a wrong result and its verification fails.
"""

from __future__ import annotations

import numpy as np

from tlpsim.analysis.analyzed import analyze
from tlpsim.frontend.ir import Function, Module

GARBAGE = {1: 0xA5, 2: 0xDEAD, 4: 0x7FBADBAD, 8: 0x7FF4DEADBADBEEF5}  # NaN patterns for floats


class PoisonPlan:
    """Registers to poison before (`pre`) and after (`post`) each instruction index."""

    def __init__(self, module: Module, kernel: Function, scheduled: bool = False) -> None:
        ak = analyze(module, kernel, scheduled)
        fn = ak.fn
        preds = {r for r, t in fn.reg_types.items() if t == "pred"}
        rp = ak.release_points
        post: dict[int, set[str]] = {}
        pre: dict[int, set[str]] = {}
        for i in range(len(fn.instructions)):
            regs = set(rp.released[i]) | set(rp.dead_writes[i])
            if regs:
                post[i] = regs
        for br in rp.branch_releases:
            pre.setdefault(br.index, set()).update(br.registers)
        everything = set(fn.reg_types) - preds
        live = ak.liveness
        for region in ak.regions:
            keep = set(region.inputs) | set(live.warp_live_in(region.start))
            pre.setdefault(region.start, set()).update(everything - keep)
        self.pre = {i: sorted(r - preds) for i, r in pre.items() if r - preds}
        self.post = {i: sorted(r - preds) for i, r in post.items() if r - preds}

    def apply(self, st, regs: list[str], warps: np.ndarray) -> None:
        """Overwrite `regs` in every lane of `warps`."""
        lanes = (warps[:, None] * 32 + np.arange(32)).ravel()
        for name in regs:
            arr = st.regs[name]
            arr[lanes] = GARBAGE[arr.dtype.itemsize]
