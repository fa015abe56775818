"""The plug-in conformance harness: does a plug-in (or a whole config) keep the
simulator's guarantees?

For each target and each of a few tiny workloads (plus one that fills the SMs,
`CAPACITY_WORKLOADS`, for a target choosing a resource allocator, so an allocator
admitting more CTAs than the baseline is exercised) it runs the timing model and
checks:

- **verify** — the workload's output still matches its NumPy reference;
- **terminates** — the run ends (a plug-in that holds a warp forever ends in the
  watchdog's deadlock error, which names the stuck warps and what holds them; the
  harness reports that message);
- **skip-ahead == dense** — identical statistics when every cycle is ticked
  (per-cycle counts over cycles a sleeping SM skips included: stall reasons, and
  operand-collector refusals while a context transfer holds the RF ports);
- **deterministic** — identical statistics on a second run;
- **compiled == pure Python** — identical statistics with `TLPSIM_PURE_PYTHON=1`
  (one subprocess for a whole batch of targets);
- **invariants** — every traced warp instruction issued exactly once, cycles > 0,
  the per-SM ACTIVE/IDLE/MEM_STALL/CORE_STALL cycles tile the run, plug-in counters
  are finite and non-negative.

Plug-ins defined in files are named by `plugins` (the same specs as `--plugin`),
so the pure-Python subprocess loads them too.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tlpsim.errors import TlpsimError

__all__ = ["CAPACITY_WORKLOADS", "CHECKS", "ConformanceError", "Report", "Target", "WORKLOADS", "check_config",
           "check_plugin", "check_targets", "default_workloads"]

#: tiny workloads covering global memory (vecadd), barriers and shared memory over two
#: kernels (reduction), a 2D grid with a shared tile (transpose) and divergence with
#: barriers in a loop (pathfinder); together about a second per run set
WORKLOADS = ("vecadd", "reduction", "transpose", "pathfinder")
#: workloads with more CTAs than the SMs hold at the baseline's occupancy, so an
#: allocator that admits more (EXPARS, GPUDuet, RFV) is exercised beyond it: checked
#: too, by default, for a target that chooses a resource allocator
CAPACITY_WORKLOADS = ("spmv",)
CHECKS = ("verify", "terminates", "dense", "deterministic", "pure_python", "invariants")

#: extension point -> its config key
POINT_KEYS = {"cta_scheduler": "gpu.cta_scheduler", "resource_allocator": "sm.resource_allocator",
              "warp_scheduler": "sm.warp_scheduler", "operand_storage": "sm.operand_storage",
              "context_switcher": "sm.context_switcher", "execution_checker": "sm.execution_checker",
              "monitor": "monitor.policy"}


class ConformanceError(TlpsimError):
    """A target failed a conformance check (the message lists every failure)."""


@dataclass(frozen=True)
class Target:
    """What to check: a preset with overrides — typically one extension point set to
    the plug-in under test (`Target.plugin`)."""

    label: str
    preset: str = "gtx480"
    overrides: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def plugin(cls, point: str, name: str, params: Mapping[str, Any] | None = None, *, preset: str = "gtx480",
               overrides: Mapping[str, Any] | None = None) -> Target:
        if point not in POINT_KEYS:
            raise TlpsimError(f"unknown extension point {point!r} (points: {', '.join(POINT_KEYS)})")
        choice: Any = {"impl": name, **params} if params else name
        label = f"{point}={name}" + (f" {dict(params)}" if params else "")
        return cls(label, preset, {**(overrides or {}), POINT_KEYS[point]: choice})


@dataclass
class Report:
    """Outcome of the checks of one target: `failures` is [(workload, check, message)]."""

    target: Target
    workloads: tuple[str, ...]
    checks: tuple[str, ...]
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    cycles: dict[str, list[int]] = field(default_factory=dict)   # workload -> cycles per launch
    # workload -> most CTAs one SM held beyond the baseline's occupancy limit (0: none beyond it)
    extra_ctas: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        head = f"{self.target.label}: {len(self.workloads)} workloads x {len(self.checks)} checks"
        beyond = {w: n for w, n in self.extra_ctas.items() if n > 0}
        if beyond:
            head += " (CTAs beyond the baseline's limit on " + ", ".join(f"{w} +{n}" for w, n in beyond.items()) + ")"
        if self.ok:
            return head + ": all pass"
        return head + f": {len(self.failures)} failed\n" + "\n".join(
            f"  {w}: {c}: {m}" for w, c, m in self.failures)

    def raise_for_failures(self) -> None:
        if not self.ok:
            raise ConformanceError(self.summary())


def _canonical(stats: Any) -> str:
    d = asdict(stats)
    d.pop("wall_seconds", None)
    return json.dumps(d, sort_keys=True, default=repr)


def run_workload(preset: str, overrides: Mapping[str, Any], workload: str, size: str = "tiny",
                 dense: bool = False) -> dict:
    """One timing run: {"error"} or {"verified", "launches": [{cycles, stats, warp_insts,
    traced, sm_cycles, n_sms, plugins}]} (what the checks compare)."""
    import tlpsim
    from tlpsim.config.loader import load_config
    from tlpsim.workloads.registry import get_workload

    try:
        cfg = load_config(preset, dict(overrides))
        with tlpsim.Device(mode="timing", config=cfg, dense=dense) as dev:
            result = get_workload(workload).execute(size)
            recs = list(dev.launches)
    except TlpsimError as exc:
        return {"error": str(exc)}
    launches = []
    for rec in recs:
        st = rec.stats
        launches.append({"kernel": rec.kernel, "cycles": st.cycles, "stats": _canonical(st),
                         "extra_ctas": st.peak_resident_ctas - st.ctas_per_sm_limit,
                         "warp_insts": st.warp_insts, "traced": rec.warp_instructions,
                         "sm_cycles": dict(st.sm_cycles), "n_sms": cfg.gpu.n_sms, "plugins": st.plugins})
    return {"verified": bool(result.verified), "launches": launches}


def _invariants(run: dict) -> list[str]:
    bad = []
    for k, la in enumerate(run["launches"]):
        where = f"launch {k} ({la['kernel']})"
        if la["warp_insts"] != la["traced"]:
            bad.append(f"{where}: {la['warp_insts']} warp instructions issued, {la['traced']} traced")
        if la["cycles"] <= 0:
            bad.append(f"{where}: {la['cycles']} cycles")
        tiled = sum(la["sm_cycles"].values())
        if tiled != la["cycles"] * la["n_sms"]:
            bad.append(f"{where}: ACTIVE+IDLE+MEM_STALL+CORE_STALL = {tiled} SM-cycles, "
                       f"expected {la['cycles']} cycles x {la['n_sms']} SMs")
        for key, counts in la["plugins"].items():
            for name, v in counts.items():
                if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                    bad.append(f"{where}: counter {key}.{name} = {v!r}")
    return bad


def _pure_python_runs(jobs: list[tuple[str, dict, str, str]], plugins: Sequence[str]) -> list[dict]:
    """Run `jobs` [(preset, overrides, workload, size)] in one subprocess with the Python sources."""
    env = dict(os.environ, TLPSIM_PURE_PYTHON="1")
    payload = json.dumps({"jobs": jobs, "plugins": list(plugins)})
    proc = subprocess.run([sys.executable, "-m", "tlpsim.testing.conformance"], input=payload, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-12:]
        raise ConformanceError("the pure-Python run failed:\n" + "\n".join(tail))
    return json.loads(proc.stdout)


def default_workloads(target: Target) -> tuple[str, ...]:
    """`WORKLOADS`, plus `CAPACITY_WORKLOADS` for a target that chooses a resource allocator."""
    if POINT_KEYS["resource_allocator"] in target.overrides:
        return WORKLOADS + CAPACITY_WORKLOADS
    return WORKLOADS


def check_targets(targets: Sequence[Target], *, workloads: Sequence[str] | None = None, size: str = "tiny",
                  plugins: Sequence[str] = (), checks: Sequence[str] = CHECKS,
                  pure_python_workloads: Sequence[str] | None = None) -> list[Report]:
    """Check every target on `workloads` (default: `default_workloads(target)`).
    `plugins` are `--plugin` specs (files or modules) defining the plug-ins under
    test, loaded here and in the pure-Python subprocess; `pure_python_workloads`
    narrows that (slowest) check."""
    from tlpsim.policies.external import activate

    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise TlpsimError(f"unknown check(s) {', '.join(sorted(unknown))} (checks: {', '.join(CHECKS)})")
    specs = [lp.spec for lp in activate(plugins)]
    reports = [Report(t, tuple(workloads) if workloads is not None else default_workloads(t), tuple(checks))
               for t in targets]
    base: dict[tuple[int, str], dict] = {}
    for rep in reports:
        t = rep.target
        for w in rep.workloads:
            run = run_workload(t.preset, t.overrides, w, size)
            base[(id(rep), w)] = run
            if "error" in run:
                rep.failures.append((w, "terminates", run["error"]))
                continue
            rep.cycles[w] = [la["cycles"] for la in run["launches"]]
            rep.extra_ctas[w] = max(max(la["extra_ctas"] for la in run["launches"]), 0) if run["launches"] else 0
            if "verify" in checks and not run["verified"]:
                rep.failures.append((w, "verify", "the output does not match the NumPy reference"))
            if "invariants" in checks:
                rep.failures += [(w, "invariants", m) for m in _invariants(run)]
            for check, dense in (("dense", True), ("deterministic", False)):
                if check in checks:
                    other = run_workload(t.preset, t.overrides, w, size, dense=dense)
                    msg = _differ(run, other, "dense" if dense else "second")
                    if msg:
                        rep.failures.append((w, check, msg))
    if "pure_python" in checks:
        jobs, owners = [], []
        for rep in reports:
            pw = rep.workloads if pure_python_workloads is None else \
                [w for w in rep.workloads if w in pure_python_workloads]
            for w in pw:
                if "error" not in base[(id(rep), w)]:
                    jobs.append((rep.target.preset, dict(rep.target.overrides), w, size))
                    owners.append((rep, w))
        if jobs:
            for (rep, w), other in zip(owners, _pure_python_runs(jobs, specs)):
                msg = _differ(base[(id(rep), w)], other, "pure Python")
                if msg:
                    rep.failures.append((w, "pure_python", msg))
    return reports


def _differ(a: dict, b: dict, what: str) -> str:
    if "error" in b:
        return f"{what}: {b['error']}"
    for k, (x, y) in enumerate(zip(a["launches"], b["launches"])):
        if x["stats"] != y["stats"]:
            where = _first_difference(json.loads(x["stats"]), json.loads(y["stats"]))
            return (f"launch {k} ({x['kernel']}): statistics differ from the {what} run "
                    f"(cycles {x['cycles']} vs {y['cycles']}; first difference: {where})")
    if len(a["launches"]) != len(b["launches"]):
        return f"{len(a['launches'])} launches vs {len(b['launches'])} in the {what} run"
    return ""


def _first_difference(a: Any, b: Any, path: str = "stats") -> str:
    """The path and the two values of the first place `a` and `b` differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path} = {str(a)[:80]} vs {str(b)[:80]}"


def check_plugin(point: str, name: str, params: Mapping[str, Any] | None = None, **kwargs: Any) -> Report:
    """Check one registered plug-in at its extension point (see `check_targets` for
    the keywords; `preset=` and `overrides=` go to the target)."""
    tk = {k: kwargs.pop(k) for k in ("preset", "overrides") if k in kwargs}
    return check_targets([Target.plugin(point, name, params, **tk)], **kwargs)[0]


def check_config(preset: str, overrides: Mapping[str, Any] | None = None, **kwargs: Any) -> Report:
    """Check a whole configuration: several plug-ins chosen together (a mechanism
    made of an allocator and a storage, say), as `overrides` {config key: choice}
    on `preset` (see `check_targets` for the keywords)."""
    label = preset + "".join(f" {k}={v}" for k, v in (overrides or {}).items())
    return check_targets([Target(label, preset, dict(overrides or {}))], **kwargs)[0]


def _subprocess_main() -> None:
    from tlpsim.policies.external import activate

    req = json.load(sys.stdin)
    activate(req["plugins"])
    out = [run_workload(p, o, w, s) for p, o, w, s in req["jobs"]]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    _subprocess_main()
