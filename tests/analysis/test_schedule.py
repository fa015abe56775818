"""tlpsim.analysis.schedule: the issue order of hand-written blocks, exactly."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.analysis.analyzed import analyze
from tlpsim.analysis.schedule import block_schedule, reschedule, schedule_order
from tlpsim.config.loader import list_presets, load_config
from tlpsim.frontend.ptx_parser import parse_ptx
from tlpsim.workloads.registry import get_workload

HEAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb)
{
  .reg .pred %p<4>;
  .reg .f32 %f<16>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
"""


def kernel(body: str):
    return parse_ptx(HEAD + body + "\n}\n").functions["k"]


def order(body: str) -> list[int]:
    fn = kernel(body)
    assert len(fn.blocks) == 1
    return block_schedule(fn.instructions)


def test_loads_hoisted_ahead_of_their_uses():
    # nvcc's layout: each pair of loads next to the fma using them
    assert order("""
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  ld.global.nc.f32 %f1, [%rd1];
  ld.global.nc.f32 %f2, [%rd2];
  fma.rn.f32 %f3, %f1, %f2, %f3;
  ld.global.nc.f32 %f4, [%rd1+4];
  ld.global.nc.f32 %f5, [%rd2+4];
  fma.rn.f32 %f6, %f4, %f5, %f6;
  st.global.f32 [%rd1], %f3;
  ret;""") == [0, 1, 2, 3, 5, 6, 4, 7, 8, 9]


def test_memory_order_and_register_hazards():
    # a read-only load passes a store ...
    assert order("""
  st.global.f32 [%rd2], %f2;
  ld.global.nc.f32 %f4, [%rd1];
  add.f32 %f5, %f4, %f4;
  ret;""") == [1, 0, 2, 3]
    # ... a load that may alias it does not (nor a shared load a shared store)
    assert order("""
  st.global.f32 [%rd2], %f2;
  ld.global.f32 %f4, [%rd1];
  add.f32 %f5, %f4, %f4;
  ret;""") == [0, 1, 2, 3]
    assert order("""
  st.shared.f32 [%rd2], %f2;
  ld.shared.f32 %f4, [%rd1];
  add.f32 %f5, %f4, %f4;
  ret;""") == [0, 1, 2, 3]
    # a store waits for the loads before it; loads pass each other
    assert order("""
  ld.global.f32 %f1, [%rd1];
  mul.f32 %f6, %f7, %f7;
  ld.global.f32 %f3, [%rd1+4];
  st.global.f32 [%rd2], %f6;
  ret;""") == [0, 2, 1, 3, 4]
    # write after read: the load overwriting %r2 stays after the mov reading it
    assert order("""
  mov.b32 %r9, %r2;
  ld.global.nc.u32 %r2, [%rd1];
  add.s32 %r3, %r2, %r9;
  ret;""") == [0, 1, 2, 3]
    # write after write: the last value of %f1 is the add's
    assert order("""
  ld.global.nc.f32 %f1, [%rd1];
  add.f32 %f2, %f1, %f1;
  mov.f32 %f1, %f3;
  ld.global.nc.f32 %f4, [%rd2];
  ret;""") == [0, 3, 1, 2, 4]


def test_memory_disambiguation_as_ptxas_does_it():
    # sgemm_tiled's epilogue: one base, disjoint offsets -- the loads go ahead of the
    # stores (the cubin: four LDG then four STG per base)
    assert order("""
  ld.global.f32 %f1, [%rd1];
  mul.f32 %f2, %f1, %f9;
  st.global.f32 [%rd1], %f2;
  ld.global.f32 %f3, [%rd1+64];
  mul.f32 %f4, %f3, %f9;
  st.global.f32 [%rd1+64], %f4;
  ret;""") == [0, 3, 1, 4, 2, 5, 6]
    # overlapping bytes stay ordered: a v2 load at +4 covers [4, 12), the store [8, 12)
    assert order("""
  st.global.f32 [%rd1+8], %f2;
  ld.global.v2.f32 {%f3, %f4}, [%rd1+4];
  ret;""") == [0, 1, 2]
    # ... and so do the bytes after: [12, 16) does not overlap [8, 12)
    assert order("""
  st.global.f32 [%rd1+8], %f2;
  ld.global.f32 %f3, [%rd1+12];
  add.f32 %f5, %f3, %f3;
  ret;""") == [1, 0, 2, 3]
    # the base register redefined between them: another address, ordered
    assert order("""
  st.global.f32 [%rd1], %f2;
  add.s64 %rd1, %rd1, %rd2;
  ld.global.f32 %f3, [%rd1+4];
  ret;""") == [0, 1, 2, 3]
    # other bases may alias (nvcc's PTX gives no more than that)
    assert order("""
  st.global.f32 [%rd2], %f2;
  ld.global.f32 %f3, [%rd1+4];
  ret;""") == [0, 1, 2]
    # shared and global memory are separate windows; a generic address may be in either
    assert order("""
  st.shared.f32 [%rd2], %f2;
  ld.global.f32 %f3, [%rd1];
  add.f32 %f5, %f3, %f3;
  ret;""") == [1, 0, 2, 3]
    assert order("""
  st.shared.f32 [%rd2], %f2;
  ld.f32 %f3, [%rd1];
  ret;""") == [0, 1, 2]
    # an atomic stays ordered with every access, whatever its address
    assert order("""
  atom.global.add.u32 %r1, [%rd1], 1;
  ld.global.u32 %r2, [%rd1+64];
  ret;""") == [0, 1, 2]


def test_fences_keep_their_place():
    # bar.sync: nothing crosses it; a %clock read times what it encloses
    assert order("""
  add.s32 %r1, %r1, 1;
  ld.shared.f32 %f1, [%rd1];
  bar.sync 0;
  add.s32 %r2, %r2, 1;
  ld.global.nc.f32 %f2, [%rd2];
  mov.u32 %r3, %clock;
  ld.global.nc.f32 %f3, [%rd2+4];
  add.f32 %f4, %f3, %f2;
  ret;""") == [1, 0, 2, 4, 3, 5, 6, 7, 8]


def test_carry_chain_and_guards():
    # add.cc / addc share the carry flag; a guarded write is ordered with its guard's setp
    assert order("""
  add.cc.u32 %r1, %r2, %r3;
  ld.global.nc.u32 %r4, [%rd1];
  addc.u32 %r5, %r6, %r7;
  setp.eq.s32 %p1, %r4, 0;
  @%p1 add.s32 %r5, %r5, 1;
  add.cc.u32 %r8, %r4, %r4;
  ret;""") == [1, 0, 2, 3, 4, 5, 6]


def test_reschedule_keeps_blocks_and_renumbers():
    fn = kernel("""
  ld.param.u64 %rd1, [pa];
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $L_end;
  mul.f32 %f1, %f2, %f2;
  ld.global.nc.f32 %f3, [%rd1];
  add.f32 %f4, %f3, %f1;
$L_end:
  ret;""")
    new = reschedule(fn)
    assert [b.start for b in new.blocks] == [b.start for b in fn.blocks]
    assert new.labels == fn.labels
    assert schedule_order(fn) == [0, 1, 2, 4, 3, 5, 6]
    assert [i.index for i in new.instructions] == list(range(len(fn.instructions)))
    assert [i.opcode for i in new.instructions][3:5] == ["ld.global.nc.f32", "mul.f32"]
    assert fn.instructions[3].opcode == "mul.f32"  # the parsed function is left as it was
    # a block already in schedule order gives the function itself back
    again = reschedule(new)
    assert again is new


def test_analyze_caches_both_orders():
    mod = parse_ptx(HEAD + """
  ld.global.nc.f32 %f1, [%rd1];
  add.f32 %f2, %f1, %f1;
  ld.global.nc.f32 %f3, [%rd2];
  add.f32 %f4, %f3, %f3;
  ret;
}
""")
    plain, listed = analyze(mod, "k"), analyze(mod, "k", scheduled=True)
    assert analyze(mod, "k") is plain and analyze(mod, "k", scheduled=True) is listed
    assert [i.opcode for i in plain.fn.instructions][:3] == ["ld.global.nc.f32", "add.f32", "ld.global.nc.f32"]
    assert [i.opcode for i in listed.fn.instructions][:3] == ["ld.global.nc.f32", "ld.global.nc.f32", "add.f32"]


def test_only_hopper_presets_list_schedule():
    for name in list_presets():
        want = "list" if name in ("h200", "h100") else "ptx"
        assert load_config(name).gpu.block_schedule == want, name
    with pytest.raises(Exception, match="block_schedule"):
        load_config("h200", {"gpu.block_schedule": "sass"})


def _run(name: str, schedule: str):
    cfg = load_config("h200", {"gpu.block_schedule": schedule})
    with tlpsim.Device(config=cfg, mode="functional", trace=True, trace_cache=False) as dev:
        result = get_workload(name).execute("tiny")
    # the opcodes each launch executed, in trace order
    ops = [np.array([i.opcode for i in dev.analyzed_kernel(rec.mangled).fn.instructions])[rec.trace.pc]
           for rec in dev.launches]
    return result, dev.launches, ops


@pytest.mark.parametrize("name", ["sgemm_naive", "spmv"])
def test_same_results_other_order(name):
    plain, plain_launches, plain_ops = _run(name, "ptx")
    listed, listed_launches, listed_ops = _run(name, "list")
    assert plain.verified and listed.verified
    assert [c.max_error for c in plain.checks] == [c.max_error for c in listed.checks]
    for a, b, ops_a, ops_b in zip(plain_launches, listed_launches, plain_ops, listed_ops, strict=True):
        if a.kernel == "spmv_csr_vector":  # if-converted (test_ifconvert.py): other instructions run
            continue
        # the same instructions run, as often, in another order within blocks
        assert a.warp_instructions == b.warp_instructions
        assert a.trace.thread_instructions == b.trace.thread_instructions
        assert sorted(ops_a) == sorted(ops_b)
        assert list(ops_a) != list(ops_b)


def test_device_and_run_keys_take_the_schedule():
    assert tlpsim.Device().block_schedule == "ptx"
    assert tlpsim.Device(config="h200").block_schedule == "list"
    assert tlpsim.Device(config="h200", block_schedule="ptx").block_schedule == "ptx"
    assert tlpsim.Device(block_schedule="list").block_schedule == "list"
    with pytest.raises(tlpsim.TlpsimError, match="block_schedule must be 'ptx'.*not 'sass'"):
        tlpsim.Device(block_schedule="sass")
    from tlpsim.sweep.job import COMPILE_KEYS, compile_stamp

    assert "gpu.block_schedule" in COMPILE_KEYS  # a functional run takes it too
    assert compile_stamp("h200", {}, "timing") == {"block_schedule": "list"}
    assert compile_stamp("h200", {"gpu.block_schedule": "ptx"}, "timing") == {}
    assert "block_schedule" not in compile_stamp("gtx480", {}, "timing")
