"""Cache-conscious wavefront scheduling, CCWS (Rogers, O'Connor, Aamodt, MICRO
2012), from its published description, as Lee et al. (HPCA 2014, §5.4) compare
against it.

Lost-locality detection: every warp has a small victim tag array (VTA). An L1D
line is owned by the warp whose miss allocated it; when the line is evicted its
tag goes to the owner's VTA. A later miss of that warp that hits its own VTA is
*lost intra-warp locality*: the warp would have hit had it not been evicted.

Lost-locality scoring: each warp has a score, the base score when it starts. A VTA
hit raises the warp's score by

    (VTA hits / instructions issued) x K_throttle x cutoff,     cutoff = active warps x base score

(both totals of this scheduler unit), and scores decay by `decay` points a cycle
back to the base. The warps are stacked by score, highest first; those whose
place in the stack starts at or above the cutoff may not issue loads to the L1D (other
instructions still issue), so the warps losing locality get the cache. Among the
warps allowed, the order is greedy-then-oldest ("Within CCWS, GTO scheduling is
used within the selected warp boundary", Lee et al.).

Parameters: a 16-entry, 8-way VTA per warp, base score 100 and K_throttle 8, as in
the authors' released configuration. Scores are kept per scheduler unit (each
unit schedules its own warps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from tlpsim.policies.registry import register
from tlpsim.policies.warp.gto import GreedyThenOldest
from tlpsim.policies.warp.base import WarpView
from tlpsim.timing.plugin import Counter
from tlpsim.timing.static import K_MEM
from tlpsim.timing.views import KernelInfo

__all__ = ["CacheConsciousWavefront", "VictimTags"]


@dataclass(frozen=True)
class CCWSParams:
    vta_entries: int = 16     # victim tags per warp
    vta_assoc: int = 8        # ways of each warp's VTA
    base_score: int = 100     # a warp's score without lost locality
    k_throttle: float = 8.0   # K_throttle of the score update
    decay: int = 1            # points a score loses per cycle, down to the base
    line_bytes: int = 128     # L1D line size (set index of the VTA)

    def __post_init__(self) -> None:
        if self.vta_assoc < 1 or self.vta_entries < self.vta_assoc or self.vta_entries % self.vta_assoc:
            raise ValueError("vta_entries must be a positive multiple of vta_assoc")
        if self.base_score < 1 or self.decay < 1 or self.k_throttle < 0:
            raise ValueError("need base_score >= 1, decay >= 1, k_throttle >= 0")


class VictimTags:
    """A set-associative tag array with LRU replacement (one warp's VTA)."""

    def __init__(self, entries: int, assoc: int, line_bytes: int) -> None:
        self.n_sets = entries // assoc
        self.assoc = assoc
        self.line_bytes = line_bytes
        self.sets: list[list[int]] = [[] for _ in range(self.n_sets)]  # LRU first

    def _set(self, line: int) -> list[int]:
        return self.sets[(line // self.line_bytes) % self.n_sets]

    def insert(self, line: int) -> None:
        s = self._set(line)
        if line in s:
            s.remove(line)
        elif len(s) >= self.assoc:
            s.pop(0)
        s.append(line)

    def probe(self, line: int) -> bool:
        """Whether the tag is present; a hit removes it (the line is back in the L1)."""
        s = self._set(line)
        if line in s:
            s.remove(line)
            return True
        return False


@register("warp_scheduler", "ccws")
class CacheConsciousWavefront(GreedyThenOldest):
    """CCWS (Rogers et al. MICRO'12): victim tags detect lost locality; high-score warps keep L1D access, GTO among them."""
    stationarity = "stationary"  # a feedback loop on lost locality: stable once its inputs are
    sampling_tracked = ("vta_hits",)  # ... which the stability rule checks

    Params = CCWSParams
    events = frozenset({"kernel_start", "warp_started", "l1d_access"})
    filters = True  # throttled warps may not issue loads
    counters = {
        "vta_hits": Counter("accesses", "L1D misses that hit the missing warp's victim tags (lost locality)"),
        "load_blocks": Counter("choices", "scheduler choices that kept a throttled warp's load from issuing"),
    }

    def __init__(self, params: Any = None, n_slots: int = 64, **context: Any) -> None:
        super().__init__(params or CCWSParams(), n_slots, **context)
        self.vta: dict[int, VictimTags] = {}          # my warp slot -> its VTA
        self.age_of: dict[int, int] = {}              # my warp slot -> age of the warp in it
        self.score: dict[int, tuple[float, int]] = {}  # my warp slot -> (score, cycle it was set)
        self.owner: dict[int, tuple[int, int]] = {}   # L1D line -> (slot, age) of my warp that allocated it
        self.hot_until = -1                           # cycle from which every score is back at the base
        self.vta_hit_total = 0
        self.issued_total = 0
        self._static: dict[int, Any] = {}
        # Caches that keep choose() from re-deriving per call what has not changed (the
        # choices are those of the plain rule: tests/policies/test_ccws_fast.py):
        self._version = 0                             # bumped whenever a score or the warp set changes
        self._allowed_key = (-1, -1)                  # (cycle, version) `_allowed` was computed for
        self._allowed: set[int] = set()
        self._next_load: dict[int, tuple[int, bool]] = {}  # slot -> (age, its next instruction is a load)

    # ------------------------------------------------------------ warps

    def on_warp_started(self, warp: WarpView, now: int) -> None:
        if warp.sched != self.index:
            return
        p = self.params
        self.vta[warp.slot] = VictimTags(p.vta_entries, p.vta_assoc, p.line_bytes)
        self.age_of[warp.slot] = warp.age
        self.score[warp.slot] = (float(p.base_score), now)
        self._version += 1

    def on_finish(self, slot: int) -> None:
        self.vta.pop(slot, None)
        self.age_of.pop(slot, None)
        self.score.pop(slot, None)
        self._next_load.pop(slot, None)
        self._version += 1

    def on_kernel_start(self, kernel: KernelInfo, now: int) -> None:
        self.owner.clear()  # the L1D is flushed between launches

    # ------------------------------------------------------------ lost-locality detection and scoring

    def on_l1d_access(self, warp: WarpView, line: int, outcome: str, evicted: int, now: int) -> None:
        if outcome != "miss":
            return
        if evicted >= 0:
            own = self.owner.pop(evicted, None)
            if own is not None and self.age_of.get(own[0]) == own[1]:
                self.vta[own[0]].insert(evicted)
        if warp.sched != self.index or warp.slot not in self.vta:
            return
        if self.vta[warp.slot].probe(line):
            self.vta_hit_total += 1
            self.counts.vta_hits += 1
            self._raise(warp.slot, now)
        self.owner[line] = (warp.slot, warp.age)

    def current_score(self, slot: int, now: int) -> float:
        s, t = self.score.get(slot, (float(self.params.base_score), now))
        return max(float(self.params.base_score), s - self.params.decay * (now - t))

    def _raise(self, slot: int, now: int) -> None:
        p = self.params
        cutoff = len(self.score) * p.base_score
        step = self.vta_hit_total / max(self.issued_total, 1) * p.k_throttle * cutoff
        new = self.current_score(slot, now) + step
        self.score[slot] = (new, now)
        self._version += 1
        self.hot_until = max(self.hot_until, now + int((new - p.base_score) // p.decay) + 1)

    def allowed(self, now: int) -> set[int] | None:
        """Slots of my warps that may issue loads now (None: all of them)."""
        if now >= self.hot_until:
            return None
        key = (now, self._version)
        if key == self._allowed_key:  # choose() and order() in one cycle, scores unchanged
            return self._allowed
        base = float(self.params.base_score)
        decay = self.params.decay
        cutoff = len(self.score) * self.params.base_score
        age_of = self.age_of
        # each score once (current_score's arithmetic); ages are unique, so the slot
        # never decides the order and the stack is the one sorted by (-score, age)
        ranked = [(-max(base, s - decay * (now - t)), age_of.get(slot, 0), slot) for slot, (s, t) in self.score.items()]
        ranked.sort()
        out: set[int] = set()
        below = 0.0
        for neg, _, slot in ranked:  # highest score at the bottom of the stack: a warp keeps the L1D while it starts below the cutoff
            if below >= cutoff:
                break
            out.add(slot)
            below += -neg
        self._allowed_key = key
        self._allowed = out
        return out

    # ------------------------------------------------------------ choice

    def _is_load(self, w: WarpView) -> bool:
        # a warp's next instruction changes only when it issues (on_issue drops the
        # entry); the age tells a new warp in the same slot from the one cached
        cached = self._next_load.get(w.slot)
        if cached is not None and cached[0] == w.age:
            return cached[1]
        static = self._static.get(w.kid)
        if static is None:
            static = self._static[w.kid] = self.port.kernel(w.kid).static
        pc = self.port.warp_pc(w.slot)
        si = static.instrs[pc] if pc >= 0 else None
        load = si is not None and si.kind == K_MEM and si.long_wait
        self._next_load[w.slot] = (w.age, load)
        return load

    def _permitted(self, ready: Sequence[WarpView], now: int) -> Sequence[WarpView]:
        if now >= self.hot_until:
            return ready
        is_load = self._is_load
        if not any(is_load(w) for w in ready):  # no load to hold back: the stack does not matter
            return ready
        ok = self.allowed(now)
        assert ok is not None  # hot (checked above): allowed() gives the stack's set
        return [w for w in ready if w.slot in ok or not is_load(w)]

    def choose(self, ready: Sequence[WarpView], now: int) -> WarpView | None:
        permitted = self._permitted(ready, now)
        if len(permitted) < len(ready):
            self.counts.load_blocks += 1
        return super().choose(permitted, now) if permitted else None

    def order(self, ready: Sequence[WarpView], now: int) -> Iterable[WarpView]:
        return super().order(self._permitted(ready, now), now)

    def on_issue(self, warp: WarpView, now: int, long_latency: bool) -> None:
        super().on_issue(warp, now, long_latency)
        self.issued_total += 1
        self._next_load.pop(warp.slot, None)
