"""CTA-wave sampling inside a launch (TBPoint / Principal Kernel Analysis style).

The GPU calls `cta_done` after every CTA retirement. Every W retirements (W = the
CTAs of one full-occupancy wave: n_sms x the baseline's CTAs per SM) close a wave;
its IPC is the warp instructions the SMs issued over its core cycles. Once the last
K waves after warm-up (and after every "settles" plug-in has reported its last
decision) are stable (`rule.stable_window`: their IPCs, the tracked rates, and the
L2's share of dirty lines), the dispatcher skips the middle: the
launch's next CTA jumps to the start of the tail, the skipped CTAs count as done,
and the CTAs still resident and the tail (the last, partial wave, or the last full
one) run in detail; so does every CTA from the first one whose work (warp
instructions, global line accesses, from the trace) lies outside the range of the
stable span's CTAs (`first_unlike`). The skipped CTAs' instructions come exactly from the trace; their
cycles and every additive counter are projected at the rate of the stable span: the
longest run of waves ending at the decision that the rule accepts as a whole
(`rule.stable_span`; at least K: a wave's IPC swings with the CTAs that happen to
retire in it, so more waves estimate the rate better, but waves of an earlier
transient would bias it).

The functional pass has already traced the skipped CTAs (the decision is made
during the timing replay, after the functional pass): their trace is not replayed,
only counted, and their global accesses warm the L2 (`warm_l2`). Sampling never
touches device memory, so functional results are those of a full run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tlpsim.sampling import safety
from tlpsim.sampling.rule import Wave, project_waves, stable_span
from tlpsim.sampling.spec import SamplingSpec
from tlpsim.timing.builder import sm_limits
from tlpsim.timing.occupancy import occupancy
from tlpsim.timing.summary import launch_stats
from tlpsim.timing.warp import MemRows
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE
from tlpsim.trace.format import SPACE_CODES, _popcount


@dataclass
class _LaunchState:
    wave_ctas: int                    # W
    why_not: str = ""                 # set: this launch runs in full detail, for this reason
    decided: bool = False
    # every boundary since counting started: (now, issued, tracked, snapshot, L2 dirty share); the snapshots
    # of boundaries before the longest stable span are dropped (None) to bound memory
    marks: list = field(default_factory=list)
    waves: list = field(default_factory=list)   # Wave of each boundary pair since the counting restarted
    skipped_ctas: int = 0
    skipped_insts: int = 0
    skipped_threads: int = 0
    window: tuple = ()
    window_delta: dict | None = None
    first_skipped: int = -1
    decided_at_wave: int = -1
    ipcs: list = field(default_factory=list)    # every completed wave's IPC (the record's diagnostics)
    warmed_lines: int = 0             # the skipped CTAs' line accesses applied to the L2 (functional warming)
    ended_at: int = -1                # the CTA unlike the stable span's that ended the skip (-1: the tail did)


def _sub_scaled(base: Any, delta: Any, scale: float) -> Any:
    """`base` - scale x `delta`, leaf by leaf (numbers; dicts and lists recursively)."""
    if isinstance(delta, dict):
        b = base if isinstance(base, dict) else {}
        out = dict(b)
        for k, v in delta.items():
            out[k] = _sub_scaled(b.get(k, 0), v, scale)
        return out
    if isinstance(delta, list):
        b = base if isinstance(base, list) else []
        return [_sub_scaled(b[i] if i < len(b) else 0, v, scale) for i, v in enumerate(delta)]
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        return base
    if isinstance(base, bool) or not isinstance(base, (int, float)):
        base = 0
    if isinstance(base, int) and isinstance(delta, int):
        return base - round(delta * scale)
    return base - delta * scale


def _delta(after: Any, before: Any) -> Any:
    if isinstance(after, dict):
        b = before if isinstance(before, dict) else {}
        return {k: _delta(v, b.get(k, 0)) for k, v in after.items()}
    if isinstance(after, list):
        b = before if isinstance(before, list) else []
        return [_delta(v, b[i] if i < len(b) else 0) for i, v in enumerate(after)]
    if isinstance(after, bool) or not isinstance(after, (int, float)):
        return 0
    return after - (before if isinstance(before, (int, float)) and not isinstance(before, bool) else 0)


def _piece_rows(trace: Any, w0: int, w1: int):
    """(piece, first row, end row) of each piece of the trace holding warps [w0, w1)."""
    if w1 <= w0:
        return
    for k in range(int(trace.piece_index(w0)), int(trace.piece_index(w1 - 1)) + 1):
        p = trace.piece(k)
        first = int(getattr(p, "first_warp", 0))
        n = len(p.warp_offsets) - 1
        a, b = max(w0, first) - first, min(w1, first + n) - first
        if b > a:
            yield p, int(p.warp_offsets[a]), int(p.warp_offsets[b])


def trace_counts(trace: Any, w0: int, w1: int) -> tuple[int, int]:
    """(warp instructions, thread instructions) of the trace's warps [w0, w1), piece by piece."""
    insts = threads = 0
    for p, r0, r1 in _piece_rows(trace, w0, w1):
        insts += r1 - r0
        threads += int(_popcount(p.executed[r0:r1]).sum())
    return insts, threads


_L2_SPACES = np.array([SPACE_CODES["global"], SPACE_CODES["generic"]])
_KINDS = (READ, WRITE, ATOMIC)


def _global_rows(p: Any, r0: int, r1: int) -> tuple[np.ndarray, np.ndarray, MemRows, np.ndarray, np.ndarray]:
    """The trace rows [r0, r1) of piece `p` that access global memory: their positions
    from r0, their memory rows, the LD/ST unit's line table of the piece (`MemRows`),
    its rows' first-line offsets, and each selected row's line accesses."""
    mem = np.asarray(p.mem[r0:r1]).astype(np.int64)
    at = np.flatnonzero(mem >= 0)
    at = at[np.isin(np.asarray(p.mem_space)[mem[at]], _L2_SPACES)]
    rows = mem[at]
    table = MemRows(p)
    offs = np.asarray(table.line_offsets, dtype=np.int64)
    return at, rows, table, offs, offs[rows + 1] - offs[rows]


def trace_accesses(trace: Any, w0: int, w1: int, is_store: np.ndarray, is_atomic: np.ndarray):
    """The global-memory line accesses of the trace's warps [w0, w1), warp by warp in
    trace order: (128-byte line addresses, sector masks, kinds READ/WRITE/ATOMIC), as
    lists, read from the LD/ST unit's own table of each piece (`MemRows`: what a full run
    sends) (`is_store`, `is_atomic`: per static instruction). Local, shared and constant
    accesses never reach the L2 as such and are left out."""
    lines, masks, kinds = [], [], []
    for p, r0, r1 in _piece_rows(trace, w0, w1):
        at, rows, table, offs, counts = _global_rows(p, r0, r1)
        if not rows.size:
            continue
        pcs = np.asarray(p.pc[r0:r1])[at].astype(np.int64)
        # each kept row's lines, in row order: offs[row] + 0 .. counts - 1
        idx = np.repeat(offs[rows] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts) + np.arange(
            int(counts.sum()))
        lines.append(np.asarray(table.line_addr, dtype=np.int64)[idx])
        masks.append(np.asarray(table.line_mask, dtype=np.int64)[idx])
        kind = np.where(is_atomic[pcs], 2, np.where(is_store[pcs], 1, 0))    # an index into _KINDS
        kinds.append(np.repeat(kind, counts))
    if not lines:
        return [], [], []
    return (np.concatenate(lines).tolist(), np.concatenate(masks).tolist(),
            [_KINDS[k] for k in np.concatenate(kinds).tolist()])


def cta_work(trace: Any, c0: int, c1: int) -> tuple[np.ndarray, np.ndarray]:
    """Per CTA of [c0, c1): its warp instructions and its global-memory line accesses
    (the line accesses a full run sends to the L2 or through the L1), from the trace."""
    wpc = max(int(trace.warps_per_cta), 1)
    w0, w1 = c0 * wpc, c1 * wpc
    insts = np.zeros(max(w1 - w0, 0), dtype=np.int64)
    lines = np.zeros_like(insts)
    for p, r0, r1 in _piece_rows(trace, w0, w1):
        first = int(getattr(p, "first_warp", 0))
        offs = np.asarray(p.warp_offsets, dtype=np.int64)
        a = np.searchsorted(offs, r0, side="right") - 1          # the piece's local warps [a, b)
        b = np.searchsorted(offs, r1, side="left")
        at = first + a - w0
        insts[at:at + (b - a)] = np.diff(offs[a:b + 1])
        rows_at, _, _, _, row_lines = _global_rows(p, r0, r1)
        counts = np.zeros(r1 - r0, dtype=np.int64)
        counts[rows_at] = row_lines
        cum = np.concatenate(([0], np.cumsum(counts)))
        lines[at:at + (b - a)] = cum[offs[a + 1:b + 1] - r0] - cum[offs[a:b] - r0]
    return insts.reshape(-1, wpc).sum(axis=1), lines.reshape(-1, wpc).sum(axis=1)


def first_unlike(window: tuple[np.ndarray, np.ndarray], after: tuple[np.ndarray, np.ndarray],
                 tolerance: float) -> int:
    """The index of the first CTA in `after` whose warp instructions or line accesses lie
    outside the range the `window` CTAs span, widened by `tolerance`; len(after's) if
    none. The projection assumes the skipped CTAs do the stable span's kind of work: a
    CTA doing more or less of it (a grid-stride loop's last, shorter round; a boundary
    tile; another phase of the input) ends the skip, and it runs in detail (TBPoint's
    homogeneous regions, by the per-CTA counts the functional pass already has)."""
    n = len(after[0])
    if not len(window[0]):
        return n
    bad = np.zeros(n, dtype=bool)
    for w, a in zip(window, after):
        lo, hi = float(w.min()) * (1 - tolerance), float(w.max()) * (1 + tolerance)
        bad |= (a < lo) | (a > hi)
    hit = np.flatnonzero(bad)
    return int(hit[0]) if hit.size else n


def l2_dirty_share(mem: Any) -> float:
    """The share of memory system `mem`'s L2 lines that are dirty (read from the slices'
    tag state): what decides how much of the L2's later allocation is written back.
    (Through the caches' public read-only interface; it belongs on MemorySystem, and
    moves there with the next change to the timing model, which re-keys every full
    run anyway.)"""
    dirty = capacity = 0
    for sl in mem.slices:
        cache = sl.cache
        capacity += cache.n_sets * cache.assoc
        for s in range(cache.n_sets):
            for addr in cache.set_lines(s):
                st = cache.state(addr)
                if st is not None and st[1]:
                    dirty += 1
    return dirty / capacity if capacity else 0.0


def warm_l2(mem: Any, static: Any, trace: Any, w0: int, w1: int) -> int:
    """Functional warming: apply the global line accesses of the trace's warps [w0, w1)
    (instructions `static`, a StaticKernel) to the L2 of memory system `mem`, as a full
    run would have left it; returns the line accesses applied."""
    is_store = np.array([si.is_store for si in static.instrs], dtype=bool)
    is_atomic = np.array([si.is_atomic for si in static.instrs], dtype=bool)
    lines, masks, kinds = trace_accesses(trace, w0, w1, is_store, is_atomic)
    mem.warm(lines, masks, kinds)
    return len(lines)


class WaveSampler:
    """Wave sampling of one GPU's launches (`GPU.sampler`)."""

    def __init__(self, spec: SamplingSpec, gpu: Any) -> None:
        self.spec = spec
        self.gpu = gpu
        self.state: dict[int, _LaunchState] = {}   # kid -> its state
        self.records: dict[int, dict] = {}         # kid -> its sampling record (after launch_stats)

    # ------------------------------------------------------------ the GPU's hooks

    def batch_started(self, runs: list, start_cycle: int) -> None:
        gpu = self.gpu
        plugins = gpu._plugin_instances()
        blockers = safety.blockers(plugins)
        for r in runs:
            if r.kid in self.state:
                continue
            occ = occupancy(sm_limits(gpu.cfg), r.kres.regs_per_thread, r.kres.smem_per_cta,
                            r.kres.threads_per_cta, gpu.cfg.gpu.max_ctas_per_sm)
            st = self.state[r.kid] = _LaunchState(max(occ.ctas, 1) * len(gpu.sms))
            if len(runs) > 1:
                st.why_not = "launches run concurrently (waves of one launch are not separable)"
            elif r.gates is not None:
                st.why_not = "CTAs read other CTAs' writes (cross-CTA dependences)"
            elif blockers:
                st.why_not = "plug-in " + ", ".join(blockers) + " declares non-stationary behaviour"
            elif r.n_ctas < (self.spec.warmup_waves + self.spec.window + 2) * st.wave_ctas:
                st.why_not = (f"{r.n_ctas} CTAs are too few waves of {st.wave_ctas} to sample "
                              f"(needs {self.spec.warmup_waves} warm-up + {self.spec.window} stable + 2)")
            else:
                st.marks.append(self._mark(r, start_cycle))

    def cta_done(self, run: Any, now: int) -> None:
        st = self.state.get(run.kid)
        if st is None or st.why_not or st.decided or run.ctas_done % st.wave_ctas:
            return
        wave = run.ctas_done // st.wave_ctas - 1        # the wave that just ended
        mark = self._mark(run, now)
        prev_now, prev_issued = st.marks[-1][0], st.marks[-1][1]
        st.ipcs.append(round((mark[1] - prev_issued) / (now - prev_now), 4) if now > prev_now else 0.0)
        if wave < self.spec.warmup_waves or not self._settled(run.kid):
            st.marks, st.waves = [mark], []          # stable waves count from here
            return
        prev = st.marks[-1]
        tracked = tuple((k, mark[2][k] - prev[2].get(k, 0)) for k in sorted(mark[2]))
        st.waves.append(Wave(mark[1] - prev[1], mark[0] - prev[0], tracked, (prev[4], mark[4])))
        st.marks.append(mark)                          # marks[j] opens waves[j]; marks[-1] is now
        # a span can only start where a snapshot is kept: the longest span the rule accepts
        # now (or the last K waves) and later; older snapshots are dropped
        span = stable_span(st.waves, self.spec.window, self.spec.tolerance)
        keep_from = len(st.waves) - max(span, min(self.spec.window, len(st.waves)))
        for j in range(keep_from):
            if st.marks[j][3] is not None:
                st.marks[j] = (*st.marks[j][:3], None, st.marks[j][4])
        if span:
            # (a span the rule accepts only now may reach back past a dropped snapshot)
            while st.marks[len(st.waves) - span][3] is None:
                span -= 1
            self._skip(run, st, wave, span)

    def launch_stats(self, run: Any, base: dict, start_cycle: int, wall: float) -> Any:
        """The launch's statistics: measured, plus the skipped waves' counters and cycles."""
        st = self.state.pop(run.kid, None)
        if st is None or not st.skipped_ctas:
            stats = launch_stats(self.gpu, run, base, start_cycle, wall)
            self.records[run.kid] = self._detail_record(run, st, stats.cycles)
            return stats
        insts = sum(w.insts for w in st.window)
        proj = project_waves(st.window, st.skipped_insts, self.spec.tolerance, self.spec.confidence)
        adjusted = _sub_scaled(base, st.window_delta, st.skipped_insts / insts)
        stats = launch_stats(self.gpu, run, adjusted, start_cycle, wall, extra_cycles=proj.cycles)
        measured = stats.cycles - proj.cycles
        detail = run.warp_insts - st.skipped_insts
        self.records[run.kid] = {
            "method": "waves", "cycles": stats.cycles, "interval": [measured + proj.low, measured + proj.high],
            "confidence": self.spec.confidence, "measured_cycles": measured, "projected_cycles": proj.cycles,
            "warp_insts": run.warp_insts, "detail_warp_insts": detail,
            "detail_fraction": detail / run.warp_insts if run.warp_insts else 1.0,
            "waves": {"ctas_per_wave": st.wave_ctas, "n_ctas": run.n_ctas, "skipped_ctas": st.skipped_ctas,
                      "first_skipped_cta": st.first_skipped, "stable_after_wave": st.decided_at_wave,
                      "projection_waves": len(st.window), "wave_ipc": st.ipcs,
                      "warmed_l2_lines": st.warmed_lines, "skip_ended_by_cta": st.ended_at},
        }
        return stats

    # ------------------------------------------------------------ inside

    def _settled(self, kid: int) -> bool:
        return all((id(obj), kid) in self.gpu.settled for _, obj in safety.settling(self.gpu._plugin_instances()))

    def _settle(self) -> None:
        """Account the cycles sleeping components skipped, up to where a dense run has
        ticked them at this point of the current time step (those before the ticking
        component in this step's sweep have ticked this cycle, those after it not yet),
        so a snapshot taken in the middle of a step reads what a dense run reads
        (a dense run needs none of it: every component is up to date there):
        skip-ahead == dense for sampled runs too."""
        eng = self.gpu.engine
        t, k = eng.now, eng._ticking
        for j, comp in enumerate(eng.components):
            p = comp.domain.period_fs
            # outside a sweep (a batch starting) nothing has ticked at this step yet
            target = t // p if (t % p or 0 <= k and j <= k) else t // p - 1
            eng.account_to(comp, target)

    def _mark(self, run: Any, now: int) -> tuple:
        gpu = self.gpu
        self._settle()
        issued = sum(sm.stats.warp_insts for sm in gpu.sms)
        counts = gpu.plugin_counts()
        tracked = {f"{k}.{n}": counts.get(k, {}).get(n, 0) for k, n in safety.tracked(gpu._plugin_instances())}
        snap = {"sm": [sm.collect(now) for sm in gpu.sms], "mem": gpu.mem.counters(),
                "sm_parts": [sm.part_counters() for sm in gpu.sms], "plugins": counts,
                "energy_events": dict(gpu.energy_events)}
        return (now, issued, tracked, snap, l2_dirty_share(gpu.mem))

    def _skip(self, run: Any, st: _LaunchState, wave: int, span: int) -> None:
        st.decided = True
        tail = run.n_ctas % st.wave_ctas or st.wave_ctas
        first, stop = run.next_cta, run.n_ctas - tail
        # the skip ends at the first CTA unlike the span's (the span's CTAs: those
        # dispatched over its waves, just before the first skipped one)
        if stop > first:
            ref = cta_work(run.trace, max(first - span * st.wave_ctas, 0), first)
            unlike = first + first_unlike(ref, cta_work(run.trace, first, stop), self.spec.tolerance)
            if unlike < stop:
                st.ended_at = unlike
                stop = unlike
        if (stop - first) % 2:   # keep CTA pairs (BCS dispatch groups) whole
            stop -= 1
        if stop - first < st.wave_ctas:
            st.why_not = ("stable only when less than a wave was left before the tail" if st.ended_at < 0 else
                          f"CTA {st.ended_at}, less than a wave after the stable span, does other work than it")
            return
        wpc = run.trace.warps_per_cta
        st.skipped_insts, st.skipped_threads = trace_counts(run.trace, first * wpc, stop * wpc)
        st.skipped_ctas, st.first_skipped, st.decided_at_wave = stop - first, first, wave
        st.window = tuple(st.waves[-span:])            # the stable span: the projection's sample
        start = st.marks[len(st.waves) - span][3]
        st.window_delta = {k: _delta(st.marks[-1][3][k], start[k]) for k in st.marks[-1][3]}
        # the plug-ins' "max" levels are peaks, not rates: never projected
        st.window_delta["plugins"] = {key: {n: v for n, v in vals.items()
                                            if self.gpu.plugin_aggs().get(key, {}).get(n, "sum") != "max"}
                                      for key, vals in st.window_delta["plugins"].items()}
        st.marks = []
        # functional warming: the L2 holds what the skipped CTAs' accesses would have left
        # there, so the tail and later launches meet the caches a full run meets (lines the
        # skipped CTAs never touch otherwise stay from before the skip)
        st.warmed_lines = warm_l2(self.gpu.mem, run.static, run.trace, first * wpc, stop * wpc)
        run.next_cta = stop
        run.ctas_done += st.skipped_ctas
        run.warp_insts += st.skipped_insts       # exact, from the trace
        run.thread_insts += st.skipped_threads
        self.gpu.redispatch()

    def _detail_record(self, run: Any, st: _LaunchState | None, cycles: int) -> dict:
        why = "" if st is None else (st.why_not or "per-wave IPC never stable within the tolerance")
        extra = {"wave_ipc": st.ipcs} if st is not None and st.ipcs else {}
        return {**extra, "method": "detail", "cycles": cycles, "interval": [cycles, cycles], "confidence": self.spec.confidence,
                "warp_insts": run.warp_insts, "detail_warp_insts": run.warp_insts, "detail_fraction": 1.0,
                "reason": why}
