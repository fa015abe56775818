"""The shared-memory carveout of a unified L1/shared array (l1d.shared_carveouts_kb):
the driver's choice on hand-made launches (timing/carveout.py), a cache resized to the
ways the carveout leaves, the config's checks, and the L1 a launch runs with on the
h200 preset (one SM)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register, unregister
from tlpsim.timing.builder import sm_limits
from tlpsim.timing.cache import HIT, MISS, CacheArray
from tlpsim.timing.carveout import choose_carveout, shared_needed
from tlpsim.timing.views import KernelResources

H200 = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
KB = 1024


@pytest.fixture(scope="module")
def limits():
    return sm_limits(load_config("h200"))   # 2,048 threads, 32 CTAs, 64K registers, 1 KB reserved per CTA


def kres(threads: int, regs: int, smem: int) -> KernelResources:
    return KernelResources(threads, regs, smem, 0)


def test_default_is_the_smallest_carveout_keeping_occupancy(limits):
    # no shared memory: 8 CTAs of 256 threads, each still reserving 1 KB: the 8 KB carveout
    assert shared_needed(limits, kres(256, 32, 0)) == 8 * KB
    assert choose_carveout(H200, limits, [kres(256, 32, 0)]) == 8
    # 8 KB + 1 KB per CTA, 4 CTAs by registers (64 regs x 256 threads): 36 KB, so 64
    assert shared_needed(limits, kres(256, 64, 8 * KB)) == 36 * KB
    assert choose_carveout(H200, limits, [kres(256, 64, 8 * KB)]) == 64
    # 8 CTAs of 31 KB (+1): 256 KB, more than the largest: the largest (shared memory limits occupancy)
    assert choose_carveout(H200, limits, [kres(128, 32, 31 * KB)]) == 228
    # launches run together take the largest of their carveouts
    assert choose_carveout(H200, limits, [kres(256, 32, 0), kres(256, 64, 8 * KB)]) == 64
    assert choose_carveout(H200, limits, []) == 0


def test_preference_rounds_up_and_never_lowers_occupancy(limits):
    k = kres(256, 64, 8 * KB)                           # needs 36 KB at its occupancy
    assert choose_carveout(H200, limits, [k], 100) == 228
    assert choose_carveout(H200, limits, [k], 50) == 132  # 50% of 228 = 114 KB: the next carveout up
    assert choose_carveout(H200, limits, [k], 44) == 132  # 100.32 KB: above 100
    assert choose_carveout(H200, limits, [k], 0) == 64    # raised to what the occupancy needs
    with pytest.raises(ValueError, match="percentage 0..100, not 101"):
        choose_carveout(H200, limits, [k], 101)


def test_resize_keeps_the_sets_and_changes_the_ways():
    c = CacheArray(4 * 8 * 128, 8, 128, 32, "lru")       # 4 sets x 8 ways
    set0 = [k * 4 * 128 for k in range(3)]               # three lines of set 0
    for a in set0:
        c.access(a)
        c.fill(a)
    c.resize(4 * 2 * 128)
    assert (c.n_sets, c.assoc, c.size_bytes, len(c)) == (4, 2, 1024, 0)   # emptied
    for a in set0:
        assert c.access(a).status == MISS
        c.fill(a)
    assert c.access(set0[0]).status == MISS              # two ways: the third line evicted the first
    assert c.probe(set0[2]) == HIT
    with pytest.raises(ValueError, match="multiple of 4 sets x 128 B"):
        c.resize(4 * 128 + 128)
    c.access(8 * 4 * 128)                                # a miss waiting for its fill
    with pytest.raises(RuntimeError, match="fills in flight"):
        c.resize(4 * 8 * 128)


@pytest.mark.parametrize("over, match", [
    ({"l1d.carveout_preference": 50, "l1d.shared_carveouts_kb": []}, "carveout_preference .50. needs"),
    ({"l1d.shared_carveouts_kb": [0, 8, 228, 100]}, "distinct sizes >= 0 in increasing order"),
    # 64 sets of 8 ways: a way is 8 KB, and 256 - 100 = 156 KB is not whole ways
    ({"l1d.assoc": 32}, r"carveouts \[100, 132, 164, 196, 228\] leave an L1 that is not a whole number of ways of 8 KiB"),
    ({"l1d.shared_carveouts_kb": [0, 8, 100, 200]}, "largest carveout .200 KiB. must be sm.shared_bytes"),
    ({"l1d.shared_carveouts_kb": [0, 256]}, "leaves no L1"),
])
def test_config_checks(over, match):
    with pytest.raises(ConfigError, match=match):
        load_config("h200", over)


TWICE = r'''
extern "C" __global__ void twice(const float* a, float* out, int n) {
    float s = 0.0f;
    for (int pass = 0; pass < 2; pass++)
        for (int i = threadIdx.x; i < n; i += 32) s += a[i];
    out[threadIdx.x] = s;
}'''


def _run_twice(overrides: dict, kernel_preference: int = -1) -> tuple:
    """One warp reads 64 KB (512 lines) twice on one h200 SM: (LaunchStats, the L1
    capacity its port reported at kernel_start)."""
    seen = {}

    class Probe(ExecutionChecker):
        events = frozenset({"kernel_start"})

        def on_kernel_start(self, kernel, now):
            seen["l1"] = self.port.capacity("l1")

    name = f"t_{uuid.uuid4().hex[:8]}"
    register("execution_checker", name)(Probe)
    try:
        cfg = load_config("h200", {"gpu.n_sms": 1, "sm.execution_checker": name, "l1i.perfect": True, **overrides})
        n = 64 * KB // 4
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False) as dev:
            a = tlpsim.asarray(np.arange(n, dtype=np.float32) % 7)
            out = tlpsim.zeros(32, np.float32)
            k = tlpsim.RawKernel(TWICE, "twice")
            k.preferred_shared_memory_carveout = kernel_preference
            k((1,), (32,), (a, out, np.int32(n)))
            got = out.get()
            (rec,) = dev.launches
    finally:
        unregister("execution_checker", name)
    ref = 2 * (np.arange(n, dtype=np.float32) % 7).reshape(-1, 32).sum(axis=0)
    assert np.allclose(got, ref)
    return rec.stats, seen["l1"]


def test_the_launch_runs_with_the_l1_its_carveout_leaves():
    st, cap = _run_twice({})
    # 32-thread CTAs without shared memory: 32 per SM (the CTA limit) of 1 KB reserved each, the
    # 32 KB carveout, a 224 KB L1 (448 ways of 4 sets) holding all 512 lines
    assert (st.l1d_kb, cap) == (224, 224 * KB)
    assert st.l1d_hit_rate == 0.5                      # the second pass hits every line
    st, cap = _run_twice({"l1d.carveout_preference": 100})
    # the largest carveout leaves 28 KB (56 ways of 4 sets): LRU over 128 lines a set misses them all
    assert (st.l1d_kb, cap) == (28, 28 * KB)
    assert st.l1d_hit_rate == 0.0
    st, _ = _run_twice({"l1d.shared_carveouts_kb": [], "l1d.size_kb": 28, "l1d.assoc": 56})
    assert (st.l1d_kb, st.l1d_hit_rate) == (28, 0.0)   # a fixed L1 of the same geometry: the same


def test_a_kernels_own_preference_comes_first():
    st, cap = _run_twice({}, kernel_preference=100)
    assert (st.l1d_kb, cap, st.l1d_hit_rate) == (28, 28 * KB, 0.0)
    st, _ = _run_twice({"l1d.carveout_preference": 100}, kernel_preference=0)
    assert (st.l1d_kb, st.l1d_hit_rate) == (224, 0.5)   # 0 asks for the least: what the occupancy needs


def test_cudart_records_the_carveout_attribute():
    from tlpsim.cudart import api_kernels
    from tlpsim.cudart.errors import CudaError
    from tlpsim.cudart.modules import KernelEntry

    entry = KernelEntry(module=None, name="_Z4twicePKfPfi")

    class Runtime:
        def kernel(self, func):
            return entry

    api_kernels.func_set_attribute(Runtime(), [0, 9, 100, 0])   # cudaFuncAttributePreferredSharedMemoryCarveout
    assert entry.carveout == 100
    api_kernels.func_set_attribute(Runtime(), [0, 1, 0, 0])     # cudaFuncSetCacheConfig(PreferShared): no change
    assert entry.carveout == 100
    with pytest.raises(CudaError, match="-1 or a percentage 0..100, not 101"):
        api_kernels.func_set_attribute(Runtime(), [0, 9, 101, 0])
