"""Semantics of ld/ldu/st, cvta, isspacep, cache hints and fences."""

from __future__ import annotations

import numpy as np
import pytest

from tlpsim.errors import UnsupportedPTX
from tlpsim.functional.memory import LOCAL_WINDOW, SHARED_WINDOW, DeviceMemory, MemoryFault

REGS = (".reg .b16 %rs<8>; .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .f32 %f<8>; "
        ".reg .f64 %fd<4>; .reg .pred %p<4>;")
N = 32


def device(nbytes: int, init: np.ndarray | None = None) -> tuple[DeviceMemory, int]:
    mem = DeviceMemory()
    base = mem.alloc(nbytes, "buf")
    if init is not None:
        mem.write(base, init)
    return mem, base


def run(run_ptx, body: str, regs=None, **kw):
    return run_ptx(body, regs, decls=REGS, **kw)


def lanes() -> np.ndarray:
    return np.arange(N, dtype=np.uint64)


# ------------------------------------------------------------------ global ld/st


def test_global_load_store_and_addresses(run_ptx):
    data = np.arange(N, dtype=np.float32) * 1.5
    mem, base = device(2 * N * 4, np.concatenate([data, np.zeros(N, np.float32)]))
    src = base + 4 * lanes()[::-1]  # reversed gather
    out = run(run_ptx, "ld.global.f32 %f1, [%rd1];\nst.global.f32 [%rd2+4], %f1;",
              {"%rd1": src, "%rd2": base + 4 * N + 4 * lanes() - 4}, memory=mem)
    assert np.array_equal(out.reg("%f1", np.float32), data[::-1])
    assert np.array_equal(mem.read(base + 4 * N, 4 * N).view(np.float32), data[::-1])
    assert np.array_equal(out.addresses[0], src)
    assert np.array_equal(out.addresses[1], base + 4 * N + 4 * lanes())
    assert out.addresses[0].dtype == np.uint64


def test_ldu_and_cache_qualifiers_are_plain_loads(run_ptx):
    mem, base = device(4 * N, np.arange(N, dtype=np.uint32) + 7)
    body = "\n".join([
        "ldu.global.u32 %r1, [%rd1];",
        "ld.global.nc.L1::no_allocate.L2::256B.u32 %r2, [%rd1];",
        "ld.volatile.global.u32 %r3, [%rd1];",
        "ld.relaxed.gpu.global.u32 %r4, [%rd1];",
        "ld.global.L2::cache_hint.u32 %r5, [%rd1], %rd2;",
        "st.global.wb.u32 [%rd1], %r1;",
        "st.release.sys.global.cs.u32 [%rd1], %r1;",
    ])
    out = run(run_ptx, body, {"%rd1": base + 4 * lanes()}, memory=mem)
    for r in ("%r1", "%r2", "%r3", "%r4", "%r5"):
        assert np.array_equal(out.reg(r), np.arange(N) + 7)


@pytest.mark.parametrize("t, dst, raw, expect", [
    ("s8", "%r1", 0xF0, 0xFFFFFFF0),
    ("u8", "%r1", 0xF0, 0xF0),
    ("b8", "%r1", 0xF0, 0xF0),
    ("s8", "%rs1", 0x80, 0xFF80),
    ("s16", "%rd1", 0x8001, 0xFFFFFFFFFFFF8001),
    ("u16", "%rd1", 0x8001, 0x8001),
    ("s32", "%rd1", 0x80000000, 0xFFFFFFFF80000000),
    ("u32", "%rd1", 0x80000000, 0x80000000),
])
def test_load_extends_into_wider_registers(run_ptx, t, dst, raw, expect):
    size = int(t[1:]) // 8
    mem, base = device(64, np.full(64 // size, raw, dtype={1: np.uint8, 2: np.uint16, 4: np.uint32}[size]))
    out = run(run_ptx, f"ld.global.{t} {dst}, [%rd2];", {"%rd2": base + size * (lanes() % 4)}, memory=mem)
    assert np.all(out.reg(dst) == expect)


def test_store_truncates_wider_source(run_ptx):
    mem, base = device(4 * N, np.full(4 * N, 0xAA, dtype=np.uint8))
    out = run(run_ptx, "st.global.u8 [%rd1], %r1;\nst.global.b16 [%rd2], %rd3;",
              {"%rd1": base + 4 * lanes(), "%rd2": base + 4 * lanes() + 2,
               "%r1": np.uint32(0x12345678), "%rd3": np.uint64(0x1122334455667788)}, memory=mem)
    raw = out.memory.read(base, 4 * N).reshape(N, 4)
    assert np.all(raw[:, 0] == 0x78) and np.all(raw[:, 1] == 0xAA)
    assert np.all(raw[:, 2:].copy().view(np.uint16)[:, 0] == 0x7788)


def test_store_immediates_and_duplicates(run_ptx):
    mem, base = device(16)
    # every lane stores to the same word: the highest lane wins
    run(run_ptx, "st.global.u32 [%rd1], %r1;\nst.global.f32 [%rd1+4], 0f3F800000;\nst.global.s32 [%rd1+8], -2;",
        {"%rd1": np.uint64(base), "%r1": np.arange(N, dtype=np.uint32)}, memory=mem)
    words = mem.read(base, 12).view(np.uint32)
    assert words[0] == N - 1
    assert words[1] == np.float32(1.0).view(np.uint32)
    assert words[2] == 0xFFFFFFFE


def test_subset_of_lanes(run_ptx):
    mem, base = device(4 * N)
    idx = np.array([1, 4, 5, 30])
    out = run(run_ptx, "st.global.u32 [%rd1], %r1;", {"%rd1": base + 4 * lanes(), "%r1": np.uint32(9)},
              memory=mem, idx=idx)
    words = mem.read(base, 4 * N).view(np.uint32)
    assert np.array_equal(np.flatnonzero(words), idx)
    assert np.array_equal(out.addresses[0], base + 4 * idx.astype(np.uint64))


# ------------------------------------------------------------------ vectors


def test_vector_load_store_with_sinks(run_ptx):
    data = np.arange(4 * N, dtype=np.float32)
    mem, base = device(8 * N * 4, np.concatenate([data, np.zeros(4 * N, np.float32)]))
    body = "\n".join([
        "ld.global.v4.f32 {%f1, _, %f3, %f4}, [%rd1];",
        "ld.global.v2.u32 {%r1, %r2}, [%rd1+8];",
        "st.global.v4.f32 [%rd2], {%f4, %f3, %f1, %f1};",
        "st.global.v2.u32 [%rd2+8], {%r2, 5};",
    ])
    src = base + 16 * lanes()
    dst = base + 16 * N + 16 * lanes()
    out = run(run_ptx, body, {"%rd1": src, "%rd2": dst, "%f2": np.float32(-1)}, memory=mem)
    d = data.reshape(N, 4)
    assert np.array_equal(out.reg("%f1", np.float32), d[:, 0])
    assert np.all(out.reg("%f2", np.float32) == -1)  # the sink left it alone
    assert np.array_equal(out.reg("%r1"), d[:, 2].view(np.uint32))
    stored = mem.read(base + 16 * N, 16 * N).view(np.uint32).reshape(N, 4)
    assert np.array_equal(stored[:, :2].copy().view(np.float32), np.stack([d[:, 3], d[:, 2]], 1))
    assert np.array_equal(stored[:, 2], d[:, 3].view(np.uint32))
    assert np.all(stored[:, 3] == 5)
    assert np.array_equal(out.addresses[0], src) and np.array_equal(out.addresses[2], dst)


def test_vector_of_bytes_into_16_bit_registers_and_v8(run_ptx):
    raw = np.arange(32 * N, dtype=np.uint8)
    mem, base = device(32 * N, raw)
    out = run(run_ptx, "ld.global.v4.s8 {%rs1, %rs2, %rs3, %rs4}, [%rd1];\n"
              "ld.global.v8.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd2];",
              {"%rd1": base + 4 * lanes(), "%rd2": base + 32 * lanes()}, memory=mem)
    expect = raw[: 4 * N].reshape(N, 4).astype(np.int8).astype(np.int16).view(np.uint16)
    assert np.array_equal(out.reg("%rs1"), expect[:, 0])
    assert np.array_equal(out.reg("%rs4"), expect[:, 3])
    words = raw.view(np.uint32).reshape(N, 8)
    assert np.array_equal(out.reg("%r8"), words[:, 7])


def test_vector_alignment_is_the_whole_vector(run_ptx):
    mem, base = device(64 * N)
    addrs = base + 16 * lanes()
    addrs[6] += 8  # 8-byte aligned, but a v4.f32 needs 16
    with pytest.raises(MemoryFault) as err:
        run(run_ptx, "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];", {"%rd1": addrs}, memory=mem)
    assert err.value.lane == 6


# ------------------------------------------------------------------ faults


def test_out_of_bounds_and_misaligned_raise_with_the_lane(run_ptx):
    mem, base = device(4 * N)
    addrs = base + 4 * lanes()
    addrs[5] = base + 4 * N  # one past the end
    with pytest.raises(MemoryFault) as err:
        run(run_ptx, "ld.global.u32 %r1, [%rd1];", {"%rd1": addrs}, memory=mem)
    assert err.value.lane == 5
    addrs = base + 4 * lanes()
    addrs[3] += 2
    with pytest.raises(MemoryFault) as err:
        run(run_ptx, "st.global.u32 [%rd1], %r1;", {"%rd1": addrs}, memory=mem)
    assert err.value.lane == 3 and "misaligned" in err.value.reason
    with pytest.raises(MemoryFault) as err:
        run(run_ptx, "ld.shared.u32 %r1, [%r2];", {"%r2": np.where(np.arange(N) == 9, 4096, 0).astype(np.uint32)})
    assert err.value.lane == 9


def test_fault_lane_is_relative_to_the_executed_lanes(run_ptx):
    mem, base = device(4 * N)
    addrs = base + 4 * lanes()
    addrs[20] = 0
    with pytest.raises(MemoryFault) as err:
        run(run_ptx, "ld.global.u32 %r1, [%rd1];", {"%rd1": addrs}, memory=mem, idx=[2, 7, 20, 21])
    assert err.value.lane == 2


# ------------------------------------------------------------------ other state spaces


def test_shared_local_and_symbols(run_ptx):
    decls = ".shared .align 4 .b8 sm[256];\n.local .align 4 .b8 lc[16];"
    body = "\n".join([
        "st.shared.u32 [%r2+4], %r1;",
        "ld.shared.u32 %r3, [%r4+4];",
        "st.local.u32 [lc+8], %r1;",
        "ld.local.u32 %r5, [lc+8];",
        "ld.shared.u32 %r6, [sm+8];",
    ])
    tid = np.arange(N, dtype=np.uint32)
    out = run_ptx(body, {"%r1": tid * 3, "%r2": 4 * tid, "%r4": 4 * ((tid + 1) % N)}, decls=REGS + decls)
    assert np.array_equal(out.reg("%r3"), 3 * ((tid + 1) % N))
    assert np.array_equal(out.reg("%r5"), tid * 3)  # local is per thread
    assert np.all(out.reg("%r6") == 3)  # [sm+8] = lane 1's word at offset 4+4
    assert np.all(out.addresses[4] == 8) and np.all(out.addresses[2] == 8)


def test_kernel_params_and_call_parameters(run_ptx):
    params = ".param .u64 k_param_0, .param .u32 k_param_1, .param .align 8 .b8 k_param_2[8]"
    kp = np.uint64(0x1122334455667788).tobytes() + np.uint32(0xDEADBEEF).tobytes() + b"\0" * 4 \
        + np.array([3, 4], np.uint32).tobytes()
    body = "\n".join([
        "ld.param.u64 %rd1, [k_param_0];",
        "ld.param.u32 %r1, [k_param_1];",
        "ld.param.v2.u32 {%r2, %r3}, [k_param_2];",
        "ld.param.s8 %r4, [k_param_1+3];",
        "st.param.b32 [cp+4], %r1;",
        "ld.param.b32 %r5, [cp+4];",
    ])
    out = run_ptx(body, decls=REGS + "\n.param .align 8 .b8 cp[8];", params=params, kernel_params=kp)
    assert np.all(out.reg("%rd1") == 0x1122334455667788)
    assert np.all(out.reg("%r1") == 0xDEADBEEF)
    assert np.all(out.reg("%r2") == 3) and np.all(out.reg("%r3") == 4)
    assert np.all(out.reg("%r4") == 0xFFFFFFDE)
    assert np.all(out.reg("%r5") == 0xDEADBEEF)
    assert np.all(out.addresses[1] == 8)


def test_kernel_params_through_a_register(run_ptx):
    kp = np.arange(8, dtype=np.uint32).tobytes()
    offs = (4 * (np.arange(N) % 8)).astype(np.uint64)
    out = run(run_ptx, "ld.param.u32 %r1, [%rd1];\nld.param.v2.u16 {%rs1, %rs2}, [%rd1];",
              {"%rd1": offs}, params=".param .align 4 .b8 k_param_0[32]", kernel_params=kp)
    assert np.array_equal(out.reg("%r1"), np.arange(N) % 8)
    assert np.array_equal(out.reg("%rs1"), np.arange(N) % 8) and np.all(out.reg("%rs2") == 0)
    offs[4] = 32
    with pytest.raises(MemoryFault) as err:
        run(run_ptx, "ld.param.u32 %r1, [%rd1];", {"%rd1": offs}, params=".param .align 4 .b8 k_param_0[32]",
            kernel_params=kp)
    assert err.value.lane == 4


def test_no_lanes(run_ptx):
    mem, _ = device(64)
    body = ("ld.global.u32 %r1, [%rd1];\nst.global.v2.u32 [%rd1], {%r1, %r2};\nld.param.u32 %r3, [k_param_0];\n"
            "cvta.to.global.u64 %rd2, %rd1;\natom.global.add.u32 %r4, [%rd1], 1;")
    out = run(run_ptx, body, {"%rd1": np.uint64(1)}, memory=mem, idx=[], params=".param .u32 k_param_0",
              kernel_params=b"\1\0\0\0")
    assert all(a.size == 0 and a.dtype == np.uint64 for a in out.addresses)


def test_const_space(run_ptx):
    module = ".const .align 4 .b8 tab[8] = {1, 0, 0, 0, 2, 0, 0, 0};\n"
    out = run_ptx("cvta.const.u64 %rd1, tab;\nld.const.u32 %r1, [tab+4];\nld.u32 %r2, [%rd1];",
                   decls=REGS, module_decls=module)
    assert np.all(out.reg("%r1") == 2) and np.all(out.reg("%r2") == 1)


# ------------------------------------------------------------------ generic addressing


def test_generic_addressing_through_cvta(run_ptx):
    decls = REGS + "\n.shared .align 8 .b8 sm[256];\n.local .align 8 .b8 lc[16];"
    tid = np.arange(N, dtype=np.uint32)
    body = "\n".join([
        "cvta.shared.u64 %rd1, sm;",
        "cvta.local.u64 %rd5, lc;",
        "st.u32 [%rd2], %r1;",              # generic store into shared (rd2 = rd1 + 4*tid set below)
        "ld.shared.u32 %r2, [%r3];",
        "st.u32 [%rd5+4], %r1;",
        "ld.local.u32 %r4, [lc+4];",
        "cvta.to.shared.u64 %rd6, %rd2;",
        "cvta.to.local.u64 %rd7, %rd5;",
        "isspacep.shared %p1, %rd2;",
        "isspacep.local %p2, %rd2;",
        "isspacep.global %p3, %rd2;",
    ])
    gen = SHARED_WINDOW + 4 * tid.astype(np.uint64)
    out = run_ptx(body, {"%r1": tid + 100, "%rd2": gen, "%r3": 4 * tid}, decls=decls)
    assert np.all(out.reg("%rd1") == SHARED_WINDOW)
    assert np.all(out.reg("%rd5") == LOCAL_WINDOW)
    assert np.array_equal(out.reg("%r2"), tid + 100)
    assert np.array_equal(out.reg("%r4"), tid + 100)
    assert np.array_equal(out.reg("%rd6"), 4 * tid)
    assert np.all(out.reg("%rd7") == 0)
    assert out.reg("%p1").all() and not out.reg("%p2").any() and not out.reg("%p3").any()
    assert np.array_equal(out.addresses[0], gen)  # generic accesses report generic addresses


def test_generic_access_mixing_global_and_shared(run_ptx):
    mem, base = device(4 * N, np.arange(N, dtype=np.uint32) + 1000)
    decls = REGS + "\n.shared .align 4 .b8 sm[128];"
    tid = np.arange(N, dtype=np.uint64)
    gen = np.where(tid % 2 == 0, base + 4 * tid, SHARED_WINDOW + 4 * tid).astype(np.uint64)
    out = run_ptx("st.shared.u32 [%r5], %r6;\nld.u32 %r1, [%rd1];\nst.u32 [%rd1], %r7;\n"
                   "ld.v2.u32 {%r2, %r3}, [%rd2];\nisspacep.global %p1, %rd1;",
                   {"%rd1": gen, "%rd2": (gen & ~np.uint64(7)), "%r5": 4 * tid.astype(np.uint32),
                    "%r6": 5 * tid.astype(np.uint32), "%r7": np.uint32(1)},
                   decls=decls, memory=mem)
    expect = np.where(tid % 2 == 0, tid + 1000, 5 * tid)
    assert np.array_equal(out.reg("%r1"), expect)
    assert np.array_equal(out.reg("%p1"), tid % 2 == 0)
    words = mem.read(base, 4 * N).view(np.uint32)
    assert np.all(words[::2] == 1) and np.array_equal(words[1::2], np.arange(1, N, 2) + 1000)
    assert np.all(out.state.shared[: 4 * N].view(np.uint32)[1::2] == 1)
    assert np.all(out.reg("%r3")[1::2] == 1)


def test_generic_fault_reports_the_lane(run_ptx):
    decls = REGS + "\n.shared .align 4 .b8 sm[64];"
    gen = (SHARED_WINDOW + 4 * lanes() % 64).astype(np.uint64)
    gen[11] = SHARED_WINDOW + 64
    with pytest.raises(MemoryFault) as err:
        run_ptx("ld.u32 %r1, [%rd1];", {"%rd1": gen}, decls=decls, shared_bytes=64)
    assert err.value.lane == 11


def test_cvta_u32_forms_are_modulo_2_32(run_ptx):
    decls = REGS + "\n.shared .align 4 .b8 sm[64];"
    out = run_ptx("cvta.shared.u32 %r1, sm+8;\ncvta.to.shared.u32 %r2, %r1;\ncvta.to.global.u64 %rd2, %rd1;",
                   {"%rd1": np.uint64(0x123456789)}, decls=decls)
    assert np.all(out.reg("%r1") == 8) and np.all(out.reg("%r2") == 8)
    assert np.all(out.reg("%rd2") == 0x123456789)


# ------------------------------------------------------------------ hints, fences, unsupported forms


def test_hints_and_fences(run_ptx):
    mem, base = device(64)
    out = run(run_ptx, "prefetch.global.L2 [%rd1+8];\nprefetchu.L1 [%rd1];\nmembar.gl;\nfence.acq_rel.gpu;\n"
              "discard.global.L2 [%rd1], 128;\napplypriority.global.L2::evict_normal [%rd1], 128;",
              {"%rd1": np.uint64(base)}, memory=mem)
    assert np.all(out.addresses[0] == base + 8) and np.all(out.addresses[1] == base)
    assert len(out.addresses) == 4  # membar/fence are barriers, not memory instructions


@pytest.mark.parametrize("body", [
    "ld.global.b128 %rd1, [%rd2];",
    "cvta.param.u64 %rd1, %rd2;",
    "cvta.shared.u16 %rs1, %rs2;",
])
def test_unsupported_forms(run_ptx, body):
    with pytest.raises(UnsupportedPTX):
        run(run_ptx, body)
