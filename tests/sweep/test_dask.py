"""The same sweep through a Dask LocalCluster on 127.0.0.1 (`--dask`) gives the
same results as the local process pool."""

from __future__ import annotations

import pytest
from sweep_helpers import cli, deterministic

from tlpsim.sweep.store import ResultsDB

distributed = pytest.importorskip("distributed")


def test_dask_cluster_matches_local_pool(local_sweep):
    d, local_db, _ = local_sweep
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        out = cli("sweep", "spec.toml", "--dask", cluster.scheduler_address, "--db", "dask.db", cwd=d).stdout
        with distributed.Client(cluster) as client:
            worker_pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert f"on Dask cluster at {cluster.scheduler_address}" in out
    with ResultsDB(local_db, create=False) as a, ResultsDB(d / "dask.db", create=False) as b:
        local = {r["key"]: r for r in a.rows(with_stats=True)}
        dask = {r["key"]: r for r in b.rows(with_stats=True)}
    assert set(dask) == set(local) and len(dask) == 8
    # the runs really executed on the cluster's worker processes
    assert {int(r["worker"]) for r in dask.values()} <= worker_pids
    for key, r in local.items():
        q = dask[key]
        assert (q["status"], q["cycles"], q["thread_insts"], q["ipc"]) == (r["status"], r["cycles"], r["thread_insts"],
                                                                           r["ipc"])
        assert deterministic(q["stats"]["stats"]) == deterministic(r["stats"]["stats"])
