"""The GPGPU-Sim reference kernels (../shared/reference/kernels) in tlpsim's functional
model: same PTX (PTX ISA 7.8, sm_35), inputs from the programs' LCG, same launches.
The output must pass the program's own check, and the instruction counts must equal
GPGPU-Sim's exactly:

* warp instructions == `warp_insn` (gpgpu_n_tot_w_icount);
* thread instructions counting only lanes whose guard predicate held (the trace's
  `executed` mask) == `gpu_tot_sim_insn`. GPGPU-Sim drops predicated-off lanes from
  an instruction's active mask before counting, as tlpsim's `rec.thread_instructions`
  does; the trace's `active_thread_instructions` counts the SIMT mask, larger by the number of
  predicated-off lanes (e.g. every lane of an untaken `@%p bra`).

No tolerance is needed: measured, all six kernels match to the instruction. They
are all small enough in functional mode (about 7 s together on the 2-core
development machine, mm_naive the largest at ~3 s) to run in the suite.

The programs (LCG, launches, checks) live in tlpsim.validate.programs; the harness
benchmarks/reference_kernels.py (--timing) and `tlpsim validate` compare timing with
GPGPU-Sim.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REF_DIR = Path(os.environ.get("TLPSIM_REFERENCE_DIR", ROOT.parent / "shared" / "reference" / "kernels"))
HARNESS = ROOT / "benchmarks" / "reference_kernels.py"

needs_ref = pytest.mark.skipif(not (REF_DIR / "gpgpusim-gtx480.json").exists(),
                                reason=f"GPGPU-Sim reference data not present ({REF_DIR})")


def _harness():
    name = "tlpsim_bench_reference_kernels"
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, HARNESS)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses resolve their module through sys.modules
        spec.loader.exec_module(mod)
    return mod


KERNELS = ["histogram_atomic", "spmv_csr", "kmeans_assign", "blackscholes", "conv2d_smem", "mm_naive"]


@pytest.fixture(scope="module")
def refs():
    return _harness().load_reference(REF_DIR)


_RUNS: dict[str, dict] = {}


def _run(name: str, refs: dict) -> dict:
    if name not in _RUNS:
        _RUNS[name] = _harness().run_functional(name, refs[name], REF_DIR)
    return _RUNS[name]


@needs_ref
@pytest.mark.parametrize("name", KERNELS)
def test_reference_kernel_counts_match_gpgpusim(name, refs):
    ref = refs[name]
    row = _run(name, refs)
    assert row["verified"], f"{name}: output check failed ({row['bad']} bad): {row['output']}"
    assert row["launch_shape_ok"], f"{name}: launches differ from the reference's grid/block/count"
    assert row["warp_insn"] == ref["warp_insn"], (
        f"{name}: {row['warp_insn']} warp instructions, GPGPU-Sim {ref['warp_insn']}")
    assert row["thread_insn_executed"] == ref["gpu_tot_sim_insn"], (
        f"{name}: {row['thread_insn_executed']} executed thread instructions, "
        f"GPGPU-Sim gpu_tot_sim_insn {ref['gpu_tot_sim_insn']}")
    # active lanes include predicated-off ones: between executed lanes and every lane
    assert row["thread_insn_executed"] <= row["thread_insn_active"] <= ref["gpgpu_n_tot_thrd_icount"]


@needs_ref
@pytest.mark.parametrize("name", ["histogram_atomic", "kmeans_assign"])
def test_integer_outputs_reproduce_the_reference_run(name, refs):
    """Outputs without floating-point rounding in them (bin counts, cluster counts)
    reproduce the reference program's line exactly: the inputs are the same."""
    row = _run(name, refs)
    assert row["output"] == refs[name]["program_output"]


def test_lcg_matches_the_c_recurrence():
    from tlpsim.validate.lcg import LCG

    a, b = LCG(12345), LCG(12345)
    seq = [a.next() for _ in range(1000)]
    assert b.draws(1000).tolist() == seq
    assert b.draws(3).tolist() == [a.next() for _ in range(3)]
    assert seq[0] == (12345 * 1664525 + 1013904223) % 2**32
