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


# ---------------------------------------------------------------- two-plug-in sketches (port v2)

SKETCHES = [str(EXAMPLES / "duet_like.py"), str(EXAMPLES / "expars_like.py")]
# one SM, so the tiny workloads put more CTAs on it than the baseline's slots hold, and an RF
# of 20,480 registers, so vecadd's 10 resident CTAs (at ptxas's count) leave too little spare
# RF for every parked context and some go to the scratchpad (the GTX480's 32,768 hold them all)
# 6 CTAs of vecadd fit, and the 24,576 registers leave spare RF beside them, so parked contexts
# go to the RF and, when it is full, the scratchpad (20,480 left the RF no room for any once
# gtx480's schedulers took turns, sm.scheduler_order)
DUET = {"gpu.n_sms": 1, "sm.registers": 24576, "sm.resource_allocator": {"impl": "duet_alloc", "extra_ctas": 4},
        "sm.context_switcher": "duet_switch"}
# a 64 KB register file: spmv's 48-register CTAs of 256 threads (CUDA 13.5's ptxas) fit
# once in the RF, a second one only with 32 of its registers per thread in the scratchpad
EXPARS = {"gpu.n_sms": 2, "sm.registers": 16384, "gpu.toolchain": "cuda13", "sm.resource_allocator": "expars_alloc",
          "sm.operand_storage": "expars_storage"}


def test_sketches_pass_the_conformance_harness():
    targets = [Target("duet_like", "gtx480", DUET), Target("expars_like", "gtx480", EXPARS)]
    duet, expars = check_targets(targets, plugins=SKETCHES, workloads=("vecadd", "reduction", "spmv"),
                                 pure_python_workloads=("vecadd",))
    assert duet.ok, duet.summary()
    assert expars.ok, expars.summary()


def _launches(overrides, workload):
    from tlpsim.policies.external import activate
    from tlpsim.testing.conformance import run_workload

    activate(SKETCHES)
    run = run_workload("gtx480", overrides, workload)
    assert run["verified"]
    return [json.loads(la["stats"]) for la in run["launches"]]


def test_duet_sketch_keeps_more_ctas_than_the_baseline_and_moves_contexts_through_rf_and_scratchpad():
    st, = _launches(DUET, "vecadd")
    assert st["avg_resident_ctas"] > st["ctas_per_sm_limit"] == 6
    alloc, switch = st["plugins"]["resource_allocator.duet_alloc"], st["plugins"]["context_switcher.duet_switch"]
    assert alloc["extra_ctas"] > 0
    assert switch["switch_outs"] > 0 and switch["switch_ins"] >= switch["switch_outs"]
    assert switch["rf_bytes"] > 0 and switch["smem_bytes"] > 0


def test_expars_sketch_admits_split_ctas_and_charges_scratchpad_banks():
    scalar, vector = _launches(EXPARS, "spmv")
    for st in (scalar, vector):
        assert st["ctas_per_sm_limit"] == 1 and st["avg_resident_ctas"] > 1
        alloc, ops = st["plugins"]["resource_allocator.expars_alloc"], st["plugins"]["operand_storage.expars_storage"]
        assert alloc["split_ctas"] > 0 and alloc["spm_bytes"] == alloc["split_ctas"] * 32 * 4 * 256
        assert ops["spm_reads"] > 0 and ops["spm_cycles"] == ops["spm_reads"] + ops["spm_writes"]
        # each register moved through the scratchpad adds 32 lane accesses of the table's
        # smem banks to those of the shared-memory instructions (active lanes)
        lane_frac = st["thread_insts"] / (st["warp_insts"] * 32)
        insts = sum(s["smem_accesses"] for s in st["per_sm"]) * 32 * lane_frac
        assert st["energy"]["events"]["smem"]["access"] == pytest.approx(
            insts + 32 * (ops["spm_reads"] + ops["spm_writes"]))


# ---------------------------------------------------------------- the mechanism sketches

def test_rfv_pool_sketch_throttles_on_a_30_percent_pool_and_passes_the_harness():
    (rep,) = check_targets([Target.plugin("operand_storage", "rfv_pool", {"pool_fraction": 0.3})],
                           plugins=[str(EXAMPLES / "rfv_pool.py")], workloads=("spmv", "reduction"),
                           pure_python_workloads=("reduction",))
    assert rep.ok, rep.summary()
    out = cli("run", "spmv", "--size", "tiny", "--plugin", str(EXAMPLES / "rfv_pool.py"), "--set",
              'sm.operand_storage={impl="rfv_pool", pool_fraction=0.3}', "--json", cwd=EXAMPLES).stdout
    rec = json.loads(out)
    c = rec["stats"][-1]["plugins"]["operand_storage.rfv_pool"]
    pool = int(0.3 * rec["config"]["sm"]["registers"] * 4) // 128     # warp registers
    assert rec["verified"] and c["throttled"] > 0 and c["renames"] == c["releases"]
    # the pool binds (warps throttled) and is never exceeded; the guarantor's reserve keeps
    # the peak below the pool by at most one warp's registers; peak and mean are levels
    assert pool - 64 < c["entries_peak"] <= pool and 0 < c["entries_mean"] < c["entries_peak"]
    assert rec["stats"][-1]["plugin_aggs"] == {"operand_storage.rfv_pool": {"entries_peak": "max",
                                                                            "entries_mean": "mean"}}


def test_dmr_replay_sketch_checks_replays_stalls_and_passes_the_harness():
    (rep,) = check_targets([Target.plugin("execution_checker", "dmr_replay", {"replayq_entries": 2})],
                           plugins=[str(EXAMPLES / "dmr_replay.py")], pure_python_workloads=("reduction",))
    assert rep.ok, rep.summary()
    out = cli("run", "sgemm", "--size", "tiny", "--plugin", str(EXAMPLES / "dmr_replay.py"), "--set",
              'sm.execution_checker={impl="dmr_replay", replayq_entries=2}', "--json", cwd=EXAMPLES).stdout
    rec = json.loads(out)
    (st,) = rec["stats"]
    c = st["plugins"]["execution_checker.dmr_replay"]
    assert rec["verified"] and c["replays"] > 0 and c["full_stalls"] > 0 and c["queue_peak"] == 2
    # each full queue stalls its scheduler one cycle (counted when it had a warp to issue)
    assert 0 < sum(s["stall_reasons"].get("issue_stalled", 0) for s in st["per_sm"]) <= c["full_stalls"]
