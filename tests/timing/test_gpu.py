"""Whole-GPU timing runs: dense equals sparse, determinism, the CTA-limit knob,
a watchdog, and exact unit latencies (L1 hit, RF bank conflict)."""

from dataclasses import asdict

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.warp.base import WarpView
from tlpsim.policies.warp.gto import GreedyThenOldest
from tlpsim.policies.warp.lrr import LooseRoundRobin
from tlpsim.policies.warp.two_level import TwoLevel
from tlpsim.timing.builder import latency_tables
from tlpsim.session import build_gpu
from tlpsim.timing.static import StaticKernel

KERNEL = r'''
extern "C" __global__ void mix(const float* a, float* b, int* hist, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? a[i] : 0.f;
    s[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x & 1) v += s[threadIdx.x ^ 1] * 2.0f; else v = sqrtf(fabsf(v));
    if (i < n) { b[i] = v; atomicAdd(&hist[i & 15], 1); }
}'''


def _trace(n=4096, block=128):
    with tlpsim.Device() as dev:
        k = tlpsim.RawKernel(KERNEL, "mix")
        a = tlpsim.asarray(np.arange(n, dtype=np.float32))
        rec = k(((n + block - 1) // block,), (block,), (a, tlpsim.zeros(n, np.float32), tlpsim.zeros(16, np.int32),
                                                       np.int32(n)))
        ck = dev._compiled[(id(k.program.module), k.kernel.name)]
    return ck, rec


def _simulate(ck, rec, dense=False, overrides=()):
    cfg = load_config("gtx480", overrides)
    gpu = build_gpu(cfg, dense=dense)
    sk = StaticKernel(ck.fn, latency_tables(cfg), ck.oc.space_of_access)
    gpu.launch(sk, rec.trace, rec.resources.registers, rec.resources.shared_bytes)
    (st,) = gpu.run()
    d = asdict(st)
    d.pop("wall_seconds")
    return d


@pytest.fixture(scope="module")
def traced():
    return _trace()


def test_dense_and_sparse_give_identical_statistics(traced):
    ck, rec = traced
    sparse = _simulate(ck, rec, dense=False)
    dense = _simulate(ck, rec, dense=True)
    assert sparse == dense
    assert sparse["warp_insts"] == rec.trace.warp_instructions
    assert sparse["thread_insts"] == rec.trace.thread_instructions


def test_register_file_counts_every_source_read_and_destination_write(traced):
    ck, rec = traced
    d = _simulate(ck, rec)
    sk = StaticKernel(ck.fn, latency_tables(load_config("gtx480")), ck.oc.space_of_access)
    pcs = rec.trace.pc.tolist()
    reads = sum(len(sk.instrs[pc].src_regs) for pc in pcs if sk.instrs[pc].kind in (0, 1, 4, 5))  # ALU/MEM/BRANCH/NOP
    writes = sum(len(sk.instrs[pc].dst_regs) for pc in pcs)
    assert sum(s["rf_reads"] for s in d["per_sm"]) == reads
    # the kernel's atomicAdd discards its old value: a dead destination is written to
    # the zero register (no register, no write), so every write is counted exactly
    atomics = [pc for pc in set(pcs) if sk.instrs[pc].is_atomic]
    assert atomics and all(not sk.instrs[pc].dst_regs and not sk.instrs[pc].dst_mask for pc in atomics)
    assert sum(s["rf_writes"] for s in d["per_sm"]) == writes
    per_class = {}
    for pc in pcs:
        per_class[sk.instrs[pc].opclass] = per_class.get(sk.instrs[pc].opclass, 0) + 1
    total = {}
    for s in d["per_sm"]:
        for k, v in s["opclass_insts"].items():
            total[k] = total.get(k, 0) + v
    assert total == per_class


def test_deterministic(traced):
    ck, rec = traced
    assert _simulate(ck, rec) == _simulate(ck, rec)


def test_cta_limit_override_lowers_residency(traced):
    ck, rec = traced
    full = _simulate(ck, rec)
    one = _simulate(ck, rec, overrides=["gpu.max_ctas_per_sm=1"])
    assert one["ctas_per_sm_limit"] == 1 and full["ctas_per_sm_limit"] > 1
    assert one["avg_resident_ctas"] < full["avg_resident_ctas"]
    assert one["cycles"] > full["cycles"]


def test_timeline_and_cycle_classes(traced):
    ck, rec = traced
    st = _simulate(ck, rec, overrides=["monitor.timeline_interval_cycles=50"])
    tl = st["timeline"]
    assert tl["cycle"] and all(c % 50 == 0 for c in tl["cycle"])
    assert max(tl["resident_warps"]) > 0
    assert sum(st["sm_cycles"].values()) == 15 * (max(sm["cycles"]["active"] + sm["cycles"]["idle"] +
                                                       sm["cycles"]["mem_stall"] + sm["cycles"]["core_stall"]
                                                       for sm in st["per_sm"]))
    assert st["sm_cycles"]["active"] > 0 and st["sm_cycles"]["mem_stall"] > 0


def test_device_timing_mode_attaches_stats():
    with tlpsim.Device(mode="timing", trace_cache=False):
        k = tlpsim.RawKernel(KERNEL, "mix")
        n = 1024
        rec = k((8,), (128,), (tlpsim.asarray(np.ones(n, np.float32)), tlpsim.zeros(n, np.float32),
                               tlpsim.zeros(16, np.int32), np.int32(n)))
    assert rec.stats is not None and rec.stats.cycles > 0 and rec.stats.warp_insts == rec.warp_instructions
    assert 0 < rec.stats.utilisation.scheduler <= 1


# ---------------------------------------------------------------- unit latencies and policies

def test_rf_bank_conflict_costs_one_cycle_per_extra_read():
    rf = BankedRegisterFile(BankedRegisterFile.Params(banks=4))
    # registers 1 and 5 map to the same bank for warp slot 0: (0 + r) % 4
    assert rf.banks.read(0, 0, "sp", (1, 2), now=10) == 12          # distinct banks: read at 11, ready at 12
    rf2 = BankedRegisterFile(BankedRegisterFile.Params(banks=4))
    assert rf2.banks.read(0, 0, "sp", (1, 5), now=10) == 13         # same bank: second read at 12
    assert rf2.stats.bank_conflict_cycles == 1


def test_l1_hit_latency_is_exact():
    from tlpsim.timing.cache import MSHR, CacheArray
    from tlpsim.timing.cache_port import CachePort

    port = CachePort("l1d", CacheArray(16384, 4), MSHR(8, 4), hit_latency=35)
    out, fetch = port.read(0x1000, 0b0011, "a", now=5, can_send=lambda: True)
    assert (out, fetch) == ("miss", 0b0011)
    assert port.read(0x1000, 0b0001, "b", now=6, can_send=lambda: True) == ("merged", 0)
    assert port.fill(0x1000, 0b0011, now=50) == ["a", "b"]
    assert port.read(0x1000, 0b0001, "c", now=60, can_send=lambda: True) == ("hit", 95)


def _views(*ages):
    return [WarpView(slot=k, age=a, cta=0, last_issue=-1) for k, a in enumerate(ages)]


def test_gto_keeps_issuing_the_same_warp_then_oldest():
    p = GreedyThenOldest(n_slots=8)
    v = _views(5, 1, 3)
    assert [w.slot for w in p.order(v, 0)] == [1, 2, 0]
    p.on_issue(v[2], 0, False)
    assert [w.slot for w in p.order(v, 1)] == [2, 1, 0]


def test_lrr_rotates_after_the_last_issued():
    p = LooseRoundRobin(n_slots=4)
    v = _views(0, 1, 2, 3)
    p.on_issue(v[1], 0, False)
    assert [w.slot for w in p.order(v, 1)] == [2, 3, 0, 1]


def test_two_level_replaces_a_warp_that_issued_a_long_latency_load():
    p = TwoLevel(TwoLevel.Params(active_warps=2), n_slots=8)
    v = _views(0, 1, 2, 3)
    assert [w.slot for w in p.order(v, 0)] == [0, 1]        # active set: the two oldest
    p.on_issue(v[0], 0, long_latency=True)                  # warp 0 leaves the active set...
    assert [w.slot for w in p.order(v[1:], 1)] == [1, 2]    # ...and, waiting on memory, is not a candidate


def test_two_level_allows_none_when_no_candidate_is_in_the_active_set():
    p = TwoLevel(TwoLevel.Params(active_warps=2), n_slots=8)
    v = _views(0, 1, 2, 3)
    assert [w.slot for w in p.order(v, 0)] == [0, 1]
    assert p.filters
    # warps 0 and 1 (active) wait; 2 and 3 are ready but outside the full active set
    assert list(p.order(v[2:], 1)) == []
    assert p.choose(v[2:], 1) is None


def test_two_level_barrier_leaves_the_active_set_so_kernels_with_barriers_finish():
    # every warp of a CTA must reach the barrier; with a 1-warp active set a warp
    # waiting at the barrier must make room, or the CTA would deadlock
    from tlpsim.workloads.registry import get_workload

    cfg = load_config("gtx480", {"sm.warp_scheduler": {"impl": "two_level", "active_warps": 1}})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        res = get_workload("reduction").execute("tiny")
    assert res.verified
    assert all(rec.stats.cycles > 0 for rec in res.launches)


@pytest.mark.parametrize("workload", ["bfs", "histogram", "sgemm", "transpose_naive", "kmeans"])
def test_dense_equals_sparse_on_workloads(workload):
    from tlpsim.workloads.registry import get_workload

    results = []
    for dense in (False, True):
        with tlpsim.Device(mode="timing", trace_cache=False, dense=dense):
            res = get_workload(workload).execute("tiny")
        assert res.verified
        stats = []
        for rec in res.launches:
            d = asdict(rec.stats)
            d.pop("wall_seconds")
            stats.append(d)
        results.append(stats)
    assert results[0] == results[1]


def test_launches_on_two_streams_run_concurrently():
    """Two independent kernels on different streams overlap on the GPU: together they
    take fewer cycles than one after the other."""
    src = r'''extern "C" __global__ void busy(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float v = x[i];
        for (int k = 0; k < 64; ++k) v = v * 1.0001f + 0.5f;
        x[i] = v; }'''
    n = 8 * 128

    def run(streams: bool):
        with tlpsim.Device(mode="timing", trace_cache=False) as dev:
            k = tlpsim.RawKernel(src, "busy")
            a, b = tlpsim.zeros(n, np.float32), tlpsim.zeros(n, np.float32)
            if streams:
                s1, s2 = tlpsim.cuda.Stream(), tlpsim.cuda.Stream()
                r1 = k((8,), (128,), (a, np.int32(n)), stream=s1)
                r2 = k((8,), (128,), (b, np.int32(n)), stream=s2)
                assert r1._stats is None  # deferred until the device synchronises
                dev.synchronize()
            else:
                r1 = k((8,), (128,), (a, np.int32(n)))
                r2 = k((8,), (128,), (b, np.int32(n)))
        return r1.stats, r2.stats

    c1, c2 = run(streams=True)
    s1, s2 = run(streams=False)
    assert c1.kernel == c2.kernel == "busy"
    # concurrent: both finish within (about) the time one of them takes alone
    assert max(c1.cycles, c2.cycles) < s1.cycles + s2.cycles
    assert c1.warp_insts == s1.warp_insts and c2.warp_insts == s2.warp_insts  # per launch, not mixed


@pytest.mark.parametrize("preset", ["gtx480", "gtx980", "maxwell_gpuduet", "tesla_m2050", "fermi_rfv", "fermi_dmr",
                                    "expars_maxwell", "h200", "h100"])
def test_every_preset_builds_and_runs(traced, preset):
    """Smoke test per preset: the timing model builds from it and runs a kernel."""
    ck, rec = traced
    cfg = load_config(preset)
    gpu = build_gpu(cfg)
    sk = StaticKernel(ck.fn, latency_tables(cfg), ck.oc.space_of_access)
    gpu.launch(sk, rec.trace, rec.resources.registers, rec.resources.shared_bytes)
    (st,) = gpu.run()
    assert st.warp_insts == rec.trace.warp_instructions and st.cycles > 0
    assert len(gpu.sms) == cfg.gpu.n_sms


def test_watchdog_flags_a_run_that_stops_issuing():
    from types import SimpleNamespace

    from tlpsim.timing.engine import ClockDomain, Engine
    from tlpsim.timing.timeline import Timeline

    sm = SimpleNamespace(stats=SimpleNamespace(warp_insts=5, ctas_done=0, thread_insts=160), n_ctas=1, n_warps=4)
    eng = Engine()
    tl = eng.add(Timeline(ClockDomain("core", 1000), [sm], interval=10, watchdog=100), active=False)
    tl.passive = False  # stands in for the stuck SMs' pending work (an observer alone ends the run)
    tl.start(0)
    eng.run(stop=lambda: tl.stuck_at is not None, max_time_fs=10_000_000)
    assert tl.stuck_at == 100                      # no progress for one whole watchdog period
    assert tl.samples["cycle"][:3] == [0, 10, 20] and tl.samples["resident_warps"][0] == 4
