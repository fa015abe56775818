"""Where sweep runs execute: a local process pool (default) or a Dask cluster.

Both take a list of run-parameter dicts and yield worker results (`job.run_job`)
as runs finish, in completion order; the driver stores each one as it arrives.
Workers share the on-disk PTX and trace caches, whose files are written to a
temporary name and renamed into place, so concurrent writers of one entry are
safe (both write identical content; readers see a whole file or none)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

from tlpsim.errors import TlpsimError
from tlpsim.sweep.job import run_job


def _watch_parent(driver_pid: int) -> None:
    """Worker initializer: exit when the sweep's driver dies (even by kill -9), so
    no orphan keeps simulating, and leave Ctrl-C to the driver. SIGTERM (how
    stop_pool ends a worker) kills quietly: a forked worker would otherwise inherit
    the driver's SIGTERM handler and print a traceback as it is stopped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def watch() -> None:
        while True:
            if os.getppid() != driver_pid:
                os._exit(1)
            time.sleep(0.25)

    threading.Thread(target=watch, daemon=True, name="tlpsim-parent-watch").start()


class LocalPool:
    """Runs on `workers` local processes (forked from the driver)."""

    def __init__(self, workers: int | None = None) -> None:
        check_workers(workers)
        self.workers = workers or os.cpu_count() or 1

    def describe(self) -> str:
        return f"local pool, {self.workers} worker(s)"

    def run(self, jobs: list[dict], run_root: str | None) -> Iterator[dict]:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        if not jobs:
            return
        pool = fork_pool(min(self.workers, len(jobs)))
        try:
            futures = [pool.submit(run_job, j, run_root) for j in jobs]
            for fut in as_completed(futures):
                try:
                    yield fut.result()
                except BrokenProcessPool:
                    raise TlpsimError("a sweep worker process died (out of memory or killed?); finished runs are "
                                      "saved in the results database; re-run the sweep to continue") from None
        finally:
            stop_pool(pool)


def fork_pool(workers: int):
    """A process pool of `workers` forked workers that exit with their driver."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_watch_parent,
                               initargs=(os.getpid(),))


def stop_pool(pool) -> None:
    """On Ctrl-C, an error or the end: drop queued work and stop the workers in flight."""
    procs = list(getattr(pool, "_processes", {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    # let the pool's manager thread see its workers gone and end: one still registered at
    # interpreter exit gets a wake-up on its closed pipe (Python 3.11 prints "Exception
    # ignored ... OSError: Bad file descriptor" after the user's Ctrl-C)
    if manager is not None:
        manager.join(timeout=5)


class DaskBackend:
    """Runs on a Dask distributed cluster at `address` (tcp://HOST:PORT). Workers
    need tlpsim installed (same version) and should run one thread each
    (`--nthreads 1`): runs in one process are serialised anyway."""

    def __init__(self, address: str) -> None:
        self.address = address

    def describe(self) -> str:
        return f"Dask cluster at {self.address}"

    def run(self, jobs: list[dict], run_root: str | None) -> Iterator[dict]:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise TlpsimError("--dask needs the 'distributed' package (pip install distributed)") from None
        if not jobs:
            return
        try:
            client = Client(self.address, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise TlpsimError(f"cannot connect to the Dask scheduler at {self.address}: {exc}") from None
        try:
            futures = {client.submit(run_job, j, run_root, pure=False): j for j in jobs}
            for fut in as_completed(futures):
                try:
                    yield fut.result()
                except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: record it against the run
                    yield _lost(futures[fut], f"{type(exc).__name__}: {exc}")
        finally:
            client.close()


def _lost(params: dict, error: str) -> dict:
    from tlpsim.sweep.job import RunParams

    now = time.time()
    params = {k: v for k, v in params.items() if k != "plugin_sources"}
    return {"key": RunParams.from_dict(params).key(), "params": params, "status": "failed", "error": error,
            "record": None, "started": now, "finished": now, "host": None, "worker": None}


def check_workers(workers: int | None) -> None:
    """--workers is a count of processes: 0 or -3 is a mistake, not "the default"."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise TlpsimError(f"--workers must be at least 1, got {workers!r}")


def make_backend(workers: int | None = None, dask: str | None = None):
    check_workers(workers)
    return DaskBackend(dask) if dask else LocalPool(workers)
