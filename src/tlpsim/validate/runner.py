"""`tlpsim validate` end to end: choose what to run, run it as jobs (in parallel
when asked), and assemble the comparison with GPGPU-Sim into one JSON-able record.

Selection (`only`): reference program names (`mm_naive`, ...), microbenchmark
programs (`dep_chain`, ...), single microbenchmark launches (`dep_chain.fma.32`,
`pointer_chase.32MB`, ...) or the groups `reference` and `micro`. A CTA sweep runs
for every selected reference program that has one (`sweeps=False` skips them);
the sweep's point at the natural limit is the program's own run whenever tlpsim's
limit does not exceed it (the cap would not bind).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tlpsim.errors import TlpsimError
from tlpsim.validate.compare import criteria, figure_rows, launch_rows, summary, sweep_rows
from tlpsim.validate.jobs import job_config, run_jobs
from tlpsim.validate.micro import MICRO, launch_ids
from tlpsim.validate.programs import PROGRAMS
from tlpsim.validate.reference import Reference, load_reference, sweep_points

__all__ = ["Options", "Selection", "TOOLCHAINS", "select", "validate", "validate_toolchains"]

TOOLCHAINS = ("cuda11", "cuda13")


@dataclass
class Options:
    config: str = "gtx480"
    only: Sequence[str] = ()
    overrides: dict[str, Any] = field(default_factory=dict)
    sweeps: bool = True
    workers: int = 1
    ref_dir: str | None = None
    time_limit: int = 0          # seconds per job (0: none)
    trace_cache: bool = True


@dataclass
class Selection:
    programs: list[str]                       # reference programs
    micro: dict[str, list[str]]               # microbenchmark -> launch ids
    partial: set[str]                         # microbenchmarks run with only some launches


def select(ref: Reference, only: Sequence[str]) -> Selection:
    """Resolve `--only` names; an unknown name is an error listing the valid ones."""
    progs = [n for n in PROGRAMS if n in ref.programs]
    ids = {m: launch_ids(ref.micro[m], MICRO[m]) for m in MICRO if m in ref.micro}
    if not only:
        return Selection(progs, ids, set())
    sel_p: list[str] = []
    sel_m: dict[str, list[str]] = {}
    for raw in only:
        name = raw.strip()
        if not name:
            continue
        if name == "reference":
            sel_p += progs
        elif name == "micro":
            for m, lids in ids.items():
                sel_m[m] = list(lids)
        elif name in progs:
            sel_p.append(name)
        elif name in ids:
            sel_m[name] = list(ids[name])
        else:
            owner = next((m for m, lids in ids.items() if name in lids), None)
            if owner is None:
                valid = progs + list(ids) + [lid for lids in ids.values() for lid in lids]
                raise TlpsimError(f"--only: unknown program or launch '{name}'; choose from reference, micro, "
                                  + ", ".join(valid))
            have = sel_m.setdefault(owner, [])
            if name not in have:
                have.append(name)
    sel_p = list(dict.fromkeys(sel_p))
    sel_m = {m: [lid for lid in ids[m] if lid in chosen] for m, chosen in sel_m.items()}  # the program's order
    partial = {m for m, lids in sel_m.items() if len(lids) < len(ids[m])}
    return Selection(sel_p, sel_m, partial)


def _cost(entry: dict) -> float:
    """A job's expected timing-model work, for running the longest first: the model's
    time goes per warp instruction and per L2 access, about equally (not per idle cycle)."""
    return float(entry.get("warp_insn", 0)) + float(entry.get("l2_accesses", 0))


def _job(opts: Options, ref: Reference, kind: str, name: str, cost: float, **extra: Any) -> dict:
    return {"kind": kind, "name": name, "preset": opts.config, "overrides": dict(opts.overrides),
            "ref_dir": str(ref.dir), "time_limit": opts.time_limit, "trace_cache": opts.trace_cache,
            "cost": cost, **extra}


def validate(opts: Options, echo: Callable[[str], None] = lambda s: None) -> dict:
    """Run the selection and return the validation record (see tlpsim.validate)."""
    from tlpsim.report.rundir import versions

    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]
    ref = load_reference(opts.ref_dir)
    sel = select(ref, opts.only)
    if not sel.programs and not sel.micro:
        raise TlpsimError("--only selected nothing to run")
    base = job_config(opts.config, opts.overrides, {"kind": "program"})  # a bad --config / --set fails here
    preset_toolchain = job_config(opts.config, {}, {"kind": "program"}).gpu.toolchain
    checker = base.sm.execution_checker.impl
    if sel.micro and checker != "none":
        raise TlpsimError("the microbenchmarks' %clock figures are measured by an execution-checker plug-in, but "
                          f"this configuration plugs in sm.execution_checker = {checker}; validate the reference "
                          "programs only (--only reference) or use a configuration without a checker")
    jobs = [_job(opts, ref, "program", n, _cost(ref.programs[n])) for n in sel.programs]
    for m, lids in sel.micro.items():
        jobs.append(_job(opts, ref, "micro", m, sum(_cost(la) for la in ref.micro[m]["launches"]),
                         only=lids if m in sel.partial else None))
    swept = [n for n in sel.programs if opts.sweeps and n in ref.sweeps]
    natural: dict[str, int] = {}
    for n in swept:
        entry = ref.sweeps[n]
        ns, _, _ = sweep_points(entry)
        natural[n] = int(entry.get("natural_cta_per_sm_limit", ns[-1]))
        by_n = {int(p["max_ctas_per_sm"]): p for p in entry["sweep"]}
        for cap in ns:
            if cap < natural[n]:
                jobs.append(_job(opts, ref, "sweep", n, _cost(by_n[cap]), cap=cap))
    results: dict[tuple[str, str, int | None], dict] = {}

    def on_done(res: dict) -> list[dict]:
        job = res["job"]
        label = job["name"] + (f" (CTAs/SM <= {job['cap']})" if job.get("cap") else "")
        state = (f"error: {res['error']}" if res.get("error")
                 else ("PASS" if res.get("verified") else "FAIL (output check)"))
        echo(f"  {job['kind']:7s} {label}: {state} ({res.get('wall_s', 0):.1f} s)")
        results[(job["kind"], job["name"], job.get("cap"))] = res
        if job["kind"] == "program" and job["name"] in natural:
            lim = (res.get("program") or {}).get("ctas_per_sm_limit")
            if lim is not None and lim > natural[job["name"]]:  # tlpsim allows more: the cap binds, run it
                nat = natural[job["name"]]
                by_n = {int(p["max_ctas_per_sm"]): p for p in ref.sweeps[job["name"]]["sweep"]}
                return [_job(opts, ref, "sweep", job["name"], _cost(by_n.get(nat, {})), cap=nat)]
        return []

    interrupted = False
    try:
        for _ in run_jobs(jobs, opts.workers, on_done):
            pass
    except KeyboardInterrupt:   # keep what finished: the record is written with the rest marked not run
        interrupted = True
        echo("  interrupted: writing the results of the finished runs")

    def got(kind: str, name: str) -> dict:
        return results.get((kind, name, None)) or {"job": {"kind": kind, "name": name}, "launches": [],
                                                   "error": "not run (interrupted)"}

    programs = {n: got("program", n) for n in sel.programs}
    micro = {m: got("micro", m) for m in sel.micro}
    points: dict[str, dict[int, dict]] = {}
    for n in swept:
        pts = {cap: res for (kind, name, cap), res in results.items() if kind == "sweep" and name == n}
        if natural[n] not in pts:
            pts[natural[n]] = programs[n]
        points[n] = pts
    rows = launch_rows(ref, programs, micro, sel.micro)
    figures = figure_rows(ref, micro, sel.micro)
    sweeps = sweep_rows(ref, points)
    summ = summary(rows, figures, sweeps)
    return {
        "tlpsim": {**versions(), "model_commit": _model_commit()},
        "options": {"config": opts.config, "only": list(opts.only), "overrides": dict(opts.overrides),
                    "toolchain": base.gpu.toolchain, "preset_toolchain": preset_toolchain,
                    "compile": base.gpu.compile_options,
                    "sweeps": opts.sweeps, "workers": opts.workers, "time_limit": opts.time_limit,
                    "trace_cache": opts.trace_cache},
        "reference": {"dir": str(ref.dir), "simulator": ref.notes.get("simulator", ""),
                      "config": ref.notes.get("config", "")},
        "wall_s": time.perf_counter() - t0,
        "loadavg_1min_start_end": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        "interrupted": interrupted,
        "programs": [_program_summary(n, programs[n], ref.programs[n]) for n in sel.programs]
                    + [_program_summary(m, micro[m], ref.micro[m]["run"], partial=m in sel.partial)
                       for m in sel.micro],
        "launches": rows, "figures": figures, "sweeps": sweeps, "summary": summ,
        "criteria": criteria(summ, rows, figures, sweeps),
        "jobs": [{"kind": k, "name": n, "cap": c, "wall_s": r.get("wall_s"), "error": r.get("error"),
                  "traceback": r.get("traceback")} for (k, n, c), r in results.items()],
    }


def validate_toolchains(opts: Options, echo: Callable[[str], None] = lambda s: None) -> dict:
    """Validate under every toolchain (TOOLCHAINS): the record of the preset's default
    toolchain, whose figures the targets are judged on, with the other toolchains'
    records under "other_toolchains" (the same selection and options but the CTA
    sweeps, which run under the default only: they are the slow part and judged there;
    `--toolchain cuda13` runs that toolchain's own)."""
    from dataclasses import replace

    if "gpu.toolchain" in opts.overrides:
        raise TlpsimError("validating under both toolchains sets gpu.toolchain itself; drop "
                          f"--set gpu.toolchain={opts.overrides['gpu.toolchain']}")
    default = job_config(opts.config, {}, {"kind": "program"}).gpu.toolchain
    order = [default] + [tc for tc in TOOLCHAINS if tc != default]
    records = []
    for tc in order:
        echo(f"toolchain {tc}" + (" (the preset's default)" if tc == default else ""))
        rec = validate(replace(opts, overrides={**opts.overrides, "gpu.toolchain": tc},
                               sweeps=opts.sweeps and tc == default), echo)
        records.append(rec)
        if rec["interrupted"]:
            break
    main = records[0]
    main["other_toolchains"] = [{k: r[k] for k in ("options", "wall_s", "interrupted", "programs", "launches",
                                                   "figures", "sweeps", "summary", "criteria", "jobs")}
                                for r in records[1:]]
    main["wall_s"] = sum(r["wall_s"] for r in records)
    main["interrupted"] = any(r["interrupted"] for r in records)
    return main


def _program_summary(name: str, res: dict, ref_run: dict, partial: bool = False) -> dict:
    m = res.get("program") or {}
    return {"program": name, "verified": res.get("verified"), "error": res.get("error"), "output": res.get("output"),
            "reference_output": ref_run.get("program_output", ""), "launches": len(res.get("launches") or []),
            "partial": partial, "wall_s": res.get("wall_s"), "functional_wall_s": m.get("functional_wall_s"),
            "timing_wall_s": m.get("timing_wall_s"), "gpgpusim_wall_s": ref_run.get("wall_s"),
            "peak_rss_mb": res.get("peak_rss_mb")}


def _model_commit() -> str | None:
    """The last commit that changed the timing model or the configs (in a source checkout)."""
    import subprocess
    from pathlib import Path

    import tlpsim

    src = Path(tlpsim.__file__).resolve().parents[2]
    if not (src / ".git").exists():
        return None
    try:
        proc = subprocess.run(["git", "-C", str(src), "log", "-1", "--format=%h (%cs)", "--", "src/tlpsim/timing",
                               "src/tlpsim/config"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None
