"""`tlpsim validate --sampling`: every built-in workload on gtx480 and maxwell_gpuduet,
and the LCS/BCS experiment's stand-ins in its configurations, sampled and in full
detail, compared run by run (cycle error, interval coverage, speed-ups).

The full validation takes many CPU hours, so it is resumable: every finished run is
stored in a results database (`tlpsim.sweep.store`, sweep "validate-sampling") under
its run key, which includes the simulator's source fingerprint, and a rerun simulates
only the runs not there yet (all of them once the model changed). `--workloads`
selects a subset; the page says how much of the plan it covers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tlpsim.errors import TlpsimError
from tlpsim.sampling.spec import SamplingSpec

SWEEP = "validate-sampling"
#: the LCS/BCS experiment's configurations checked (on its own preset, `_lcs_bcs_preset`)
LCS_BCS_CONFIGS = ("GTO", "LCS", "BCS+SCA", "DYNCTA", "CCWS")
PRESETS = ("gtx480", "maxwell_gpuduet")


@dataclass(frozen=True)
class Point:
    """One configuration of one workload: checked sampled against full detail."""

    workload: str
    preset: str
    config: str          # "" for a preset's own configuration, else an LCS/BCS configuration name
    overrides: tuple     # sorted (key, value) pairs

    @property
    def label(self) -> str:
        return f"{self.workload} {self.preset}" + (f" {self.config}" if self.config else "")


def plan(workloads: Iterable[str] | None = None, configs: Iterable[str] | None = None,
         size: str = "study") -> list[Point]:
    """The validation's points: every workload on each of PRESETS, and the LCS/BCS
    configurations where the lcs_bcs experiment runs them, on its stand-ins (BCS+SCA on
    those with 2D CTAs only, §4.2), so that every full-detail run of those points is
    the experiment's own run; `configs` keeps only these presets / configuration names."""
    from tlpsim.experiments.lcs_bcs.suite import BENCHMARKS, config_overrides
    from tlpsim.workloads.registry import load_workloads

    preset_lcs = _lcs_bcs_preset()
    known = load_workloads()
    names = list(workloads) if workloads else sorted(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise TlpsimError(f"--workloads: unknown workload(s) {', '.join(unknown)} (see `tlpsim workloads`)")
    choices = list(PRESETS) + list(LCS_BCS_CONFIGS)
    keep = list(configs) if configs else choices
    bad = [c for c in keep if c not in choices]
    if bad:
        raise TlpsimError(f"--configs: unknown {', '.join(bad)} (choose from {', '.join(choices)})")
    lcs = [c for c in LCS_BCS_CONFIGS if c in keep]
    two_d = _stand_ins_2d([n for n in names if n in {b.workload for b in BENCHMARKS}], size) if lcs else {}
    points = []
    for wl in names:
        for preset in PRESETS:
            if preset in keep:
                points.append(Point(wl, preset, "", ()))
        if wl not in two_d:
            continue
        for cfg in lcs:
            if cfg == "BCS+SCA" and not two_d[wl]:
                continue
            ov = config_overrides(cfg, two_d=two_d[wl])
            points.append(Point(wl, preset_lcs, cfg, tuple(sorted((k, _hashable(v)) for k, v in ov.items()))))
    return points


def _lcs_bcs_preset() -> str:
    """The preset the lcs_bcs experiment runs on: its points must be keyed as its runs are."""
    from tlpsim.experiments.lcs_bcs import LcsBcs

    return LcsBcs.preset


def _stand_ins_2d(names: list[str], size: str) -> dict[str, bool]:
    """Per stand-in, whether some kernel has 2D (or 3D) CTAs, from the workload
    catalogue's shape-only pass at `size` (nothing is simulated)."""
    from tlpsim.policies.cta.bcs import is_2d
    from tlpsim.workloads.catalog import catalog

    out = dict.fromkeys(names, False)
    for r in catalog(_lcs_bcs_preset(), names, size) if names else []:
        out[r.workload] = out[r.workload] or is_2d(tuple(r.block))
    return out


def _hashable(v):
    return tuple(sorted(v.items())) if isinstance(v, dict) else v


def _overrides(p: Point) -> dict:
    return {k: (dict(v) if isinstance(v, tuple) else v) for k, v in p.overrides}


def run_params(p: Point, size: str, spec: SamplingSpec | None):
    """The run of a point, keyed (as experiments key theirs) by the simulator's source
    fingerprint: a validation spanning sessions never pairs a run of one model with
    a run of another, and its full-detail runs of the LCS/BCS configurations are the
    `lcs_bcs` experiment's own runs (the same key) when both share a database."""
    from tlpsim.sweep.fingerprint import simulator_fingerprint
    from tlpsim.sweep.job import RunParams

    return RunParams(p.workload, size, p.preset, _overrides(p), 1, "timing", simulator=simulator_fingerprint(),
                     sampling=spec.to_dict() if spec is not None else None)


#: which runs of each point `run_validation` simulates
RUN_KINDS = ("both", "full", "sampled")


def run_validation(db_path: str, size: str, spec: SamplingSpec, workloads: Iterable[str] | None = None,
                   echo: Callable[[str], None] = print, limit_s: float | None = None,
                   configs: Iterable[str] | None = None, export: str | None = None,
                   runs: str = "both") -> list[dict]:
    """Simulate the points' runs not yet in the database, each with the trace cache
    off (both runs of a point execute their functional pass and replay in-memory or
    spilled traces alike, so their wall times compare); stop starting new runs after
    `limit_s` seconds. `runs` ("both", "full" or "sampled") picks which run of each
    point to simulate: the full-detail runs, most of the time, do not depend on the
    sampler (tlpsim.sweep.fingerprint), so they can go first while it changes.
    Returns the compared pairs."""
    from tlpsim.sweep.job import run_job
    from tlpsim.sweep.store import ResultsDB

    if runs not in RUN_KINDS:
        raise TlpsimError(f"--runs must be one of {', '.join(RUN_KINDS)}, not {runs!r}")
    points = plan(workloads, configs, size)
    specs = {"both": (spec, None), "full": (None,), "sampled": (spec,)}[runs]
    t0 = time.perf_counter()
    with ResultsDB(db_path) as db:
        if export:  # each finished run also kept as a file (tlpsim.sweep.archive)
            from tlpsim.sweep.archive import attach_export

            attach_export(db, export)
        have = db.finished_keys()
        todo = [(p, s) for p in points for s in specs if run_params(p, size, s).key() not in have]
        which = "" if runs == "both" else f" ({runs} runs only)"
        echo(f"sampling validation ({size}, {spec.label()}): {len(points)} points, {2 * len(points)} runs, "
             f"{len(todo)} to simulate{which}; results in {db_path}")
        for k, (p, s) in enumerate(todo, 1):
            if limit_s is not None and time.perf_counter() - t0 > limit_s:
                echo(f"time limit reached: {len(todo) - k + 1} runs left for the next session")
                break
            rp = run_params(p, size, s)
            if _stored(db, rp.key()):
                echo(f"[{k}/{len(todo)}] {p.label} {'sampled' if s is not None else 'full'}: stored meanwhile "
                     "(by another process sharing the database)")
                continue
            res = run_job(rp.to_dict(), device_options={"trace_cache": False})
            db.put(SWEEP, res)
            what = "sampled" if s is not None else "full"
            echo(f"[{k}/{len(todo)}] {p.label} {what}: {res['status']} ({res['finished'] - res['started']:.0f} s)"
                 + (f" {res['error'].splitlines()[0]}" if res.get("error") else ""))
        return compare(db, plan(size=size), size, spec)  # every stored point of the whole plan, not just this subset


def _stored(db, key: str) -> bool:
    """Whether the run is in the database now (an experiment sharing it may have stored it)."""
    return db.conn.execute("SELECT 1 FROM runs WHERE key=?", (key,)).fetchone() is not None


def compare(db, points: list[Point], size: str, spec: SamplingSpec) -> list[dict]:
    """One row per point whose two runs are both stored (done or failed)."""
    keys = {}
    for p in points:
        keys[p] = (run_params(p, size, spec).key(), run_params(p, size, None).key())
    stored = {k: (st, err, rec) for k, st, err, rec in db.records([k for pair in keys.values() for k in pair])}
    rows = []
    for p, (ks, kf) in keys.items():
        if ks not in stored or kf not in stored:
            continue
        rows.append(pair_row(p, stored[ks], stored[kf]))
    return rows


def _timing_wall(rec: dict) -> float:
    return sum(float(s.get("wall_seconds", 0.0)) for s in rec.get("stats", []))


def least_detail(rec: dict) -> float:
    """The smallest share of warp instructions the sampling rules let a sampled run
    simulate in detail, given how it sampled each launch: none of a launch projected
    from its kernel group; of a launch of n CTAs in waves of W (the baseline's CTAs per
    SM x SMs), the warm-up and K stable waves, the wave resident when the rule holds
    at its first chance, and the tail (the last partial wave, or the last full one) --
    all of it when n is under (warm-up + K + 2) waves, as the sampler rules. CTAs are
    taken as equally long; the timing phase cannot gain more than its inverse."""
    from tlpsim.sampling.rule import least_detail_share

    spec = (rec.get("sampling") or {}).get("spec") or {}
    warmup, window = int(spec.get("warmup_waves", 1)), int(spec.get("window", 3))
    total = least = 0
    for st, la in zip(rec.get("stats", []), rec.get("launches", [])):
        insts = int(st.get("warp_insts", 0))
        total += insts
        if (st.get("sampling") or {}).get("method") == "kernel":
            continue
        grid = la.get("grid") or [1, 1, 1]
        w = int(st.get("ctas_per_sm_limit", 0)) * len(st.get("per_sm", []))
        least += insts * least_detail_share(grid[0] * grid[1] * grid[2], w, warmup, window)
    return least / total if total else 1.0


def pair_row(p: Point, sampled: tuple, full: tuple) -> dict:
    """The comparison of one point: cycle error, coverage, speed-ups."""
    row = {"workload": p.workload, "preset": p.preset, "config": p.config or "-", "label": p.label}
    (s_status, s_err, s_rec), (f_status, f_err, f_rec) = sampled, full
    if s_rec is None or f_rec is None or s_status != "done" or f_status != "done":
        row["error"] = (s_err or f_err or "run failed").splitlines()[0]
        return row
    full_cycles = sum(int(s["cycles"]) for s in f_rec["stats"])
    summ = s_rec.get("sampling") or {}
    cycles = int(summ.get("cycles", sum(int(s["cycles"]) for s in s_rec["stats"])))
    lo, hi = summ.get("interval", [cycles, cycles])
    t_full, t_samp = _timing_wall(f_rec), _timing_wall(s_rec)
    # both runs execute the functional pass in full (trace cache off): its time is the
    # rest of the run's wall time; the end-to-end figures use the full run's
    functional = max(float(f_rec["wall_seconds"]) - t_full, 0.0)
    row.update({
        "full_cycles": full_cycles, "sampled_cycles": cycles, "low": int(lo), "high": int(hi),
        "error_pct": (cycles - full_cycles) / full_cycles * 100 if full_cycles else 0.0,
        "covered": int(lo) <= full_cycles <= int(hi),
        "detail_fraction": float(summ.get("detail_fraction", 1.0)),
        "least_detail": least_detail(s_rec),
        "sampled_launches": summ.get("launches", {}),
        "timing_full_s": t_full, "timing_sampled_s": t_samp,
        "timing_speedup": t_full / t_samp if t_samp > 0 else float("inf"),
        "functional_s": functional,
        "e2e_full_s": float(f_rec["wall_seconds"]), "e2e_sampled_s": float(s_rec["wall_seconds"]),
        "e2e_speedup": float(f_rec["wall_seconds"]) / float(s_rec["wall_seconds"]),
        "functional_share": functional / float(f_rec["wall_seconds"]) if f_rec["wall_seconds"] else 0.0,
        "verified_same": bool(s_rec.get("verified")) == bool(f_rec.get("verified")),
    })
    return row
