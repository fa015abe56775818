"""One simulation run: its parameters (`RunParams`) and `execute`, the single code
path shared by `tlpsim run` and every sweep worker, so a sweep's run equals a
`tlpsim run` with the same parameters."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from tlpsim.errors import TlpsimError

# Device keeps a class-level stack of current devices, so two runs in one process
# (a threaded Dask worker) must not overlap.
_RUN_LOCK = threading.Lock()


def canonical(value: Any) -> str:
    """Stable JSON text (sorted keys, no spaces) used for keys and DB columns."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@dataclass
class RunParams:
    """What determines a run: workload, input size and seed, GPU preset and the
    dotted-key config overrides (policies are overrides of their config keys)."""

    workload: str
    size: str = "small"
    preset: str = "gtx480"
    overrides: dict[str, Any] = field(default_factory=dict)
    seed: int = 1
    mode: str = "timing"
    code: str = ""   # the simulator's code fingerprint when runs are keyed by it (experiments); "" = not

    def to_dict(self) -> dict:
        d = {"workload": self.workload, "size": self.size, "preset": self.preset,
             "overrides": dict(sorted(self.overrides.items())), "seed": self.seed, "mode": self.mode}
        if self.code:
            d["code"] = self.code
        return d

    @classmethod
    def from_dict(cls, d: dict) -> RunParams:
        return cls(d["workload"], d.get("size", "small"), d.get("preset", "gtx480"), dict(d.get("overrides") or {}),
                   int(d.get("seed", 1)), d.get("mode", "timing"), d.get("code", ""))

    def key(self) -> str:
        """Identity of the run in a results DB and in run-directory names."""
        return hashlib.sha256(canonical(self.to_dict()).encode()).hexdigest()[:16]

    def label(self) -> str:
        parts = [self.workload, self.size, self.preset] + [f"{k}={_short(v)}" for k, v in sorted(self.overrides.items())]
        if self.seed != 1:
            parts.append(f"seed={self.seed}")
        return " ".join(parts)


def _short(v: Any) -> str:
    return v if isinstance(v, str) else canonical(v)


@dataclass
class RunOutcome:
    params: RunParams
    result: Any            # WorkloadResult
    record: dict           # what the stats JSON holds
    config: Any = None     # resolved GPUConfig (timing mode)


def execute(params: RunParams, *, poison_dead: bool = False,
            on_device: Callable[[Any], Any] | None = None) -> RunOutcome:
    """Run one workload on a fresh Device and build its record. `on_device(dev)`
    may return a context manager (e.g. a progress bar) held around the run."""
    import contextlib

    import tlpsim
    from tlpsim.report import console
    from tlpsim.workloads.registry import get_workload

    wl = get_workload(params.workload)
    config = None
    if params.mode == "timing":
        from tlpsim.config.loader import load_config

        config = load_config(params.preset, params.overrides)
    elif params.mode == "functional":
        if params.overrides:
            raise TlpsimError("--set applies to the timing model; add --mode timing")
    else:
        raise TlpsimError(f"mode must be 'functional' or 'timing', not {params.mode!r}")
    with _RUN_LOCK:
        dev = tlpsim.Device(mode=params.mode, config=config, poison_dead_registers=poison_dead)
        hook = on_device(dev) if on_device is not None else None
        with dev, (hook if hook is not None else contextlib.nullcontext()):
            result = wl.execute(params.size, params.seed)
    rows = console.launch_rows(result)
    record = {"workload": params.workload, "size": params.size, "mode": params.mode, "seed": params.seed,
              "verified": result.verified, "launches": rows, "checks": [asdict(c) for c in result.checks],
              "wall_seconds": result.wall_seconds, "params": params.to_dict()}
    if config is not None:
        record["preset"] = params.preset
        record["config"] = config.to_dict()
        record["stats"] = [_stats_dict(r.stats) for r in result.launches if r.stats is not None]
    return RunOutcome(params, result, record, config)


def _stats_dict(stats) -> dict:
    to_dict = getattr(stats, "to_dict", None)
    return to_dict() if to_dict is not None else asdict(stats)


def run_job(params: dict, run_root: str | None = None) -> dict:
    """A sweep worker's task: execute one run and return a plain dict for the
    results store. Never raises for a failing run: the error is the result."""
    p = RunParams.from_dict(params)
    started = time.time()
    out: dict = {"key": p.key(), "params": p.to_dict(), "started": started, "host": socket.gethostname(),
                 "worker": str(os.getpid())}
    try:
        outcome = execute(p)
        rec = outcome.record
        out["record"] = rec
        if rec["verified"]:
            out["status"], out["error"] = "done", None
        else:
            bad = [c["name"] for c in rec["checks"] if not c["ok"]]
            out["status"], out["error"] = "failed", "output did not verify: " + (", ".join(bad) or "no checks")
        if run_root:
            from tlpsim.report.rundir import write_run_dir

            out["run_dir"] = str(write_run_dir(outcome, root=run_root))
    except Exception as exc:  # noqa: BLE001 - one failing run must not stop the sweep
        out["status"] = "failed"
        out["record"] = None
        if isinstance(exc, TlpsimError):
            out["error"] = f"{type(exc).__name__}: {exc}"
        else:
            tb = traceback.format_exc(limit=-3)
            out["error"] = f"{type(exc).__name__}: {exc}\n{tb}"
    out["finished"] = time.time()
    return out
