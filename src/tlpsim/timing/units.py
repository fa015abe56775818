"""Execution pipelines of an SM: for each pipeline class, the cycle each unit can
accept its next warp instruction (its initiation interval after the last one).

Classes without units of their own run on another class's units (`aliases`: fp64
on the SFU pipes of a Fermi SM). With `sub_core_model` each warp scheduler owns
its own slice of every class's units (GPGPU-Sim's gpgpu_sub_core_model): unit k of
a class belongs to scheduler k mod n_schedulers; otherwise every scheduler shares
every unit. A plug-in may occupy a unit (Warped-DMR's inter-warp re-execution) or
only some of its lanes (a reservation an instruction whose active lanes overlap
must wait for).
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i64

from tlpsim.timing.static import UNIT_IDS

FULL_MASK: Final = 0xFFFFFFFF


def earliest_after(cycle_lists: list[vec[i64]], now: int) -> int | None:
    """The earliest cycle after `now` in any of the lists (release times of units,
    collectors), None when every one has passed."""
    best = -1
    for cycles in cycle_lists:
        for t in cycles:
            if t > now and (best < 0 or t < best):
                best = int(t)
    return best if best >= 0 else None


class FunctionalUnits:
    def __init__(self, units: dict[str, int], aliases: dict[str, str], n_schedulers: int,
                 sub_core: bool = False, default_class: str = "sp") -> None:
        self.n_schedulers = n_schedulers
        self.sub_core = sub_core
        # per scheduler: class -> next-free cycle of each of its units (shared vectors
        # when not sub-core, and between aliased classes; unboxed, set in place)
        self.free: list[dict[str, vec[i64]]] = []
        # per scheduler: class -> one-cell vector with the earliest free cycle of that
        # class (aliases share the cell), so an issue check is one lookup
        self.next: list[dict[str, vec[i64]]] = []
        if sub_core:
            for s in range(n_schedulers):
                mine = {u: vec[i64]([0] * max(1, len(range(s, n, n_schedulers)))) for u, n in units.items()}
                self.free.append(self._with_aliases(mine, aliases))
        else:
            shared = self._with_aliases({u: vec[i64]([0] * n) for u, n in units.items()}, aliases)
            self.free = [shared] * n_schedulers
        nexts: dict[int, dict[str, vec[i64]]] = {}  # schedulers sharing units share their cells
        for frees in self.free:
            if id(frees) not in nexts:
                cells: dict[int, vec[i64]] = {}
                nexts[id(frees)] = {u: cells.setdefault(id(f), vec[i64]([0])) for u, f in frees.items()}
            self.next.append(nexts[id(frees)])
        self.default = default_class if default_class in units else next(iter(units))
        # the same per scheduler, indexed by StaticInstr.unit_id (a class without units
        # of its own maps to the default class's), for the issue path
        by_id = sorted(UNIT_IDS, key=lambda u: UNIT_IDS[u])
        self.free_by_id: list[list[vec[i64]]] = [[f[self.class_of(u)] for u in by_id] for f in self.free]
        self.next_by_id: list[list[vec[i64]]] = [[n[self.class_of(u)] for u in by_id] for n in self.next]
        # every distinct unit list once (schedulers and aliased classes share them)
        lists = {id(lst): lst for frees in self.free for lst in frees.values()}
        self._all_units: list[vec[i64]] = list(lists.values())
        # partial-lane reservations: (class, scheduler) -> [(lane mask, until cycle)]
        self.lane_holds: dict[tuple[str, int], list[tuple[int, int]]] = {}

    @staticmethod
    def _with_aliases(frees: dict[str, vec[i64]], aliases: dict[str, str]) -> dict[str, vec[i64]]:
        for u, target in aliases.items():
            frees[u] = frees[target]
        return frees

    def class_of(self, unit: str) -> str:
        """The pipeline class that runs `unit`'s instructions (unknown classes run on the default)."""
        return unit if unit in self.free[0] else self.default

    def start_id(self, sched: int, unit_id: int, now: int, initiation: int) -> bool:
        """Start an instruction of the class with index `unit_id` (StaticInstr.unit_id) on
        its earliest-free unit (the first of equals) if that unit is free at `now`; False
        when every unit is busy."""
        frees = self.free_by_id[sched][unit_id]
        k = 0
        for j in range(1, len(frees)):
            if frees[j] < frees[k]:
                k = j
        if frees[k] > now:
            return False
        frees[k] = now + initiation
        earliest = frees[0]
        for t in frees:
            if t < earliest:
                earliest = t
        self.next_by_id[sched][unit_id][0] = earliest
        return True

    def free_at(self, sched: int, unit: str) -> int:
        """Earliest cycle a unit of `unit`'s class can accept an instruction."""
        return self.next[sched][self.class_of(unit)][0]

    def occupy(self, sched: int, unit: str, now: int, cycles: int) -> int:
        """Take the earliest-free unit of the class for `cycles` cycles starting when it
        is free (not before `now`); returns the start cycle."""
        cls = self.class_of(unit)
        frees = self.free[sched][cls]
        k = 0
        for j in range(1, len(frees)):
            if frees[j] < frees[k]:
                k = j
        start = int(frees[k]) if frees[k] > now else now
        frees[k] = start + cycles
        earliest = frees[0]
        for t in frees:
            if t < earliest:
                earliest = t
        self.next[sched][cls][0] = earliest
        return start

    def hold_lanes(self, sched: int, unit: str, lanes: int, until: int) -> None:
        """Reserve `lanes` of the class's units until `until` (exclusive)."""
        key = (self.class_of(unit), sched if self.sub_core else 0)
        self.lane_holds.setdefault(key, []).append((lanes, until))

    def lanes_free(self, sched: int, unit: str, mask: int, now: int) -> bool:
        """Whether an instruction with active lanes `mask` avoids every live lane reservation."""
        key = (self.class_of(unit), sched if self.sub_core else 0)
        holds = self.lane_holds.get(key)
        if not holds:
            return True
        live = [(m, t) for m, t in holds if t > now]
        if len(live) != len(holds):
            if live:
                self.lane_holds[key] = live
            else:
                del self.lane_holds[key]
        for m, _ in live:
            if m & mask:
                return False
        return True

    def lanes_next_free(self, now: int) -> int | None:
        times = [t for holds in self.lane_holds.values() for _, t in holds if t > now]
        return min(times) if times else None

    def next_free(self, now: int) -> int | None:
        """Earliest future cycle at which a busy unit frees up (for a sleeping SM)."""
        return earliest_after(self._all_units, now)
