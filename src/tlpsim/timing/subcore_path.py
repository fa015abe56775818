"""Each warp scheduler's path into the LD/ST unit's shared memory
(`sm.shared_subcore_issue_cycles`, `sm.shared_subcore_cycles_per_conflict`).

A sub-core hands its warps' shared-memory instructions to the SM-wide unit through its
own path, which takes one every `sub_issue_cycles`, or `sub_wave_cycles` per wavefront
if that is more; a compare-and-swap loop holds it for every round's load and
compare-and-swap (timing/casloop.py). The issue stage keeps a sub-core's next shared
access until its path is free, while the banks serve every sub-core at
`smem_wave_cycles` per wavefront (timing/ldst.py)."""

from __future__ import annotations

from typing import Any, Final

from tlpsim.timing.casloop import cas_path_hold
from tlpsim.timing.ldst_types import LdstParams
from tlpsim.timing.static import StaticInstr
from tlpsim.trace.format import SPACE_CODES

_SHARED: Final[int] = SPACE_CODES["shared"]


def shared_degree(rows: Any, row: int, atomic: bool) -> int:
    """Wavefronts of a shared access: its bank-conflict degree, or for an atomic whose
    same-word lanes are serialised, the most lanes one bank serves."""
    d = rows.lane_degree[row] if atomic else rows.bank_degree[row]
    return d if d > 1 else 1


class SubcorePaths:
    """The paths of one SM's sub-cores: each busy until a cycle."""

    def __init__(self, params: LdstParams) -> None:
        self.p = params
        self.free: list[int] = [0] * 16   # per scheduler: first cycle its path takes another access

    def hold(self, warp: Any, si: StaticInstr, row: int) -> int:
        """Cycles a memory instruction holds its sub-core's path (0: not a shared access,
        or no such path): the path's issue cycles or its cycles per wavefront, whichever
        is more."""
        p = self.p
        if p.sub_issue_cycles == 0 or row < 0:
            return 0
        rows = warp.mem_rows
        if rows.space[row] != _SHARED:
            return 0
        atomic = si.is_atomic and p.atomic_serialize
        degree = shared_degree(rows, row, atomic)
        if si.cas_loop and atomic:  # every round's load and compare-and-swap pass the path
            return cas_path_hold(degree, max(rows.word_lanes[row], 1), p.sub_issue_cycles, p.sub_wave_cycles)
        waves = degree * p.sub_wave_cycles
        return waves if waves > p.sub_issue_cycles else p.sub_issue_cycles

    def is_free(self, sched: int, now: int) -> bool:
        """Whether scheduler `sched`'s path takes a shared access at `now`."""
        return self.free[sched] <= now

    def take(self, sched: int, cycles: int, now: int) -> None:
        """A shared access entered through `sched`'s path: it is busy `cycles` from `now`."""
        self.free[sched] = now + cycles

    def next_free(self, now: int) -> int:
        """The first cycle after `now` a busy path frees (-1: none is busy)."""
        out = -1
        for f in self.free:
            if f > now and (out < 0 or f < out):
                out = f
        return out
