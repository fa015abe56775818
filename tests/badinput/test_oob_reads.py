"""Global loads outside every allocation: by default CUDA's illegal-address error
(naming kernel, CTA, thread, PTX line and address); with Device(oob_reads="zero")
/ `tlpsim run --oob-reads zero` they read 0 and are counted per launch. Stores
(and atomics) out of bounds stay errors, as do shared-memory and misaligned loads."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from badinput_helpers import cli

import tlpsim
from tlpsim.errors import KernelError, TlpsimError
from tlpsim.report.console import functional_report, launch_rows

SRC = r'''
extern "C" __global__ void gather(const float* x, const int* idx, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[idx[i]];
}
extern "C" __global__ void gather4(const float4* x, const int* idx, float4* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[idx[i]];
}
extern "C" __global__ void scatter(float* x, const int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[idx[i]] = 1.0f;
}
extern "C" __global__ void generic(const float* x, const int* idx, float* y, int n) {
    __shared__ float s[64];
    int i = threadIdx.x;
    s[i] = i;
    __syncthreads();
    const float* p = (i & 1) ? &s[i ^ 1] : x + idx[i];   // a generic pointer: shared or global
    if (i < n) y[i] = *p;
}
'''
N = 64
BAD = {5: 100_000, 9: -100_000, 40: 1 << 24}  # past, before and far past every allocation


def _idx() -> np.ndarray:
    idx = np.arange(N, dtype=np.int32)
    for lane, v in BAD.items():
        idx[lane] = v
    return idx


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_out_of_bounds_reads_return_zero_and_are_counted(mode):
    x = np.arange(N, dtype=np.float32) + 1
    x4 = np.arange(4 * N, dtype=np.float32).reshape(N, 4) + 1
    with tlpsim.Device(mode=mode, oob_reads="zero") as dev:
        d_x = tlpsim.asarray(x)
        mod = tlpsim.RawModule(code=SRC)
        y = tlpsim.zeros(N, np.float32)
        rec = mod.get_function("gather")((1,), (N,), (d_x, tlpsim.asarray(_idx()), y, np.int32(N)))
        y4 = tlpsim.zeros((N, 4), np.float32)
        rec4 = mod.get_function("gather4")((1,), (N,), (tlpsim.asarray(x4), tlpsim.asarray(_idx()), y4,
                                                        np.int32(N)))
        assert not dev.launches[0].from_cache
    expect = x.copy()
    expect[list(BAD)] = 0
    np.testing.assert_array_equal(y.get(), expect)
    expect4 = x4.copy()
    expect4[list(BAD)] = 0
    np.testing.assert_array_equal(y4.get(), expect4)
    assert rec.oob_reads == 3 and rec4.oob_reads == 3  # a vector load counts once per lane
    if mode == "timing":
        assert rec.stats.cycles > 0


def test_generic_loads_zero_only_their_global_lanes():
    with tlpsim.Device(oob_reads="zero"):
        k = tlpsim.RawModule(code=SRC).get_function("generic")
        y = tlpsim.zeros(N, np.float32)
        x = np.arange(N, dtype=np.float32) + 1
        rec = k((1,), (N,), (tlpsim.asarray(x), tlpsim.asarray(_idx()), y, np.int32(N)))
    lanes = np.arange(N)
    expect = np.where(lanes & 1, lanes ^ 1, x).astype(np.float32)
    expect[[5, 9, 40]] = [4, 8, 0]  # 5 and 9 are odd (read shared); 40 reads outside every allocation
    np.testing.assert_array_equal(y.get(), expect)
    assert rec.oob_reads == 1


def test_default_is_the_illegal_address_error_with_a_hint():
    with tlpsim.Device() as dev:
        assert dev.oob_reads == "error"
        k = tlpsim.RawModule(code=SRC).get_function("gather")
        with pytest.raises(KernelError) as err:
            k((1,), (N,), (tlpsim.zeros(N, np.float32), tlpsim.asarray(_idx()), tlpsim.zeros(N, np.float32),
                           np.int32(N)))
    msg = str(err.value)
    assert msg.startswith("illegal memory access: out-of-bounds access at global address ")
    assert "in kernel gather, CTA (0, 0, 0), thread (5, 0, 0), <cuda>.ptx line " in msg
    assert msg.endswith("; to let loads outside every allocation read 0, use Device(oob_reads='zero') or "
                        "--oob-reads zero")


def test_stores_out_of_bounds_stay_errors():
    with tlpsim.Device(oob_reads="zero"):
        k = tlpsim.RawModule(code=SRC).get_function("scatter")
        with pytest.raises(KernelError) as err:
            k((1,), (N,), (tlpsim.zeros(N, np.float32), tlpsim.asarray(_idx()), np.int32(N)))
    msg = str(err.value)
    assert "out-of-bounds access" in msg and "by 'st.global.u32" in msg and "thread (5, 0, 0)" in msg
    assert "oob_reads" not in msg


def test_bad_option_value_is_rejected():
    with pytest.raises(TlpsimError, match="Device oob_reads must be 'error'.*or 'zero'.*not 'ignore'"):
        tlpsim.Device(oob_reads="ignore")


def test_console_and_run_record_report_the_count(tmp_path, capsys):
    with tlpsim.Device(oob_reads="zero"):
        k = tlpsim.RawModule(code=SRC).get_function("gather")
        rec = k((1,), (N,), (tlpsim.zeros(N, np.float32), tlpsim.asarray(_idx()), tlpsim.zeros(N, np.float32),
                             np.int32(N)))
    result = SimpleNamespace(launches=[rec], workload="gather")
    rows = launch_rows(result)
    assert rows[0]["oob_reads"] == 3
    functional_report(result, rows)
    assert "out-of-bounds global reads that returned 0 (--oob-reads zero): 3 lane loads: launch 0 (gather) 3" \
        in capsys.readouterr().out
    res = cli("run", "vecadd", "--size", "tiny", "--mode", "functional", "--oob-reads", "zero",
              "--run-dir", tmp_path / "r")
    assert res.exit_code == 0 and "(--oob-reads zero): 0 lane loads" in res.output
    launches = json.loads((tmp_path / "r" / "stats.json").read_text())["launches"]
    assert [la["oob_reads"] for la in launches] == [0]
    res = cli("run", "vecadd", "--size", "tiny", "--mode", "functional", "--run-dir", tmp_path / "d")
    assert "oob" not in res.output and "oob_reads" not in (tmp_path / "d" / "stats.json").read_text()
