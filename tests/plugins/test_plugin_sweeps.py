"""Plug-ins in sweeps: through the spec's `plugins` key (relative to the spec) and
`--plugin`, on 2 local workers and on a Dask cluster; an edited plug-in makes its
runs simulate again (the old rows are kept as stale), an unchanged one is reused;
plug-in counters are results columns."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest
from plugin_helpers import cli, counting_source, write_plugin

from tlpsim.sweep.job import run_job

SPEC = """
name = "plugs"
plugins = ["plugs/counting.py"]
workloads = ["vecadd"]
sizes = ["tiny"]
[overrides]
"sm.warp_scheduler" = ["counting", "gto"]
[baseline]
"sm.warp_scheduler" = "gto"
"""


def _runs(db) -> dict[str, dict]:
    """scheduler -> (key, status, stats record) of the DB's rows."""
    with sqlite3.connect(db) as c:
        out = {}
        for key, ov, status, stats in c.execute("SELECT key, overrides, status, stats FROM runs"):
            out.setdefault(json.loads(ov)["sm.warp_scheduler"], []).append((key, status, json.loads(stats)))
    return out


def test_spec_plugins_on_two_workers_rerun_only_when_the_plugin_changes(tmp_path):
    specs = tmp_path / "specs"
    plugin = write_plugin(specs / "plugs" / "counting.py", "counting")
    (specs / "spec.toml").write_text(SPEC)
    args = ("sweep", "specs/spec.toml", "--workers", "2", "--db", "r.db")
    out = cli(*args, cwd=tmp_path).stdout  # from another directory: the path is relative to the spec
    assert "2 runs, 0 already in r.db, 2 to run on local pool, 2 worker(s)" in out
    runs = _runs(tmp_path / "r.db")
    ((key1, status, rec),) = runs["counting"]
    assert status == "done" and rec["params"]["plugins"] == [str(plugin.resolve())]
    (st,) = rec["stats"]
    grid = rec["launches"][0]["grid"]
    n_ctas = grid[0] * grid[1] * grid[2]
    assert st["plugins"] == {"warp_scheduler.counting": {"issued": st["warp_insts"], "ctas": n_ctas}}
    assert runs["gto"][0][2]["stats"][0]["plugins"] == {}  # loaded but not selected: nothing counted
    # the counters are results columns
    table = cli("results", "r.db", "--csv", "--metrics", "--where", "plugin.warp_scheduler.counting.issued>0",
                cwd=tmp_path).stdout
    (row,) = list(csv.DictReader(io.StringIO(table)))
    assert row["sm.warp_scheduler"] == "counting"
    assert int(float(row["plugin.warp_scheduler.counting.issued"])) == st["warp_insts"]
    assert int(float(row["plugin.warp_scheduler.counting.ctas"])) == n_ctas

    # unchanged: everything reused
    out = cli(*args, cwd=tmp_path).stdout
    assert "2 runs, 2 already in r.db, 0 to run" in out and "0 ran (0 failed), 2 skipped" in out

    # edited: both runs load the file, so both simulate again; the old rows stay, marked stale
    plugin.write_text(counting_source("counting", "v2"))
    out = cli(*args, cwd=tmp_path).stdout
    assert "2 runs, 0 already in r.db, 2 to run" in out and "2 ran (0 failed), 0 skipped" in out
    runs = _runs(tmp_path / "r.db")
    assert len(runs["counting"]) == 2 and key1 in {k for k, _, _ in runs["counting"]}
    shown = list(csv.DictReader(io.StringIO(cli("results", "r.db", "--csv", cwd=tmp_path).stdout)))
    assert len(shown) == 2 and key1 not in {r["key"] for r in shown}
    assert cli("results", "r.db", cwd=tmp_path).stdout.splitlines()[-1] == (
        "2 run(s); 2 stale run(s) simulated with older plug-in code not shown (--all lists them)")
    every = list(csv.DictReader(io.StringIO(cli("results", "r.db", "--csv", "--all", cwd=tmp_path).stdout)))
    assert sorted(r["status"] for r in every) == ["done", "done", "stale", "stale"]
    # figures use the current runs and find each one's baseline
    proc = cli("plot", "r.db", "--metric", "ipc", "-o", "f.png", cwd=tmp_path)
    assert "(2 groups x 2 bars)" in proc.stdout and "left out" not in proc.stderr  # vecadd and the geometric mean
    proc = cli("plot", "r.db", "--metric", "plugin.warp_scheduler.counting.issued", "--normalize", "none",
               "-o", "g.png", cwd=tmp_path)
    assert "(1 groups x 1 bars)" in proc.stdout and proc.stderr.startswith("  left out: ")  # gto has no such counter


def test_plugin_option_on_two_workers(tmp_path):
    write_plugin(tmp_path / "counting.py", "counting")
    (tmp_path / "spec.toml").write_text('workloads = ["vecadd", "reduction"]\nsizes = ["tiny"]\n'
                                        '[overrides]\n"sm.warp_scheduler" = "counting"\n')
    out = cli("sweep", "spec.toml", "--workers", "2", "--plugin", "counting.py", "--db", "r.db",
              cwd=tmp_path).stdout
    assert "2 ran (0 failed)" in out
    with sqlite3.connect(tmp_path / "r.db") as c:
        recs = [json.loads(s) for (s,) in c.execute("SELECT stats FROM runs")]
    assert {r["workload"] for r in recs} == {"vecadd", "reduction"}
    for r in recs:
        assert r["params"]["plugins"] == [str(tmp_path / "counting.py")]
        for st in r["stats"]:
            assert st["plugins"]["warp_scheduler.counting"]["issued"] == st["warp_insts"]


def test_dask_workers_load_the_plugin(tmp_path):
    distributed = pytest.importorskip("distributed")
    write_plugin(tmp_path / "counting.py", "counting")
    (tmp_path / "spec.toml").write_text('workloads = ["vecadd", "reduction"]\nsizes = ["tiny"]\n'
                                        '[overrides]\n"sm.warp_scheduler" = "counting"\n')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        out = cli("sweep", "spec.toml", "--dask", cluster.scheduler_address, "--plugin", "counting.py",
                  "--db", "r.db", cwd=tmp_path).stdout
        with distributed.Client(cluster) as client:
            pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert "2 ran (0 failed)" in out
    with sqlite3.connect(tmp_path / "r.db") as c:
        rows = list(c.execute("SELECT worker, stats FROM runs"))
    assert {int(w) for w, _ in rows} <= pids
    for _, s in rows:
        for st in json.loads(s)["stats"]:
            assert st["plugins"]["warp_scheduler.counting"]["issued"] == st["warp_insts"]


def test_worker_without_the_file_runs_the_carried_source(tmp_path):
    """What a Dask worker on another host does: the file is absent, its text came with the job."""
    path = str(tmp_path / "not_on_this_host" / "carried.py")
    params = {"workload": "vecadd", "size": "tiny", "preset": "gtx480",
              "overrides": {"sm.warp_scheduler": "carried_counting"}, "seed": 1, "mode": "timing",
              "plugins": [path], "plugin_sources": {path: counting_source("carried_counting")}}
    res = run_job(params)
    assert res["status"] == "done", res["error"]
    (st,) = res["record"]["stats"]
    assert st["plugins"]["warp_scheduler.carried_counting"]["issued"] == st["warp_insts"]
    assert "plugin_sources" not in res["params"]


def test_spec_plugins_resolve_against_the_spec_and_reach_every_run(tmp_path, monkeypatch):
    from tlpsim.sweep.spec import load_spec

    write_plugin(tmp_path / "specs" / "plugs" / "counting.py", "spec_counting")
    (tmp_path / "specs" / "spec.toml").write_text(SPEC.replace('"counting"', '"spec_counting"')
                                                  .replace('"gto"]', '"gto"]\n"gpu.max_ctas_per_sm" = [2, 4]'))
    monkeypatch.chdir(tmp_path)
    extra = str(tmp_path / "extra.py")
    write_plugin(tmp_path / "extra.py", "extra_counting")
    spec = load_spec("specs/spec.toml", plugins=(extra,))
    path = str(tmp_path / "specs" / "plugs" / "counting.py")
    assert len(spec.runs) == 4 and all(r.plugins == (extra, path) for r in spec.runs)
    # the fingerprint names both files; it differs per selected scheduler only where the class differs
    codes = {r.overrides["sm.warp_scheduler"]: r.fingerprint() for r in spec.runs}
    assert codes["spec_counting"]["plugins"] == codes["gto"]["plugins"] and len(codes["gto"]["plugins"]) == 2
    assert codes["spec_counting"]["warp_scheduler"] != codes["gto"]["warp_scheduler"]


@pytest.mark.parametrize("text, message", [
    ('workloads = ["vecadd"]\n[overrides]\n"sm.warp_scheduler" = "gto"\nplugins = ["a.py"]\n',
     r"s\.toml: 'plugins' is inside \[overrides\]: write it before the spec's first \[table\]"),
    ('plugins = "a.py b.py"\nworkloads = ["vecadd"]\n',
     r"plug-in file \S+/a\.py b\.py \(from s\.toml: plugins\) not found"),
    ('plugins = [1]\nworkloads = ["vecadd"]\n', r"s\.toml: 'plugins' must be a list of plug-in files"),
    ('plugins = ["x.py"]\nworkloads = ["vecadd"]\n', r"plug-in file \S+/x\.py \(from s\.toml: plugins\) registers no"),
])
def test_spec_plugin_errors_name_the_spec(tmp_path, monkeypatch, text, message):
    from tlpsim.errors import ConfigError
    from tlpsim.sweep.spec import parse_spec

    (tmp_path / "x.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=message):
        parse_spec(text, "s.toml")
