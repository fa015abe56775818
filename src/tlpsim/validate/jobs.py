"""The unit of work of a validation: one host program run in a fresh timing-mode
device — a reference program as it is (`program`), the same with a CTA-per-SM cap
(`sweep`), or a microbenchmark with its %clock probe (`micro`) — and the pool that
runs them, in this process or on forked worker processes.

A job is a plain dict (picklable); `execute` returns a plain dict with the
program's check, its per-launch metrics (and %clock intervals) or its error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tlpsim.errors import TlpsimError

__all__ = ["execute", "job_config", "run_jobs"]


def job_config(preset: str, overrides: dict[str, Any], job: dict) -> Any:
    """The GPUConfig of a job: the preset, the user's overrides, then the job's own
    (the CTA cap of a sweep point; the %clock probe of a microbenchmark)."""
    from tlpsim.config.loader import load_config
    from tlpsim.validate.clock import PROBE_NAME

    over = dict(overrides)
    if job.get("cap") is not None:
        over["gpu.max_ctas_per_sm"] = int(job["cap"])
    if job["kind"] == "micro":
        over["sm.execution_checker"] = PROBE_NAME
    return load_config(preset, over)


def execute(job: dict) -> dict:
    """Run one job (see the module doc); never raises for a failing program."""
    from tlpsim.validate.clock import clock_intervals
    from tlpsim.validate.measure import run_timed, timing_metrics
    from tlpsim.validate.micro import MICRO
    from tlpsim.validate.programs import PROGRAMS
    from tlpsim.validate.reference import load_reference

    out: dict = {"job": job, "error": None, "launches": []}
    try:
        ref = load_reference(job["ref_dir"])
        cfg = job_config(job["preset"], job["overrides"], job)
    except TlpsimError as exc:
        out["error"] = str(exc)
        return out
    name = job["name"]
    if job["kind"] == "micro":
        only = set(job["only"]) if job.get("only") is not None else None
        spec = ref.micro[name]

        def program():
            return MICRO[name].run(spec, ref.micro_dir, only)
    else:
        entry = ref.programs[name]

        def program():
            return PROGRAMS[name](entry, ref.dir)
    oc = run_timed(program, cfg, job.get("time_limit", 0), trace_cache=job.get("trace_cache", True))
    out.update(error=oc.error, traceback=oc.traceback, wall_s=oc.wall_s, peak_rss_mb=oc.peak_rss_mb)
    if oc.error is not None:
        return out
    r = oc.result
    out.update(verified=r.verified, output=r.output, bad=r.bad,
               program=timing_metrics(r.records, oc.max_warps) if r.records else None)
    for rec, label, reads in zip(r.records, r.labels, r.clock):
        out["launches"].append({"id": label, "kernel": rec.kernel, "grid": list(rec.grid), "block": list(rec.block),
                                "metrics": timing_metrics([rec], oc.max_warps),
                                "clock_reads": len(reads), "clock": clock_intervals(reads)})
    return out


def run_jobs(jobs: list[dict], workers: int, on_done: Callable[[dict], Iterable[dict]]) -> Iterator[dict]:
    """Run `jobs` (costliest first, by their "cost") and yield each result as it
    finishes; `on_done(result)` may return further jobs to queue. One worker runs
    them here, in order; more run on forked processes."""
    queue = sorted(jobs, key=lambda j: -j.get("cost", 0.0))
    if workers <= 1:
        while queue:
            res = execute(queue.pop(0))
            queue.extend(on_done(res))
            yield res
        return
    yield from pooled(queue, workers, on_done)


def pooled(queue: list[dict], workers: int, on_done: Callable[[dict], Iterable[dict]],
           run: Callable[[dict], dict] = execute) -> Iterator[dict]:
    """`run` each job on `workers` forked processes, yielding results as they finish;
    `on_done(result)` may queue further jobs."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    from tlpsim.sweep.backends import fork_pool, stop_pool

    pool = fork_pool(workers)
    try:
        pending = {pool.submit(run, j) for j in queue}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    res = fut.result()
                except BrokenProcessPool:
                    raise TlpsimError("a validation worker process died (out of memory or killed?)") from None
                for extra in on_done(res):
                    pending.add(pool.submit(run, extra))
                yield res
    finally:
        stop_pool(pool)
