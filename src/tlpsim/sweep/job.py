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
    """What determines a run: workload, input size and seed, GPU preset, the
    dotted-key config overrides (policies are overrides of their config keys), the
    plug-in files/modules it loads, and the fingerprint of the plug-in code it runs
    (`code`, filled on first use: see `fingerprint`)."""

    workload: str
    size: str = "small"
    preset: str = "gtx480"
    overrides: dict[str, Any] = field(default_factory=dict)
    seed: int = 1
    mode: str = "timing"
    plugins: tuple[str, ...] = ()   # plug-in files (absolute paths) and modules, loaded before the config resolves
    code: dict[str, Any] | None = None  # tlpsim.policies.external.fingerprint of the run's plug-in code
    simulator: str = ""  # the simulator's source fingerprint when runs are keyed by it (experiments); "" = not
    # sampled timing (tlpsim.sampling.SamplingSpec.to_dict()); None = full detail. A sampled run
    # is another run than the full one: it is part of the key (full-detail keys are unchanged)
    sampling: dict | None = None
    # the sampler's source fingerprint, keying a sampled run that `simulator` keys (set on first use)
    sampler: str = ""

    def _params(self) -> dict:
        d = {"workload": self.workload, "size": self.size, "preset": self.preset,
             "overrides": dict(sorted(self.overrides.items())), "seed": self.seed, "mode": self.mode}
        if self.sampling and self.sampling.get("mode", "off") != "off":
            d["sampling"] = dict(sorted(self.sampling.items()))
        return d

    def to_dict(self) -> dict:
        d = self._params()
        if self.plugins:
            d["plugins"] = list(self.plugins)
        d["code"] = self.fingerprint()
        if self.simulator:
            d["simulator"] = self.simulator
            if "sampling" in self._params():
                d["sampler"] = self.sampler_code()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> RunParams:
        return cls(d["workload"], d.get("size", "small"), d.get("preset", "gtx480"), dict(d.get("overrides") or {}),
                   int(d.get("seed", 1)), d.get("mode", "timing"), tuple(d.get("plugins") or ()), d.get("code"),
                   d.get("simulator", ""), d.get("sampling"), d.get("sampler", ""))

    def fingerprint(self) -> dict[str, Any]:
        """The hashes of the plug-in code the run depends on: the class each extension
        point selects and every plug-in file/module it loads (computed once)."""
        if self.code is None:
            self.code = code_fingerprint(self.preset, self.overrides, self.mode, self.plugins)
        return self.code

    def sampler_code(self) -> str:
        """The sampler's source fingerprint this run is keyed by (computed once)."""
        if not self.sampler:
            from tlpsim.sweep.fingerprint import sampler_fingerprint

            self.sampler = sampler_fingerprint()
        return self.sampler

    def params_key(self) -> str:
        """Identity of the parameters alone (one point of a results table; the same
        whatever the plug-in code)."""
        return _hash(self._params())

    def key(self) -> str:
        """Identity of the run in a results DB and in run-directory names: the
        parameters and the fingerprint of the plug-in code, so a run simulated with
        other plug-in code is never reused (nor, when `simulator` is set, a run
        simulated by other simulator code), nor one whose kernels another toolchain
        compiled (a preset's default toolchain may change; cuda13 runs keep their keys).
        A sampled run keyed by the simulator is keyed by the sampler's code as well; a
        full-detail run, which never executes the sampler, is not."""
        simulator = {"simulator": self.simulator} if self.simulator else {}
        if self.simulator and "sampling" in self._params():
            simulator["sampler"] = self.sampler_code()
        return _hash({**self._params(), "code": self.fingerprint(), **simulator,
                      **compile_stamp(self.preset, self.overrides, self.mode)})

    def label(self) -> str:
        parts = [self.workload, self.size, self.preset] + [f"{k}={_short(v)}" for k, v in sorted(self.overrides.items())]
        if self.seed != 1:
            parts.append(f"seed={self.seed}")
        if "sampling" in self._params():
            parts.append(f"sampled={self.sampling['mode']}")
        return " ".join(parts)


def _hash(d: dict) -> str:
    return hashlib.sha256(canonical(d).encode()).hexdigest()[:16]


#: the config keys that decide how kernels are compiled: the only ones a functional run takes
COMPILE_KEYS = ("gpu.toolchain", "gpu.arch", "gpu.cuda11_arch", "gpu.maxrregcount", "gpu.block_schedule")

_CONFIGS: dict[tuple[str, str], Any] = {}  # (preset, overrides) -> GPUConfig, or the ConfigError it raised


def run_config(preset: str, overrides: dict) -> Any:
    """The resolved GPUConfig of a run (memoised: a sweep's runs share few configs);
    raises the `TlpsimError` it does not load with."""
    key = (preset, canonical(overrides))
    if key not in _CONFIGS:
        from tlpsim.config.loader import load_config

        try:
            _CONFIGS[key] = load_config(preset, overrides)
        except TlpsimError as exc:
            _CONFIGS[key] = exc
    got = _CONFIGS[key]
    if isinstance(got, TlpsimError):
        raise got
    return got


def _config(preset: str, overrides: dict) -> Any:
    """`run_config`, or None when it does not load (the run will fail with that error;
    there is no plug-in code to name)."""
    try:
        return run_config(preset, overrides)
    except TlpsimError:
        return None


_FINGERPRINTS: dict[tuple, dict[str, Any]] = {}


def code_fingerprint(preset: str, overrides: dict, mode: str, plugins: tuple[str, ...] = ()) -> dict[str, Any]:
    """`tlpsim.policies.external.fingerprint` of a run's resolved config and plug-ins,
    memoised per configuration and registry state: a sweep's runs share few configs
    (resolving one costs milliseconds, and a spec may expand to 10^5 runs), and a
    plug-in reloaded under the same name registers a new class, so a new key."""
    from tlpsim.policies.external import fingerprint
    from tlpsim.policies.registry import registrations

    key = (preset, canonical(overrides), mode, plugins, frozenset(registrations().items()))
    if key not in _FINGERPRINTS:
        _FINGERPRINTS[key] = fingerprint(_config(preset, overrides) if mode == "timing" else None, plugins)
    return dict(_FINGERPRINTS[key])


def compile_stamp(preset: str, overrides: dict, mode: str) -> dict[str, str]:
    """What a timing run's kernels are compiled with when that is not CUDA 13.5 in nvcc's
    order: {"toolchain": "cuda11 sm_35 nvidia-cuda-nvrtc-cu11==11.8.89 ..."} and/or
    {"block_schedule": "list"}; {} otherwise (functional runs compile with a Device's
    defaults, CUDA 13.5)."""
    config = _config(preset, overrides) if mode == "timing" else None
    if config is None:
        return {}
    # list-scheduled blocks run the kernels in another order (gpu.block_schedule; nvcc's order keeps its keys)
    stamp = {"block_schedule": "list"} if config.gpu.block_schedule == "list" else {}
    if config.gpu.toolchain == "cuda13":
        return stamp
    from tlpsim.frontend.nvrtc import CUDA11_WHEELS

    wheels = " ".join(f"{k}=={v}" for k, v in sorted(CUDA11_WHEELS.items()))
    return {"toolchain": f"{config.gpu.toolchain} {config.gpu.compile_arch} {wheels}", **stamp}


def _short(v: Any) -> str:
    return v if isinstance(v, str) else canonical(v)


@dataclass
class RunOutcome:
    params: RunParams
    result: Any            # WorkloadResult
    record: dict           # what the stats JSON holds
    config: Any = None     # resolved GPUConfig (timing mode)


def execute(params: RunParams, *, poison_dead: bool = False,
            on_device: Callable[[Any], Any] | None = None, plugin_sources: dict[str, str] | None = None,
            device_options: dict | None = None) -> RunOutcome:
    """Run one workload on a fresh Device and build its record. `on_device(dev)`
    may return a context manager (e.g. a progress bar) held around the run. The
    run's plug-ins are loaded first (`plugin_sources`, {path: text}, supplies files
    this host lacks); a run whose `code` was fingerprinted before (a sweep's) fails
    if the plug-in code changed since. `device_options` are further Device keywords
    that do not change results (budget_factor, time_limit)."""
    import contextlib

    import tlpsim
    from tlpsim.policies import external
    from tlpsim.report import console
    from tlpsim.workloads.registry import get_workload

    external.load_all(params.plugins, origin=external.RUN_PLUGINS, sources=plugin_sources)
    wl = get_workload(params.workload)
    config = None
    if params.mode == "timing":
        from tlpsim.config.loader import load_config

        config = load_config(params.preset, params.overrides)
        _check_policies(params, config)
    elif params.mode == "functional":
        timing_keys = [k for k in params.overrides if k not in COMPILE_KEYS]
        if timing_keys:
            raise TlpsimError(f"--set {timing_keys[0]} applies to the timing model; add --mode timing (a functional "
                              f"run takes only the compile keys {', '.join(COMPILE_KEYS)})")
    else:
        raise TlpsimError(f"mode must be 'functional' or 'timing', not {params.mode!r}")
    _check_code(params, external.fingerprint(config, params.plugins))
    sampling = None
    if params.sampling:
        from tlpsim.sampling.spec import SamplingSpec

        sampling = SamplingSpec.from_dict(params.sampling)
        if sampling.on and params.mode != "timing":
            raise TlpsimError("--sample samples the timing simulation; it needs --mode timing")
    with _RUN_LOCK:
        dev = tlpsim.Device(mode=params.mode, config=config, poison_dead_registers=poison_dead,
                            sampling=sampling, **(device_options or {}))
        hook = on_device(dev) if on_device is not None else None
        try:
            with dev, (hook if hook is not None else contextlib.nullcontext()):
                result = wl.execute(params.size, params.seed)
        except TlpsimError as exc:  # what finished before the error goes with it (`tlpsim run` keeps it)
            exc.partial = _partial(params, config, dev, exc)  # type: ignore[attr-defined]
            raise
    rows = console.launch_rows(result)
    record = {"workload": params.workload, "size": params.size, "mode": params.mode, "seed": params.seed,
              "verified": result.verified, "launches": rows, "checks": [asdict(c) for c in result.checks],
              "wall_seconds": result.wall_seconds, "params": params.to_dict()}
    if config is not None:
        record["preset"] = params.preset
        record["config"] = config.to_dict()
        record["stats"] = [_stats_dict(r.stats, r.sampling) for r in result.launches if r.stats is not None]
        if sampling is not None and sampling.on:
            from tlpsim.sampling.summary import run_summary

            record["sampling"] = run_summary(sampling, [r.sampling for r in result.launches if r.stats is not None])
    record["plugins"] = plugin_record(config, params.plugins)
    return RunOutcome(params, result, record, config)


def _partial(params: RunParams, config: Any, dev: Any, exc: Exception) -> RunOutcome:
    """The record of a run that failed: its launches that completed (those timed with
    their statistics) and the error."""
    import types

    from tlpsim.report import console

    done = [r for r in dev.launches if params.mode != "timing" or r.stats is not None]
    record = {"workload": params.workload, "size": params.size, "mode": params.mode, "seed": params.seed,
              "error": str(exc), "error_type": type(exc).__name__,
              "launches": console.launch_rows(types.SimpleNamespace(launches=done)), "params": params.to_dict()}
    if config is not None:
        record["preset"] = params.preset
        record["config"] = config.to_dict()
        record["stats"] = [_stats_dict(r.stats, r.sampling) for r in done]
    record["plugins"] = plugin_record(config, params.plugins)
    return RunOutcome(params, None, record, config)


def _check_policies(params: RunParams, config: Any) -> None:
    """Resolve the config's policy names now (the plug-ins are loaded), so an unknown
    one names the preset file or override it came from, as other config errors do."""
    from tlpsim.errors import ConfigError
    from tlpsim.policies.registry import resolve_config

    try:
        resolve_config(config)
    except ConfigError as exc:
        source = f"preset '{params.preset}'" + "".join(f", {k}={v}" for k, v in sorted(params.overrides.items()))
        raise ConfigError(f"invalid configuration ({source}): {exc}") from None


def _check_code(params: RunParams, code: dict[str, Any]) -> None:
    """Stamp the run with the plug-in code it runs, or check it against the stamp its key was made from."""
    if params.code is None:
        params.code = code
        return
    if code != params.code:
        changed = sorted(k for k in set(code) | set(params.code) if code.get(k) != params.code.get(k))
        raise TlpsimError(f"the plug-in code of this run changed after its key was computed ({', '.join(changed)}: "
                          "a plug-in file was edited during the sweep?); run the sweep again to simulate it with "
                          "the current code")


def plugin_record(config: Any, plugins: tuple[str, ...]) -> dict:
    """What a run record says about plug-ins: the files/modules loaded and, per
    plug-in the config selects, its declarations (counters with units, energy
    structures, parameters) and source."""
    from tlpsim.policies import external, registry

    loaded = {lp.spec: lp for lp in external.loaded()}
    out: dict = {"loaded": [{"spec": s, "kind": loaded[s].kind, "digest": loaded[s].digest,
                             "registers": [f"{p}.{n}" for p, n in loaded[s].registered]}
                            for s in plugins if s in loaded], "selected": {}}
    if config is not None:
        for point, (cls, _) in registry.resolve_config(config).items():
            if cls is not None:
                info = registry.info(point, cls.plugin_name, cls)
                out["selected"][info.key] = info.to_dict()
    return out


def _stats_dict(stats, sampling: dict | None = None) -> dict:
    """A launch's statistics record; a sampled launch's carries `sampling` (how its
    cycles were obtained, their interval and the share simulated in detail)."""
    to_dict = getattr(stats, "to_dict", None)
    d = to_dict() if to_dict is not None else asdict(stats)
    if sampling is not None:
        d["sampling"] = sampling
    return d


def run_job(params: dict, run_root: str | None = None, device_options: dict | None = None) -> dict:
    """A sweep worker's task: execute one run and return a plain dict for the
    results store. Never raises for a failing run: the error is the result.
    `params` is `RunParams.to_dict()`, plus optionally "plugin_sources" ({path:
    text} of its plug-in files, for workers on hosts without them); `device_options`
    as for `execute` (e.g. trace_cache=False for timing comparisons)."""
    from tlpsim.policies.external import RUN_PLUGINS, load_all

    params = dict(params)
    sources = params.pop("plugin_sources", None)
    p = RunParams.from_dict(params)
    started = time.time()
    try:  # before the key: a job without a fingerprint computes it with its plug-ins loaded
        load_all(p.plugins, origin=RUN_PLUGINS, sources=sources)
    except TlpsimError:
        pass  # execute() fails the run with this error
    out: dict = {"key": p.key(), "params": p.to_dict(), "started": started, "host": socket.gethostname(),
                 "worker": str(os.getpid())}
    try:
        outcome = execute(p, plugin_sources=sources, device_options=device_options)
        rec = outcome.record
        out["record"] = rec
        if rec["verified"]:
            out["status"], out["error"] = "done", None
        else:
            bad = [c["name"] for c in rec["checks"] if not c["ok"]]
            out["status"], out["error"] = "failed", "output did not verify: " + (", ".join(bad) or "no checks")
        if run_root:
            from tlpsim.report.rundir import write_run_dir

            try:
                out["run_dir"] = str(write_run_dir(outcome, root=run_root))
            except OSError as exc:  # the results still go to the database
                note = f"run directory not written under {run_root}: {exc.strerror or exc}"
                out["error"] = f"{out['error']}; {note}" if out["error"] else note
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
