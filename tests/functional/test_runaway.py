"""Runaway launches end in a clear error within seconds (functional.runaway): spin
loops are detected, budgets scale with the launch, a wall-clock limit stops a
launch, and a spin that another warp ends completes."""

import time

import numpy as np
import pytest

import tlpsim
from tlpsim.errors import KernelError, TlpsimError
from tlpsim.functional.runaway import (
    DEFAULT_BUDGET_FACTOR,
    InfiniteLoop,
    InstructionBudgetExceeded,
    TimeLimitExceeded,
    launch_limits,
)

SPIN = r'''
extern "C" __global__ void spin(volatile int* flag, int* out) {
    while (flag[0] == 0) { }
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}'''


def test_spin_on_a_flag_nobody_sets_is_an_infinite_loop_named_within_seconds():
    with tlpsim.Device():
        k = tlpsim.RawKernel(SPIN, "spin")
        t0 = time.perf_counter()
        with pytest.raises(InfiniteLoop) as exc:
            k((4,), (128,), (tlpsim.zeros(1, np.int32), tlpsim.zeros(512, np.int32)))
        assert time.perf_counter() - t0 < 5
    msg = str(exc.value)
    assert "infinite loop: 16 warp(s) (warps 0-3 of CTA (0, 0, 0) and 3 more CTAs)" in msg
    assert "without changing any register" in msg and "kernel spin" in msg
    assert exc.value.line and f"line {exc.value.line}" in msg and "PTX lines" in msg


def test_spin_around_a_barrier_is_an_infinite_loop():
    src = r'''
    extern "C" __global__ void barspin(int* out) {
        __shared__ int flag;
        if (threadIdx.x == 0) flag = 0;
        __syncthreads();
        while (flag == 0) { __syncthreads(); }
        out[threadIdx.x] = flag;
    }'''
    with tlpsim.Device():
        k = tlpsim.RawKernel(src, "barspin")
        with pytest.raises(InfiniteLoop, match="kernel barspin"):
            k((1,), (64,), (tlpsim.zeros(64, np.int32),))


def test_warps_spinning_while_the_producer_waits_at_a_barrier():
    # warp 1 spins on a shared flag that warp 0 sets only after a barrier warp 1 never reaches
    src = r'''
    extern "C" __global__ void split(int* out) {
        __shared__ volatile int flag;
        if (threadIdx.x == 0) flag = 0;
        if (threadIdx.x >= 32) { while (flag == 0) { } }
        else { __syncthreads(); flag = 1; }
        out[threadIdx.x] = flag;
    }'''
    with tlpsim.Device():
        k = tlpsim.RawKernel(src, "split")
        with pytest.raises(InfiniteLoop, match=r"warp\(s\) wait at a barrier"):
            k((1,), (64,), (tlpsim.zeros(64, np.int32),))


def test_a_flag_set_by_another_cta_in_the_chunk_ends_the_spin():
    # CTA 0 waits for CTA 1; the engine runs the lowest PC first, so without parking
    # the spinning warps the producer would never run
    src = r'''
    extern "C" __global__ void handoff(volatile int* flag, int* out) {
        if (blockIdx.x == 0) {
            while (flag[0] == 0) { }
            out[threadIdx.x] = flag[0] + 1;
        } else {
            out[64 + threadIdx.x] = 7;
            __threadfence();
            if (threadIdx.x == 0) flag[0] = 41;
        }
    }'''
    with tlpsim.Device():
        k = tlpsim.RawKernel(src, "handoff")
        flag, out = tlpsim.zeros(1, np.int32), tlpsim.zeros(128, np.int32)
        k((2,), (64,), (flag, out))
        np.testing.assert_array_equal(out.get(), [42] * 64 + [7] * 64)


def test_a_wait_for_a_cta_of_a_later_chunk_names_the_chunk():
    src = r'''
    extern "C" __global__ void later(volatile int* flag) {
        if (blockIdx.x == 0) { while (flag[0] == 0) { } }
        else if (threadIdx.x == 0) { flag[0] = 1; }
    }'''
    with tlpsim.Device(chunk_threads=32):
        k = tlpsim.RawKernel(src, "later")
        with pytest.raises(InfiniteLoop, match=r"runs CTAs 0-0 of 2 together.*chunk_threads"):
            k((2,), (32,), (tlpsim.zeros(1, np.int32),))


COUNTING = r'''
extern "C" __global__ void counting(volatile int* out, int stop_cta) {
    int i = 0;
    if (blockIdx.x == stop_cta) { for (;;) { out[blockIdx.x] = i++; } }
    out[blockIdx.x] = -1;
}'''


def test_one_runaway_warp_exceeds_the_per_warp_budget():
    # registers change every iteration (no spin), so the budget must catch it; the
    # other 63 CTAs finish and cannot hide the one warp that does not
    with tlpsim.Device(budget_factor=50):
        k = tlpsim.RawKernel(COUNTING, "counting")
        n_static = len(tlpsim.Device.current().compiled(k.program.module, k.kernel).fn.instructions)
        with pytest.raises(InstructionBudgetExceeded) as exc:
            k((64,), (32,), (tlpsim.zeros(64, np.int32), np.int32(5)))
    msg = str(exc.value)
    assert f"per-warp instruction budget of {50 * n_static:,} (factor 50 × {n_static} static instructions)" in msg
    assert "1 warp(s) (warp 0 of CTA (5, 0, 0))" in msg and "CTA (5, 0, 0)" in msg
    assert "budget_factor" in msg and "TLPSIM_BUDGET_FACTOR" in msg


def test_budget_factor_from_the_environment(monkeypatch):
    monkeypatch.setenv("TLPSIM_BUDGET_FACTOR", "20")
    with tlpsim.Device() as dev:
        assert dev.budget_factor == 20
        k = tlpsim.RawKernel(COUNTING, "counting")
        with pytest.raises(InstructionBudgetExceeded, match="factor 20 "):
            k((2,), (32,), (tlpsim.zeros(2, np.int32), np.int32(1)))
    monkeypatch.setenv("TLPSIM_BUDGET_FACTOR", "lots")
    with pytest.raises(TlpsimError, match="TLPSIM_BUDGET_FACTOR='lots' is not a number"):
        tlpsim.Device()


def test_total_budget_and_no_budget():
    with tlpsim.Device(budget=5000):
        k = tlpsim.RawKernel(COUNTING, "counting")
        with pytest.raises(InstructionBudgetExceeded, match="instruction budget of 5,000 warp instructions"):
            k((2,), (32,), (tlpsim.zeros(2, np.int32), np.int32(0)))
    with pytest.raises(TlpsimError, match="budget must be positive"):
        tlpsim.Device(budget=-1)
    with pytest.raises(TlpsimError, match="budget_factor must be a positive number"):
        tlpsim.Device(budget_factor="x")


def test_time_limit_stops_a_launch():
    with tlpsim.Device(budget=None, time_limit=0.5):
        k = tlpsim.RawKernel(COUNTING, "counting")
        t0 = time.perf_counter()
        with pytest.raises(TimeLimitExceeded, match=r"time limit of 0.5 s.*kernel counting, CTA \(0, 0, 0\)"):
            k((1,), (32,), (tlpsim.zeros(1, np.int32), np.int32(0)))
        assert time.perf_counter() - t0 < 3


def test_launch_limits_formula():
    lim = launch_limits(100, 64)
    assert lim.per_warp == DEFAULT_BUDGET_FACTOR * 100 and lim.budget == DEFAULT_BUDGET_FACTOR * 100 * 64
    assert launch_limits(100, 64, budget=123).budget == 123
    none = launch_limits(100, 64, budget=None)
    assert none.budget is None and none.per_warp is None


def test_long_legitimate_loops_are_not_runaway():
    # 20,000 iterations per thread with a loop-carried register: far within factor x static
    src = r'''
    extern "C" __global__ void longloop(float* out, int n) {
        float acc = 0.f;
        for (int i = 0; i < n; ++i) acc += 0.5f;
        out[threadIdx.x] = acc;
    }'''
    with tlpsim.Device():
        k = tlpsim.RawKernel(src, "longloop")
        out = tlpsim.zeros(32, np.float32)
        k((1,), (32,), (out, np.int32(20000)))
        assert (out.get() == 10000.0).all()


def test_kernel_error_base_class_still_catches_runaways():
    with tlpsim.Device():
        k = tlpsim.RawKernel(SPIN, "spin")
        with pytest.raises(KernelError):
            k((1,), (32,), (tlpsim.zeros(1, np.int32), tlpsim.zeros(32, np.int32)))
