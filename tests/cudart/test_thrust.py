"""thrust / CUB (CCCL, shipped with the toolchain) on tlpsim (issue 28 §2):
tests/cudart/programs/thrust_algorithms.cu sorts, sorts by key, reduces, scans
and transforms on the device and checks each against a CPU loop; the values it
prints are compared here with NumPy. Before the fix every CUB algorithm failed
with cudaErrorInvalidDeviceFunction before any kernel: cudaFuncGetAttributes
reported the PTX ISA version as ptxVersion, which matched no architecture in
CUB's __CUDA_ARCH_LIST__; transform then needed `cp.async`."""

from __future__ import annotations

import json

import numpy as np

from .conftest import run_exec

N = 3000


def test_thrust_sort_reduce_scan_transform(binaries):
    r = run_exec(binaries["thrust_algorithms"])
    assert r.returncode == 0, r.stdout + r.stderr
    keys = (np.arange(N, dtype=np.uint64) * 2654435761 % (1 << 32)) % 100003
    order = np.argsort(-keys.astype(np.int64), kind="stable")  # descending; the first of the largest key
    ints = np.arange(N) % 7 - 3
    inclusive = np.cumsum(ints)
    z = -(np.float32(3.0) * (np.float32(0.5) * np.arange(N, dtype=np.float32)) + (1 - np.arange(N, dtype=np.float32)))
    assert r.stdout.splitlines() == [
        f"sort: ok first {keys.min()} last {keys.max()}",
        f"sort_by_key: ok first value {order[0]}",
        f"reduce: ok sum {keys.sum()} max {keys.max()}",
        f"scan: ok inclusive last {inclusive[-1]} exclusive last {inclusive[-2] + 10}",
        f"transform: ok z[{N - 1}] = {z[-1]:g}",
        "PASS"]
    assert "DeviceRadixSortSingleTileKernel" in r.stderr and "DeviceScanKernel" in r.stderr
    assert "transform_kernel" in r.stderr


def test_a_failing_call_is_named_in_the_exit_summary_even_after_an_abort(tmp_path):
    """thrust throws on a failed cudaMalloc and the program aborts without the runtime's
    exit handler: the summary still names the call (failed_calls.jsonl)."""
    src = tmp_path / "too_big.cu"
    src.write_text("#include <thrust/device_vector.h>\n"
                   "int main() { thrust::device_vector<float> d(size_t(1) << 40); return (int)d.size(); }\n")
    r = run_exec(src)
    assert r.returncode == 128 + 6  # SIGABRT: thrust's uncaught bad_alloc
    assert "tlpsim: failing runtime calls: cudaMalloc -> cudaErrorMemoryAllocation" in r.stderr
    assert "cudaGetLastError" not in r.stderr.split("failing runtime calls:")[1]


def test_failed_calls_are_counted_in_the_summary(binaries, tmp_path):
    r = run_exec("--run-dir", tmp_path / "run", "--", binaries["error_api"])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    calls = {row["call"]: row for row in summary["failed_calls"]}
    assert calls["cudaStreamSynchronize"]["error"] == "cudaErrorInvalidResourceHandle"
    assert "tlpsim: failing runtime calls: " in r.stderr and "cudaStreamSynchronize -> " in r.stderr
