"""Sweep workers share the on-disk trace cache: concurrent writers of one entry
never let a reader see a partial or corrupt file."""

from __future__ import annotations

import multiprocessing

import numpy as np

import tlpsim
from tlpsim.trace.cache import TraceCache
from tlpsim.workloads.registry import get_workload


def _hammer(directory: str, trace, rounds: int, out) -> None:
    cache = TraceCache(directory)
    extra = {"starts": np.arange(1000, dtype=np.int64)}
    bad = 0
    for _ in range(rounds):
        cache.store("k", trace, extra)
        hit = cache.load_with_extra("k")
        if hit is None or hit[0].warp_instructions != trace.warp_instructions or not np.array_equal(
                hit[1]["starts"], extra["starts"]):
            bad += 1
    out.put(bad)


def test_concurrent_writers_and_readers_of_one_trace(tmp_path):
    with tlpsim.Device() as dev:
        get_workload("vecadd").execute("tiny")
    trace = dev.launches[0].trace
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), trace, 25, out)) for _ in range(3)]
    for p in procs:
        p.start()
    bad = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert bad == [0, 0, 0]
    assert [p.name for p in tmp_path.iterdir()] == ["k.trace"]  # no temporary files left behind
