"""A run's compile options are explicit and the same for its functional and timing
parts: `tlpsim run W --mode functional --config P` compiles with preset P's [gpu]
arch and register cap, as the timing run does, and every launch record says how
its PTX was made."""

from __future__ import annotations

import json

import numpy as np
from report_helpers import run_cli

import tlpsim

SGEMM_FLAGS = ["-ptx", "-arch=sm_80", "-O3", "--std=c++17", "-maxrregcount=63"]


def _launches(tmp_path, *args):
    d = tmp_path / "-".join(args)
    res = run_cli("run", "sgemm", "--size", "tiny", "--run-dir", str(d), *args)
    assert res.exit_code == 0, res.output
    return res.output, json.loads((d / "stats.json").read_text())["launches"]


def test_functional_and_timing_runs_compile_the_same_ptx(tmp_path):
    out_f, func = _launches(tmp_path, "--mode", "functional", "--config", "gtx480")
    out_t, timing = _launches(tmp_path, "--mode", "timing", "--config", "gtx480")
    keys = ("kernel", "registers", "shared_bytes", "warp_instructions", "thread_instructions", "compile")
    assert [{k: r[k] for k in keys} for r in func] == [{k: r[k] for k in keys} for r in timing]
    (launch,) = func
    # sgemm_tiled needs 74 registers uncapped: the cap of the preset is what both runs used
    assert launch["registers"] == 64 and launch["warp_instructions"] == 25008
    assert launch["compile"] == {"arch": "sm_80", "maxrregcount": 63, "nvcc": SGEMM_FLAGS}
    assert "functional mode; compiled as preset gtx480 (sm_80, -maxrregcount=63)" in out_f.splitlines()[0]
    # a preset without a register cap compiles without one in functional mode too
    _, uncapped = _launches(tmp_path, "--mode", "functional", "--config", "gtx980")
    assert uncapped[0]["registers"] == 74 and uncapped[0]["compile"]["maxrregcount"] is None


def test_device_config_sets_the_compile_options_in_functional_mode():
    src = r'''extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }'''
    with tlpsim.Device(mode="functional", config="gtx480") as dev:
        assert dev.compile_options == {"arch": "sm_80", "maxrregcount": 63}
        x = tlpsim.asarray(np.ones(32, np.float32))
        rec = tlpsim.RawKernel(src, "k")((1,), (32,), (x,))
    assert rec.compile["maxrregcount"] == 63 and "-maxrregcount=63" in rec.compile["nvcc"]
    with tlpsim.Device() as dev:  # no config: nvcc's defaults, as before
        assert dev.compile_options == {"arch": "sm_80", "maxrregcount": None}
        rec = tlpsim.RawKernel(src, "k")((1,), (32,), (tlpsim.asarray(np.ones(32, np.float32)),))
    assert rec.compile == {"arch": "sm_80", "maxrregcount": None, "nvcc": ["-ptx", "-arch=sm_80", "-O3", "--std=c++17"]}
