"""The jobs of a validation against real-GPU measurements (`tlpsim validate --hardware`):
one host program in a fresh timing-mode device, returning plain data —

- `workload`: a built-in workload at a size, simulating only the launches whose
  ordinals the job lists (the others run functionally, so every launch still
  computes what the next one reads and the run is verified as `tlpsim run` does);
- `program`: a reference program (tlpsim.validate.programs) with an optional CTA
  cap per SM (`cap`) and shared-memory carveout preference (`carveout`, percent),
  for the occupancy sweeps;
- `micro`: a calibration microbenchmark (tlpsim.validate.micro) with the %clock
  probe plugged in, returning each launch's per-warp %clock intervals.

`execute` never raises for a failing program; a finished job's result can be
cached on disk by its key (`job_key`) so an interrupted validation resumes.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from pathlib import Path
from typing import Any

__all__ = ["execute", "job_key", "load_cached", "store_cached"]


def job_key(job: dict, config_json: str) -> str:
    """A digest of the job, the resolved configuration it runs under and the simulator's
    code (a cached result of an older model is never reused)."""
    from tlpsim.sweep.fingerprint import simulator_fingerprint

    text = json.dumps({k: v for k, v in job.items() if k not in ("cost", "cache_dir")}, sort_keys=True) + config_json
    text += simulator_fingerprint()
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def load_cached(cache_dir: str | None, key: str) -> dict | None:
    if not cache_dir:
        return None
    path = Path(cache_dir) / f"{key}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def store_cached(cache_dir: str | None, key: str, result: dict) -> None:
    if not cache_dir or result.get("error"):
        return
    path = Path(cache_dir)
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / f"{key}.json.tmp"
    tmp.write_text(json.dumps(result, default=str))
    tmp.replace(path / f"{key}.json")


def _config(job: dict) -> Any:
    from tlpsim.config.loader import load_config
    from tlpsim.validate.clock import PROBE_NAME

    over = dict(job.get("overrides", {}))
    if job.get("cap") is not None:
        over["gpu.max_ctas_per_sm"] = int(job["cap"])
    if job["kind"] == "micro":
        over["sm.execution_checker"] = PROBE_NAME
    cfg = load_config(job["preset"], over)
    if job.get("carveout") is not None and cfg.l1d.shared_carveouts_kb:   # (a fixed L1 has no carveout)
        over["l1d.carveout_preference"] = int(job["carveout"])
        cfg = load_config(job["preset"], over)
    return cfg


def execute(job: dict) -> dict:
    """Run one job (see the module doc)."""
    import tlpsim as cp
    from tlpsim.errors import TlpsimError

    out: dict = {"job": job, "error": None, "launches": [], "verified": None}
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        cfg = _config(job)
    except TlpsimError as exc:
        out["error"] = str(exc)
        return out
    try:
        with cp.Device(mode="timing", config=cfg, trace_cache=True) as dev:
            if job["kind"] == "workload":
                _workload(job, dev, out)
            elif job["kind"] == "program":
                _program(job, out)
            else:
                _micro(job, out)
    except Exception as exc:  # noqa: BLE001 - reported in the record, the other jobs go on
        out["error"] = f"{type(exc).__name__}: {exc}".strip()[:600]
        out["traceback"] = traceback.format_exc(limit=8)
    out["wall_s"] = time.perf_counter() - t0
    out["cpu_s"] = time.process_time() - c0   # what the job costs on an idle core (the machine may be shared)
    return out


def _launch_row(k: int, rec: Any) -> dict:
    return {"ordinal": k, "kernel": rec.kernel, "grid": list(rec.grid), "block": list(rec.block),
            "cycles": rec.stats.cycles if rec.stats is not None else None,
            "ctas_per_sm": rec.stats.ctas_per_sm_limit if rec.stats is not None else None,
            "limited_by": rec.stats.limited_by if rec.stats is not None else None,
            "warp_insts": rec.stats.warp_insts if rec.stats is not None else None,
            "timing_wall_s": rec.stats.wall_seconds if rec.stats is not None else None}


def _workload(job: dict, dev: Any, out: dict) -> None:
    from tlpsim.workloads.registry import get_workload

    chosen = set(job["simulate"])
    dev.timing_select = lambda ordinal, kernel: ordinal in chosen
    res = get_workload(job["name"]).execute(job["size"], seed=1)
    out["verified"] = res.verified
    out["checks"] = [f"{c.name}: {'ok' if c.ok else 'FAILED'} ({c.detail})" for c in res.checks]
    out["launches"] = [_launch_row(k, rec) for k, rec in enumerate(res.launches)]


def _program(job: dict, out: dict) -> None:
    from tlpsim.validate.programs import PROGRAMS
    from tlpsim.validate.reference import load_reference

    ref = load_reference(job["ref_dir"])
    r = PROGRAMS[job["name"]](ref.programs[job["name"]], ref.dir)
    out["verified"], out["output"] = r.verified, r.output
    out["launches"] = [_launch_row(k, rec) for k, rec in enumerate(r.records)]


def _micro(job: dict, out: dict) -> None:
    from tlpsim.validate.clock import clock_intervals
    from tlpsim.validate.micro import MICRO
    from tlpsim.validate.reference import load_reference

    ref = load_reference(job["ref_dir"])
    name = job["name"]
    r = MICRO[name].run(ref.micro[name], ref.micro_dir, None)
    out["verified"], out["output"] = r.verified, r.output
    for k, (rec, label, reads) in enumerate(zip(r.records, r.labels, r.clock)):
        row = _launch_row(k, rec)
        row["id"] = label
        row["clock"] = {str(w): c for w, c in clock_intervals(reads).items()}
        out["launches"].append(row)
