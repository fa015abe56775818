"""Contended shared-memory atomics (sm.shared_atomic_same_word, sm.shared_atomic_cas_ops):
one warp on one SM, the same code with lanes spread over `m` words, timed by the issue of
the global store that follows the atomic. With 'serialize' every lane takes its bank's
wavefront; a compare-and-swap loop runs one round per lane on the busiest word, each
round's compare-and-swap carrying the lanes that lost before, and holds the warp until its
last round. GPGPU-Sim's rule ('broadcast', the old presets) serves a
word's lanes together."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

import tlpsim
from tlpsim.analysis.analyzed import analyze
from tlpsim.config.loader import load_config
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register, unregister
from tlpsim.timing.builder import latency_tables
from tlpsim.timing.static import StaticKernel

INT_ATOMIC = r'''
extern "C" __global__ void iatom(int* out, int m) {
    __shared__ int s[32];
    s[threadIdx.x] = 0;
    __syncwarp();
    out[threadIdx.x] = atomicAdd(&s[threadIdx.x % m], 1);   // the store reads the atomic's old value
}'''

FLOAT_ATOMIC = r'''
extern "C" __global__ void fatom(float* out, int m) {
    __shared__ float s[32];
    s[threadIdx.x] = 0.0f;
    __syncwarp();
    atomicAdd(&s[threadIdx.x % m], 1.0f);                   // result unused: nothing reads it
    out[threadIdx.x] = 2.0f;
}'''


@pytest.fixture
def gap():
    """gap(source, kernel, preset, m, overrides): cycles from the atomic's issue to the
    global store's issue, with the 32 lanes of one warp spread over m words."""
    names = []

    def run(src, kernel, preset, m, overrides=None):
        log = {}

        class Probe(ExecutionChecker):
            events = frozenset({"instr_issued"})

            def watches(self, instr):
                return instr.op in ("atom", "red") or (instr.op == "st" and instr.space == "global")

            def on_instr_issued(self, warp, instr, mask, now):
                log["atomic" if instr.op != "st" else "store"] = now

        name = f"t_{uuid.uuid4().hex[:8]}"
        register("execution_checker", name)(Probe)
        names.append(name)
        cfg = load_config(preset, {"gpu.n_sms": 1, "sm.execution_checker": name, "l1i.perfect": True,
                                   **(overrides or {})})
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
            out = tlpsim.zeros(32, np.float32 if kernel == "fatom" else np.int32)
            tlpsim.RawKernel(src, kernel)((1,), (32,), (out, np.int32(m)))
            got = out.get()
        if kernel == "iatom":  # each lane got a distinct old value of its word
            assert sorted(got.tolist()) == sorted(k // m for k in range(32))
        return log["store"] - log["atomic"]

    yield run
    for n in names:
        unregister("execution_checker", n)


def _wave(sm) -> int:
    """Cycles each extra wavefront adds to a shared access's result: the slower of the
    banks and the sub-core's path."""
    return max(sm.shared_cycles_per_conflict, sm.shared_subcore_cycles_per_conflict)


def test_native_atomic_serialises_the_lanes_of_one_word(gap):
    wave = _wave(load_config("h200").sm)
    assert wave == 2
    spread = gap(INT_ATOMIC, "iatom", "h200", 32)     # 32 words in 32 banks: one wavefront
    # 32 lanes on one word: 32 wavefronts, the old value 31 x 2 cycles later
    assert gap(INT_ATOMIC, "iatom", "h200", 1) - spread == 31 * wave
    # 4 words in 4 banks, 8 lanes each: 8 wavefronts
    assert gap(INT_ATOMIC, "iatom", "h200", 4) - spread == 7 * wave
    # GPGPU-Sim's rule: the lanes of one word are a broadcast, one wavefront
    gpgpusim = {"sm.shared_atomic_same_word": "broadcast", "sm.shared_atomic_cas_ops": [],
                "sm.shared_atomic_cas_round_cycles": 0}
    assert gap(INT_ATOMIC, "iatom", "h200", 1, gpgpusim) == gap(INT_ATOMIC, "iatom", "h200", 32, gpgpusim) == spread


def test_emulated_float_add_runs_one_round_per_lane_on_the_busiest_word(gap):
    sm = load_config("h200").sm
    wave, cas = _wave(sm), sm.shared_atomic_cas_round_cycles
    assert "add.f32" in sm.shared_atomic_cas_ops and cas == 56
    one = gap(FLOAT_ATOMIC, "fatom", "h200", 32)      # one lane per word: one round
    # 8 words, 4 lanes each: 4 rounds, whose compare-and-swaps carry the lanes still losing,
    # 4 + 3 + 2 + 1 wavefronts, each after a round's first delaying the next round; the
    # store, independent of the atomic, still waits for the loop's last round
    assert gap(FLOAT_ATOMIC, "fatom", "h200", 8) - one == 3 * cas + (3 + 2 + 1) * wave
    # one word: 32 rounds of 32, 31, ... 1 wavefronts
    assert gap(FLOAT_ATOMIC, "fatom", "h200", 1) - one == 31 * cas + sum(range(32)) * wave
    assert gap(FLOAT_ATOMIC, "fatom", "h200", 1, {"sm.shared_atomic_cas_round_cycles": 57}) - \
        gap(FLOAT_ATOMIC, "fatom", "h200", 1) == 32


def test_old_presets_keep_gpgpusims_timing(gap):
    for preset in ("gtx480", "gtx980"):
        sm = load_config(preset).sm
        assert sm.shared_atomic_same_word == "broadcast" and sm.shared_atomic_cas_ops == ()
        assert gap(FLOAT_ATOMIC, "fatom", preset, 1) == gap(FLOAT_ATOMIC, "fatom", preset, 32)


def test_only_the_emulated_atomic_writes_the_loop_bit():
    k = tlpsim.RawKernel(FLOAT_ATOMIC, "fatom")
    ak = analyze(k.program.module, k.kernel)
    sk = StaticKernel(ak.fn, latency_tables(load_config("h200")), analyzed=ak)
    bit = sk.loop_bit
    assert bit == 1 << (ak.allocation.n_regs + ak.allocation.pred_regs)
    loops = [si for si in sk.instrs if si.cas_loop]
    assert [si.op for si in loops] in (["atom"], ["red"])
    assert all(si.src_mask & bit for si in sk.instrs)
    assert [si for si in sk.instrs if si.dst_mask & bit] == loops
    old = StaticKernel(ak.fn, latency_tables(load_config("gtx480")), analyzed=ak)
    assert old.loop_bit == 0 and not any(si.cas_loop for si in old.instrs)
    i = tlpsim.RawKernel(INT_ATOMIC, "iatom")
    ai = analyze(i.program.module, i.kernel)
    assert StaticKernel(ai.fn, latency_tables(load_config("h200")), analyzed=ai).loop_bit == 0


def test_skip_ahead_equals_dense_ticking_through_a_loop():
    cycles = []
    for dense in (False, True):
        cfg = load_config("h200", {"gpu.n_sms": 1})
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=dense) as dev:
            out = tlpsim.zeros(64, np.float32)
            tlpsim.RawKernel(FLOAT_ATOMIC, "fatom")((2,), (32,), (out, np.int32(2)))
            cycles.append(dev.launches[-1].stats.cycles)
    assert cycles[0] == cycles[1] > 16 * load_config("h200").sm.shared_atomic_cas_round_cycles


def test_every_round_of_the_loop_occupies_the_banks_and_the_sub_core_path():
    """Warps of one CTA each run the loop (8 words, 4 lanes each: 4 rounds). The SM-wide banks
    take each loop's 4 loads and 4 + 3 + 2 + 1 compare-and-swap wavefronts, so the loops end
    14 cycles apart; the fifth warp shares warp 0's sub-core, whose path each round's two
    instructions hold (casloop.cas_path_hold: 38 cycles), so its loop starts that much later."""
    from tlpsim.timing.casloop import cas_path_hold, cas_waves

    log: list[tuple[int, str, int]] = []

    class Probe(ExecutionChecker):
        events = frozenset({"instr_issued"})

        def watches(self, instr):
            return instr.op in ("atom", "red") or (instr.op == "st" and instr.space == "global")

        def on_instr_issued(self, warp, instr, mask, now):
            log.append((id(warp), "store" if instr.op == "st" else "atomic", now))

    name = f"t_{uuid.uuid4().hex[:8]}"
    register("execution_checker", name)(Probe)
    src = FLOAT_ATOMIC.replace("s[threadIdx.x] = 0.0f", "s[threadIdx.x % 32] = 0.0f").replace(
        "__syncwarp()", "__syncthreads()")
    sm = load_config("h200").sm
    assert cas_waves(4, 4) == 10 and cas_path_hold(4, 4, sm.shared_subcore_issue_cycles,
                                                   sm.shared_subcore_cycles_per_conflict) == 38
    try:
        for warps in (2, 5):
            log.clear()
            cfg = load_config("h200", {"gpu.n_sms": 1, "sm.execution_checker": name, "l1i.perfect": True})
            with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
                tlpsim.RawKernel(src, "fatom")((1,), (32 * warps,), (tlpsim.zeros(32 * warps, np.float32),
                                                                      np.int32(8)))
            stores = sorted(t for _, what, t in log if what == "store")
            assert [b - a for a, b in zip(stores, stores[1:])] == [4 + 10] * (warps - 1)
            if warps == 5:
                atomics = sorted(t for _, what, t in log if what == "atomic")
                assert atomics[4] - atomics[0] >= 38 and atomics[3] - atomics[0] < 38
    finally:
        unregister("execution_checker", name)
