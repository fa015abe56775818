"""A run's compile options are explicit and the same for its functional and timing
parts: `tlpsim run W --mode functional --config P` compiles with preset P's [gpu]
toolchain, target and register cap, as the timing run does, and every launch record
says how its PTX was made."""

from __future__ import annotations

import json

import numpy as np
from report_helpers import run_cli

import tlpsim

SGEMM_FLAGS = ["-ptx", "-arch=sm_80", "-O3", "--std=c++17", "-maxrregcount=63"]
SGEMM_NVRTC_FLAGS = ["--gpu-architecture=compute_35", "--std=c++17", "--maxrregcount=63"]  # then -I CUDA 11.8's headers


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
    # gtx480 compiles with the papers' era toolchain: NVRTC 11.8 for compute_35, ptxas 11.8 for
    # sm_35, the preset's cap of 63 held although sgemm_tiled has __launch_bounds__ (nvrtc.with_register_cap)
    assert launch["registers"] == 63 and launch["warp_instructions"] == 25104
    flags = launch["compile"].pop("nvcc")
    assert flags[:3] == SGEMM_NVRTC_FLAGS and flags[3].startswith("-I") and flags[3].endswith("cuda_runtime/include")
    assert launch["compile"] == {"arch": "sm_35", "maxrregcount": 63, "toolchain": "cuda11"}
    assert "functional mode; compiled as preset gtx480 (cuda11 sm_35, -maxrregcount=63)" in out_f.splitlines()[0]
    # gpu.toolchain=cuda13 is the CUDA 13.5 compilation of before: sm_80, capped at 63 (64 allocated)
    out13, cuda13 = _launches(tmp_path, "--mode", "functional", "--config", "gtx480", "--set", "gpu.toolchain=cuda13")
    assert cuda13[0]["registers"] == 64 and cuda13[0]["warp_instructions"] == 25008
    assert cuda13[0]["compile"] == {"arch": "sm_80", "maxrregcount": 63, "nvcc": SGEMM_FLAGS, "toolchain": "cuda13"}
    assert "compiled as preset gtx480 (cuda13 sm_80, -maxrregcount=63)" in out13.splitlines()[0]
    # a preset without a register cap compiles without one in functional mode too (gtx980: sm_52)
    _, uncapped = _launches(tmp_path, "--mode", "functional", "--config", "gtx980")
    assert uncapped[0]["registers"] == 64 and uncapped[0]["compile"]["maxrregcount"] is None
    assert uncapped[0]["compile"]["arch"] == "sm_52"


def test_device_config_sets_the_compile_options_in_functional_mode():
    src = r'''extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }'''
    with tlpsim.Device(mode="functional", config="gtx480") as dev:
        assert dev.compile_options == {"toolchain": "cuda11", "arch": "sm_35", "maxrregcount": 63}
        x = tlpsim.asarray(np.ones(32, np.float32))
        rec = tlpsim.RawKernel(src, "k")((1,), (32,), (x,))
    assert rec.compile["maxrregcount"] == 63 and "--maxrregcount=63" in rec.compile["nvcc"]
    assert rec.compile["toolchain"] == "cuda11" and rec.compile["arch"] == "sm_35"
    with tlpsim.Device(mode="functional", config="gtx480", toolchain="cuda13") as dev:
        assert dev.compile_options == {"toolchain": "cuda13", "arch": "sm_80", "maxrregcount": 63}
    with tlpsim.Device() as dev:  # no config: nvcc's defaults, as before
        assert dev.compile_options == {"toolchain": "cuda13", "arch": "sm_80", "maxrregcount": None}
        rec = tlpsim.RawKernel(src, "k")((1,), (32,), (tlpsim.asarray(np.ones(32, np.float32)),))
    assert rec.compile == {"arch": "sm_80", "maxrregcount": None, "nvcc": ["-ptx", "-arch=sm_80", "-O3", "--std=c++17"],
                           "toolchain": "cuda13"}
