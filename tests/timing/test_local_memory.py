"""Local memory reaches the memory system at GPGPU-Sim's addresses (trace.localmem):
one thread's offset is not another's, a warp reading one word in every lane touches
one 128-byte line, and a CTA's lines depend on its SM and hardware slot, so a CTA
that takes over a slot reuses its predecessor's lines."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.trace.format import SPACE_CODES
from tlpsim.trace.localmem import LOCAL_MEM_START, cta_relative, placed_line

# each thread fills an 8-word local array and reads one word back at a runtime index
# (a runtime index keeps the array in local memory)
KERNEL = r"""
extern "C" __global__ void lk(const int* idx, float* out) {
    float buf[8];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < 8; ++i) buf[i] = t * 8 + i;
    out[t] = buf[idx[t] & 7];
}"""
THREADS, CTAS = 64, 2


def test_cta_relative_interleaves_words_across_the_ctas_threads():
    # word d of thread t at d * (T * 4) + t * 4, T = 64; byte offsets keep their low bits
    addr, lane = cta_relative(np.array([0, 4, 9]), np.array([0, 1, 2]), 64, 4)
    assert addr.tolist() == [0, 256 + 4, 2 * 256 + 8 + 1] and lane.tolist() == [0, 1, 2]
    # an 8-byte access is two words, each placed on its own
    addr, lane = cta_relative(np.array([8, 8]), np.array([0, 33]), 64, 8)
    assert addr.tolist() == [2 * 256, 3 * 256, 2 * 256 + 132, 3 * 256 + 132] and lane.tolist() == [0, 0, 1, 1]


def test_placed_line_follows_gpgpusims_local_map():
    # T = 64 threads, 15 SMs, 8 slots: N = 64 * 8 * 15 threads; word stride N * 4 bytes
    span, n = 64 * 4, 64 * 8 * 15
    assert placed_line(0, 64, 0, 0, 15, 8) == LOCAL_MEM_START
    assert placed_line(128, 64, 3, 2, 15, 8) == LOCAL_MEM_START + span * (3 + 15 * 2) + 128
    assert placed_line(5 * span + 128, 64, 1, 7, 15, 8) == LOCAL_MEM_START + 5 * n * 4 + span * (1 + 15 * 7) + 128


def _trace_and_lines(overrides: dict, plugin) -> tuple:
    class Lines(ExecutionChecker):
        events = frozenset({"l1d_access"})
        seen: list = []

        def on_l1d_access(self, warp, line, outcome, evicted, now):
            if line >= LOCAL_MEM_START:
                type(self).seen.append((warp.cta_index, line))

    name = plugin("execution_checker", Lines)
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "sm.execution_checker": name, **overrides})
    idx = (np.arange(THREADS * CTAS, dtype=np.int32) * 3) % 8
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        out = tlpsim.zeros(THREADS * CTAS, np.float32)
        rec = tlpsim.RawModule(KERNEL).get_function("lk")((CTAS,), (THREADS,), (tlpsim.asarray(idx), out))
        got = out.get()
    np.testing.assert_array_equal(got, np.arange(THREADS * CTAS) * 8 + idx)
    return rec, Lines.seen


def test_the_trace_holds_cta_relative_local_lines(plugin):
    rec, _ = _trace_and_lines({}, plugin)
    tr = rec.trace
    space = np.asarray(tr.mem_space)
    offs, sec = np.asarray(tr.mem_sector_offsets), np.asarray(tr.sectors)
    local = np.flatnonzero(space == SPACE_CODES["local"])
    lines = {int(s) >> 2 << 7 for r in local for s in sec[offs[r]:offs[r + 1]]}
    # 8 words x 2 warps of a 64-thread CTA, the same for both CTAs (placement comes later)
    assert lines == {d * THREADS * 4 + w * 128 for d in range(8) for w in range(2)}
    # every lane of a warp's store of one word lands in the same 128-byte line: 4 sectors
    assert all((offs[r + 1] - offs[r]) % 4 == 0 for r in local)


def test_resident_ctas_use_their_own_lines(plugin):
    _, seen = _trace_and_lines({}, plugin)
    span = THREADS * 4
    slots = load_config("gtx480").sm.max_ctas
    want = {(c, LOCAL_MEM_START + d * span * slots + span * c + w * 128)
            for c in range(CTAS) for d in range(8) for w in range(2)}
    assert set(seen) == want   # both CTAs resident at once: slots 0 and 1


def test_a_cta_in_a_freed_slot_reuses_its_lines(plugin):
    _, seen = _trace_and_lines({"gpu.max_ctas_per_sm": 1}, plugin)
    span, slots = THREADS * 4, load_config("gtx480").sm.max_ctas   # the slot table is not capped
    lines = {LOCAL_MEM_START + d * span * slots + w * 128 for d in range(8) for w in range(2)}
    assert {line for c, line in seen if c == 0} == lines
    assert {line for c, line in seen if c == 1} == lines   # one slot: the same lines


@pytest.mark.parametrize("t,want", [("f32", 4), ("b8", 1), ("f16x2", 4), ("bf16", 2), ("u64", 8), ("b128", 16)])
def test_access_sizes_of_load_store_types(t, want):
    from tlpsim.functional.tracer import _type_bytes
    assert _type_bytes(t) == want


def test_generic_accesses_that_reach_local_memory_are_local():
    """A pointer that is local in one warp and global in the other: the first warp's
    generic load is traced as a local access, the second's stays generic."""
    from tlpsim.functional.memory import LOCAL_WINDOW
    src = r'''
    extern "C" __global__ void g(const int* sel, float* out) {
        float buf[8];
        int t = threadIdx.x;
        for (int i = 0; i < 8; ++i) buf[i] = t + i;
        volatile int s = sel[t];
        float* p = s ? buf : out;
        out[t] = p[sel[t + 64] & 7];
    }'''
    sel = np.concatenate([np.ones(32), np.zeros(32), np.arange(64) % 8]).astype(np.int32)
    with tlpsim.Device(mode="functional", trace=True, trace_cache=False) as dev:
        out = tlpsim.zeros(64, np.float32)
        tlpsim.RawKernel(src, "g")((1,), (64,), (tlpsim.asarray(sel), out))
        rec = dev.launches[0]
        fn = dev.analyzed_kernel(rec.mangled).fn
    np.testing.assert_array_equal(out.get()[:32], np.arange(32) + np.arange(32) % 8)
    generic = [i.index for i in fn.instructions if i.opcode in ("ld.f32", "ld.u32")]
    assert len(generic) == 1, [i.opcode for i in fn.instructions]
    tr = rec.trace
    mem, pc, warp = np.asarray(tr.mem), np.asarray(tr.pc), np.asarray(tr.warp)
    space, offs, sec = np.asarray(tr.mem_space), np.asarray(tr.mem_sector_offsets), np.asarray(tr.sectors)
    rows = {int(warp[k]): int(mem[k]) for k in np.flatnonzero((pc == generic[0]) & (mem >= 0))}
    assert space[rows[0]] == SPACE_CODES["local"] and space[rows[1]] == SPACE_CODES["generic"]
    assert all(int(x) < LOCAL_WINDOW >> 5 for x in sec[offs[rows[0]]:offs[rows[0] + 1]])


def test_generic_accesses_that_reach_shared_memory_are_shared():
    """A pointer to shared memory in one warp and to global memory in the other: the first
    warp's generic load is a shared access with its bank conflicts, as GPGPU-Sim resolves
    a generic address per access."""
    from tlpsim.trace.format import SHARED_BANK_COUNTS
    src = r'''
    extern "C" __global__ void gs(const int* sel, float* out) {
        __shared__ float tile[64];
        int t = threadIdx.x;
        tile[t] = t;
        __syncthreads();
        volatile int s = sel[t];
        float* p = s ? tile : out;
        out[t] = p[(t * 2) & 63];
    }'''
    sel = np.concatenate([np.ones(32), np.zeros(32)]).astype(np.int32)
    with tlpsim.Device(mode="functional", trace=True, trace_cache=False) as dev:
        out = tlpsim.zeros(64, np.float32)
        tlpsim.RawKernel(src, "gs")((1,), (64,), (tlpsim.asarray(sel), out))
        rec = dev.launches[0]
        fn = dev.analyzed_kernel(rec.mangled).fn
    np.testing.assert_array_equal(out.get()[:32], (np.arange(32) * 2) % 64)
    generic = [i.index for i in fn.instructions if i.opcode in ("ld.f32", "ld.u32")]
    assert len(generic) == 1, [i.opcode for i in fn.instructions]
    tr = rec.trace
    mem, pc, warp = np.asarray(tr.mem), np.asarray(tr.pc), np.asarray(tr.warp)
    space, offs = np.asarray(tr.mem_space), np.asarray(tr.mem_sector_offsets)
    rows = {int(warp[k]): int(mem[k]) for k in np.flatnonzero((pc == generic[0]) & (mem >= 0))}
    assert space[rows[0]] == SPACE_CODES["shared"] and space[rows[1]] == SPACE_CODES["generic"]
    assert offs[rows[0] + 1] == offs[rows[0]]                      # no sectors: it never leaves the SM
    assert tr.bank_degrees(32)[rows[0]] == 2                       # even words only: two a bank
    assert tr.bank_degrees(32)[rows[1]] == 0 and 32 in SHARED_BANK_COUNTS
    # the timing model takes it through the shared-memory path: two stores and one load
    with tlpsim.Device(mode="timing", config=load_config("gtx480", {"gpu.n_sms": 1}), trace_cache=False):
        out = tlpsim.zeros(64, np.float32)
        rec = tlpsim.RawKernel(src, "gs")((1,), (64,), (tlpsim.asarray(sel), out))
        np.testing.assert_array_equal(out.get()[:32], (np.arange(32) * 2) % 64)
    assert rec.stats.per_sm[0]["smem_accesses"] == 3


def test_one_generic_load_resolved_three_ways():
    """Warp 0's pointer is shared, warp 1's local, warp 2's global: one instruction, three
    spaces, each warp's row its own."""
    src = r'''
    extern "C" __global__ void g3(const int* sel, float* out) {
        __shared__ float tile[96];
        float buf[8];
        int t = threadIdx.x;
        tile[t] = t;
        for (int i = 0; i < 8; ++i) buf[i] = t + i;
        __syncthreads();
        volatile int s = sel[t];
        float* p = s == 1 ? tile : (s == 2 ? buf : out);
        out[t] = p[sel[t + 96] & 7];
    }'''
    sel = np.concatenate([np.full(32, 1), np.full(32, 2), np.zeros(32), np.arange(96) % 8]).astype(np.int32)
    with tlpsim.Device(mode="functional", trace=True, trace_cache=False) as dev:
        out = tlpsim.zeros(96, np.float32)
        tlpsim.RawKernel(src, "g3")((1,), (96,), (tlpsim.asarray(sel), out))
        rec = dev.launches[0]
        fn = dev.analyzed_kernel(rec.mangled).fn
    got = out.get()
    np.testing.assert_array_equal(got[:32], np.arange(32) % 8)
    np.testing.assert_array_equal(got[32:64], np.arange(32, 64) + np.arange(32, 64) % 8)
    generic = [i.index for i in fn.instructions if i.opcode in ("ld.f32", "ld.u32")]
    assert len(generic) == 1, [i.opcode for i in fn.instructions]
    tr = rec.trace
    mem, pc, warp = np.asarray(tr.mem), np.asarray(tr.pc), np.asarray(tr.warp)
    rows = {int(warp[k]): int(mem[k]) for k in np.flatnonzero((pc == generic[0]) & (mem >= 0))}
    space = np.asarray(tr.mem_space)
    assert [int(space[rows[w]]) for w in range(3)] == [SPACE_CODES["shared"], SPACE_CODES["local"],
                                                       SPACE_CODES["generic"]]
