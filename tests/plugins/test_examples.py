"""The out-of-tree examples of docs/plugins.md (examples/plugins/) run as the
tutorial says: `tlpsim run ... --plugin FILE --set POINT=NAME`, a two-worker sweep,
and the conformance harness."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from plugin_helpers import cli

from tlpsim.testing import Target, check_targets

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "plugins"
CASES = [("youngest_first.py", "sgemm", "sm.warp_scheduler=youngest_first", "warp_scheduler.youngest_first"),
         ("cta_throttle.py", "btree", 'gpu.cta_scheduler={impl="cta_throttle", max_ctas=2}',
          "cta_scheduler.cta_throttle"),
         ("slow_high_registers.py", "sgemm", 'sm.operand_storage={impl="slow_high_registers", threshold=32}',
          "operand_storage.slow_high_registers")]


@pytest.mark.parametrize("file,workload,choice,key", CASES, ids=[c[0] for c in CASES])
def test_example_runs_from_the_command_line(tmp_path, file, workload, choice, key):
    out = cli("run", workload, "--size", "tiny", "--plugin", str(EXAMPLES / file), "--set", choice,
              "--json", cwd=tmp_path).stdout
    rec = json.loads(out)
    assert rec["verified"]
    counts = [st["plugins"][key] for st in rec["stats"]]
    assert all(v > 0 for c in counts for v in c.values())
    if key == "cta_scheduler.cta_throttle":   # every CTA of btree's two kernels admitted under the limit
        grids = [la["grid"] for la in rec["launches"]]
        assert [c["admitted"] for c in counts] == [g[0] * g[1] * g[2] for g in grids]


def test_example_scheduler_in_a_two_worker_sweep(tmp_path):
    (tmp_path / "spec.toml").write_text('workloads = ["vecadd", "sgemm"]\nsizes = ["tiny"]\n'
                                        '[overrides]\n"sm.warp_scheduler" = "youngest_first"\n')
    out = cli("sweep", "spec.toml", "--workers", "2", "--plugin", str(EXAMPLES / "youngest_first.py"),
              "--db", "r.db", cwd=tmp_path).stdout
    assert "2 ran (0 failed)" in out
    with sqlite3.connect(tmp_path / "r.db") as c:
        recs = [json.loads(s) for (s,) in c.execute("SELECT stats FROM runs")]
    assert all("warp_scheduler.youngest_first" in st["plugins"] for r in recs for st in r["stats"])


def test_examples_pass_the_conformance_harness():
    targets = [Target.plugin("warp_scheduler", "youngest_first"),
               Target.plugin("cta_scheduler", "cta_throttle", {"max_ctas": 2}),
               Target.plugin("operand_storage", "slow_high_registers", {"threshold": 8})]
    reps = check_targets(targets, plugins=[str(EXAMPLES / f) for f, *_ in CASES], workloads=("vecadd", "reduction"),
                         pure_python_workloads=("reduction",))
    assert all(r.ok for r in reps), "\n".join(r.summary() for r in reps)
