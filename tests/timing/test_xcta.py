"""Cross-CTA dependencies: the functional model records where a CTA read a value
another CTA of its launch wrote (Trace.deps); the timing model holds the reader at
that read until the writer's CTA is dispatched, and reports a deadlock naming the
kernel and both CTAs when the two can never be co-resident — instead of a finished
run of an execution the simulated GPU cannot produce."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.timing.xcta import CoResidencyDeadlock
from tlpsim.trace.cache import TraceCache

WAIT = r'''
extern "C" __global__ void wait_flag(volatile int* flag, int* out, int waiter, int writer, int work) {
    if (threadIdx.x == 0) {
        if (blockIdx.x == waiter) {
            while (flag[0] == 0) { }          // spins until `writer` sets the flag
            out[blockIdx.x] = flag[0] + 10;
        } else if (blockIdx.x == writer) {
            flag[0] = 7;
            out[blockIdx.x] = 1;
        } else {                              // bystanders: `work` rounds of arithmetic
            unsigned acc = 0;
            for (int k = 0; k < work; ++k) acc = acc * 3u + k;
            out[blockIdx.x] = acc == 1u;      // never: 0
        }
    }
}'''


def _run(waiter: int, writer: int, mode: str = "functional", ctas_per_sm: int = 1, n_ctas: int = 4,
         dense: bool = False, trace_cache=False, work: int = 0):
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "gpu.max_ctas_per_sm": ctas_per_sm})
    with tlpsim.Device(mode=mode, config=cfg, trace_cache=trace_cache, dense=dense):
        k = tlpsim.RawKernel(WAIT, "wait_flag")
        out = tlpsim.zeros(n_ctas, np.int32)
        rec = k((n_ctas,), (32,), (tlpsim.zeros(1, np.int32), out, np.int32(waiter), np.int32(writer),
                                   np.int32(work)))
        expect = np.zeros(n_ctas, np.int32)
        expect[[waiter, writer]] = [17, 1]
        np.testing.assert_array_equal(out.get(), expect)
        return rec, k


def _stats(rec) -> dict:
    d = asdict(rec.stats)
    d.pop("wall_seconds")
    return d


def test_functional_model_records_the_read_of_another_ctas_write():
    with tlpsim.Device() as dev:
        rec, k = _run(0, 1)
        fn = dev.compiled(k.program.module, k.kernel).fn  # the flattened kernel the trace indexes
    (dep,) = rec.trace.deps.tolist()
    reader_warp, pos, reader_pc, writer_warp, writer_pc = dep
    assert (reader_warp, writer_warp) == (0, 1)  # one warp per CTA
    tr = rec.trace
    assert tr.pc[tr.warp_rows(0)][pos] == reader_pc  # the position is the read in the warp's trace
    assert fn.instructions[reader_pc].opcode == "ld.volatile.global.u32"
    assert fn.instructions[writer_pc].opcode == "st.volatile.global.u32"
    assert pos > 100  # the waiter spun in the functional model before the writer ran


NOT_WAITS = r'''
extern "C" __global__ void ordinary(float* x, unsigned char* flags, int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * 2.0f;              // reads back what this CTA writes
        flags[i] = (unsigned char)i;     // bytes: neighbouring CTAs share words
        atomicAdd(&hist[i & 7], 1);      // result unused: a reduction
    }
}
extern "C" __global__ void ticket(int* counter, int* out) {
    if (threadIdx.x == 0) out[blockIdx.x] = atomicAdd(counter, 1);   // sees other CTAs, waits for none
}
extern "C" __global__ void bfs_race(const int* rowp, const int* adj, int* level, int depth) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (level[v] != depth) return;
    for (int e = rowp[v]; e < rowp[v + 1]; ++e)     // ends by its counter: other CTAs only pick the path
        if (level[adj[e]] < 0) level[adj[e]] = depth + 1;
}
extern "C" __global__ void bounded(volatile int* flag, int* out) {
    int i = 0;
    while (i < 100 && flag[0] == 0) ++i;             // a spin with a timeout ends by itself
    out[blockIdx.x] = i;
}
extern "C" __global__ void cas_add(float* sum) {     // an optimistic update, retried until memory stays put
    unsigned* p = (unsigned*)sum;
    unsigned old = *p, assumed;
    do { assumed = old; old = atomicCAS(p, assumed, __float_as_uint(__uint_as_float(assumed) + 1.0f)); }
    while (assumed != old);
}
'''


@pytest.mark.parametrize("kernel", ["ordinary", "ticket", "bfs_race", "bounded", "cas_add"])
def test_reads_that_do_not_wait_record_nothing(kernel):
    from tlpsim.analysis.wait_reads import wait_reads

    with tlpsim.Device() as dev:
        k = tlpsim.RawModule(code=NOT_WAITS).get_function(kernel)
        n = 4 * 33
        if kernel == "ordinary":
            x = tlpsim.asarray(np.arange(n, dtype=np.float32))
            flags = tlpsim.zeros(n, np.uint8)
            rec = k((4,), (33,), (x, flags, tlpsim.zeros(8, np.int32), np.int32(n)))
            np.testing.assert_array_equal(x.get(), np.arange(n, dtype=np.float32) * 2)
            np.testing.assert_array_equal(flags.get(), np.arange(n).astype(np.uint8))
        elif kernel == "ticket":
            out = tlpsim.zeros(4, np.int32)
            rec = k((4,), (32,), (tlpsim.zeros(1, np.int32), out))
            assert sorted(out.get().tolist()) == [0, 1, 2, 3]
        elif kernel == "bfs_race":  # a ring: every vertex's successor is in the next CTA
            nv = 4 * 32
            rowp = tlpsim.asarray(np.arange(nv + 1, dtype=np.int32))
            adj = tlpsim.asarray(((np.arange(nv) + 32) % nv).astype(np.int32))
            level = tlpsim.asarray(np.where(np.arange(nv) < 32, 0, -1).astype(np.int32))
            rec = k((4,), (32,), (rowp, adj, level, np.int32(0)))
            assert (level.get()[32:64] == 1).all()
        elif kernel == "bounded":
            out = tlpsim.zeros(4, np.int32)
            rec = k((4,), (32,), (tlpsim.zeros(1, np.int32), out))
            assert (out.get() == 100).all()
        else:
            s = tlpsim.zeros(1, np.float32)
            rec = k((4,), (32,), (s,))
            assert s.get()[0] == 128
        fn = dev.compiled(k.program.module, k.kernel).fn
    assert not wait_reads(fn) and rec.trace.deps.shape == (0, 5)


LOCK = r'''
extern "C" __global__ void locked(int* lock, int* count, int* order) {
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0, 1) != 0) { }      // waits for the holder's release
        int k = *(volatile int*)count;
        order[k] = blockIdx.x;
        *(volatile int*)count = k + 1;
        __threadfence();
        atomicExch(lock, 0);
    }
}'''


def test_a_spin_lock_waits_for_the_holders_and_runs_with_one_cta_slot():
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "gpu.max_ctas_per_sm": 1})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(LOCK, "locked")
        count, order = tlpsim.zeros(1, np.int32), tlpsim.zeros(6, np.int32)
        rec = k((6,), (32,), (tlpsim.zeros(1, np.int32), count, order))
        got = order.get()
        assert count.get()[0] == 6 and sorted(got.tolist()) == list(range(6))
    # every CTA but the first holder waited for CTAs that held the lock before it; a
    # failed compare-and-swap writes nothing, so nobody waits for a CTA that only tried
    held_before = {int(c): set(got[:k].tolist()) for k, c in enumerate(got)}
    deps = rec.trace.deps.tolist()
    assert {r for r, *_ in deps} == set(range(6)) - {int(got[0])}
    assert all(w in held_before[r] for r, _, _, w, _ in deps)
    assert rec.stats.cycles > 0  # the holders ran first: possible with one slot


def test_a_grid_barrier_needs_every_cta_resident():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "badinput"))
    from test_launch_args import GRID_SYNC

    n = 256
    for slots in (4, 2):
        cfg = load_config("gtx480", {"gpu.n_sms": 1, "gpu.max_ctas_per_sm": slots})
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
            k = tlpsim.RawKernel(GRID_SYNC, "twophase", enable_cooperative_groups=True)
            args = (tlpsim.asarray(np.arange(n, dtype=np.int32)), tlpsim.zeros(n, np.int32),
                    tlpsim.zeros(n, np.int32), np.int32(n))
            if slots == 4:
                rec = k((4,), (64,), args)
                assert rec.stats.cycles > 0 and len(rec.trace.deps)
            else:
                with pytest.raises(CoResidencyDeadlock, match=r"waits for a value CTA \(3, 0, 0\) writes .* cannot "
                                                               r"be co-resident on this GPU in kernel twophase"):
                    k((4,), (64,), args)


@pytest.mark.parametrize("waiter, writer", [(0, 1), (2, 3)])
def test_a_wait_for_a_ctas_that_cannot_be_co_resident_is_a_deadlock(waiter, writer):
    with pytest.raises(CoResidencyDeadlock) as err:
        _run(waiter, writer, "timing", ctas_per_sm=1)
    msg = str(err.value)
    assert msg.startswith(f"deadlock: CTA ({waiter}, 0, 0) waits for a value CTA ({writer}, 0, 0) writes (warp 0, "
                          "PTX line ")
    assert f"but the two CTAs cannot be co-resident on this GPU in kernel wait_flag, CTA ({waiter}, 0, 0), " \
           "<cuda>.ptx line " in msg
    assert f"1 SM(s); the 1 resident CTA(s) of the kernel (({waiter}, 0, 0)) stay until they finish" in msg
    assert f"no SM can take CTA ({writer}, 0, 0)" in msg


@pytest.mark.parametrize("waiter, writer, ctas_per_sm", [
    (1, 0, 1),   # the writer runs (and finishes) first: possible with one CTA slot
    (0, 1, 2),   # co-resident from the start
    (0, 3, 2),   # the reader is held until CTA 3 is dispatched (after bystanders 1 and 2 retire)
])
def test_possible_schedules_run_and_dense_equals_skip_ahead(waiter, writer, ctas_per_sm):
    skip, _ = _run(waiter, writer, "timing", ctas_per_sm, work=3000)
    dense, _ = _run(waiter, writer, "timing", ctas_per_sm, dense=True, work=3000)
    assert _stats(skip) == _stats(dense)
    assert skip.stats.warp_insts == skip.trace.warp_instructions
    if (waiter, writer) == (0, 3):
        # the reader waited (held, not issuing) for CTA 3: 1 and 2 ran first, one after the other
        free, _ = _run(waiter, writer, "timing", ctas_per_sm=4, work=3000)
        one_bystander = free.stats.cycles
        assert skip.stats.cycles > 2 * one_bystander * 0.9
        assert skip.stats.warp_insts == free.stats.warp_insts


def test_dependencies_survive_the_trace_cache(tmp_path):
    rec, _ = _run(0, 1, trace_cache=str(tmp_path))
    (path,) = tmp_path.glob("*.trace")
    cached = TraceCache(tmp_path).load(path.stem)
    np.testing.assert_array_equal(cached.deps, rec.trace.deps)
    with pytest.raises(CoResidencyDeadlock):  # replayed from the cache, still refused
        _run(0, 1, "timing", ctas_per_sm=1, trace_cache=str(tmp_path))


def test_compiled_core_and_python_sources_agree_on_a_held_reader():
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tlpsim import _core

    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_xcta as t; "
            "rec, _ = t._run(0, 3, 'timing', 2, work=3000); print(json.dumps(t._stats(rec), default=str))")
    env = {**os.environ, _core.PURE_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], env=env, capture_output=True,
                         text=True, check=True)
    pure = json.loads(out.stdout.strip().splitlines()[-1])
    rec, _ = _run(0, 3, "timing", 2, work=3000)
    assert json.loads(json.dumps(_stats(rec), default=str)) == pure
