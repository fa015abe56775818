"""Kernel sampling (Sieve-like): launches grouped by static kernel, shape and
instruction count; the group's first launches are simulated in detail and the
others' cycles and statistics projected from them.

The functional pass runs every launch in full before its timing replay, so the
grouping uses exact instruction counts. Decisions are online (launches arrive one
at a time): a launch joins the group of its kernel, grid, block, registers and
shared memory whose first member's warp instructions and global line accesses (both
from the trace) are each within the tolerance of its own -- the same instructions
over fewer lines (gaussian's multipliers kernel, whose column shrinks each step while
its threads stay) are other work; the first `REPRESENTATIVES` members of a group are simulated (the first
often with colder caches than the rest), every later one is projected at the latest
representative's cycles per instruction, with the representatives' spread (never
less than the tolerance) as its interval (`rule.project_kernel`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tlpsim.sampling.rule import project_kernel
from tlpsim.sampling.spec import SamplingSpec
from tlpsim.sampling.waves import cta_work, warm_l2

REPRESENTATIVES = 2


@dataclass
class KernelGroup:
    """Launches of one kernel and shape with matching instruction counts."""

    key: tuple
    warp_insts: int                                   # the first member's
    lines: int = 0                                    # the first member's global line accesses
    reps: list = field(default_factory=list)          # (warp insts, cycles, LaunchStats) of the simulated ones
    members: int = 0
    index: int = 0                                    # the group's number, in order of creation

    def label(self) -> str:
        name, grid, block = self.key[0], self.key[1], self.key[2]
        return (f"{name} grid {'x'.join(map(str, grid))} block {'x'.join(map(str, block))} ~{self.warp_insts} warp "
                f"insts, ~{self.lines} line accesses")


def group_key(name: str, grid: tuple, block: tuple, regs: int, smem: int) -> tuple:
    return (name, tuple(grid), tuple(block), int(regs), int(smem))


class KernelSampler:
    """Online grouping and projection of a session's launches."""

    def __init__(self, spec: SamplingSpec) -> None:
        self.spec = spec
        self.groups: dict[tuple, list[KernelGroup]] = {}
        self.n_groups = 0

    def group_of(self, key: tuple, warp_insts: int, lines: int = 0) -> KernelGroup:
        """The group a launch joins (a new one when no group's counts match)."""
        tol = self.spec.tolerance
        for g in self.groups.get(key, []):
            if (abs(warp_insts - g.warp_insts) <= tol * max(g.warp_insts, 1)
                    and abs(lines - g.lines) <= tol * max(g.lines, 1)):
                return g
        g = KernelGroup(key, warp_insts, lines, index=self.n_groups)
        self.n_groups += 1
        self.groups.setdefault(key, []).append(g)
        return g

    def consider(self, launch: tuple, static_kernel: Callable[..., Any], mem: Any) -> tuple[KernelGroup, Any]:
        """The group of a launch alone in its batch ((fn, space_of, trace, regs, smem,
        stream[, analyzed]), as the session replays it), and its projected (statistics,
        record) when the group has its representatives, None when it must be simulated.
        A projected launch warms the L2 (`mem`) with all its global accesses, as it
        would have left it; `static_kernel(fn, space_of, regs, analyzed)` gives its
        instructions."""
        fn, space_of, trace, regs, smem = launch[:5]
        n_ctas = trace.n_warps // max(trace.warps_per_cta, 1)
        g = self.group_of(group_key(getattr(fn, "name", trace.kernel), trace.grid, trace.block, regs, smem),
                          trace.warp_instructions, int(cta_work(trace, 0, n_ctas)[1].sum()))
        if self.needs_detail(g):
            return g, None
        stats, record = self.project(g, trace.kernel, trace.warp_instructions, trace.thread_instructions)
        sk = static_kernel(fn, space_of, regs, launch[6] if len(launch) > 6 else None)
        record["warmed_l2_lines"] = warm_l2(mem, sk, trace, 0, trace.n_warps)
        return g, (stats, record)

    def needs_detail(self, g: KernelGroup) -> bool:
        return len(g.reps) < REPRESENTATIVES

    def simulated(self, g: KernelGroup, stats: Any) -> None:
        g.members += 1
        g.reps.append((stats.warp_insts, stats.cycles, stats))

    def project(self, g: KernelGroup, name: str, warp_insts: int, thread_insts: int) -> tuple[Any, dict]:
        """A projected launch's statistics and sampling record."""
        g.members += 1
        proj = project_kernel(warp_insts, [(i, c) for i, c, _ in g.reps], self.spec.tolerance)
        rep = g.reps[-1][2]
        cycles = max(proj.cycles, 1)
        stats = dataclasses.replace(rep, kernel=name, cycles=cycles, warp_insts=warp_insts,
                                    thread_insts=thread_insts, ipc=thread_insts / cycles,
                                    warp_ipc=warp_insts / cycles, wall_seconds=0.0,
                                    first_cycle=-1, last_cycle=-1, timeline={})
        record = {"method": "kernel", "cycles": cycles, "interval": [proj.low, proj.high],
                  "confidence": self.spec.confidence, "warp_insts": warp_insts, "detail_warp_insts": 0,
                  "detail_fraction": 0.0, "group": g.index, "group_label": g.label(),
                  "representatives": len(g.reps)}
        return stats, record
