"""analysis.wait_reads on hand-written PTX: the loads/atomics a loop polls until
memory changes, and the look-alikes that are not waits."""

from __future__ import annotations

from tlpsim.analysis.wait_reads import wait_reads
from tlpsim.frontend.ptx_parser import parse_ptx

HEADER = ".version 9.5\n.target sm_80\n.address_size 64\n"
REGS = ".reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<8>;"


def _waits(body: str) -> list[str]:
    fn = parse_ptx(HEADER + ".visible .entry k(.param .u64 a)\n{\n" + REGS + "\nld.param.u64 %rd1, [a];\n"
                   + body + "\nret;\n}\n").kernels["k"]
    return [fn.instructions[i].opcode for i in sorted(wait_reads(fn))]


def test_a_rotated_spin_polls_its_reload():
    assert _waits("""
    ld.volatile.global.u32 %r1, [%rd1];
    setp.ne.s32 %p1, %r1, 0;
    @%p1 bra DONE;
LOOP:
    ld.volatile.global.u32 %r1, [%rd1+4];
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra LOOP;
DONE:""") == ["ld.volatile.global.u32"]


def test_a_value_that_only_picks_a_path_inside_a_counted_loop_is_not_a_wait():
    assert _waits("""
    mov.u32 %r2, 0;
LOOP:
    ld.global.u32 %r1, [%rd1];
    setp.lt.s32 %p2, %r1, 0;
    @%p2 bra SKIP;
    st.global.u32 [%rd1], %r2;
SKIP:
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, 10;
    @%p1 bra LOOP;""") == []


def test_a_counter_in_the_exit_condition_makes_it_no_wait():
    assert _waits("""
    mov.u32 %r2, 0;
LOOP:
    ld.volatile.global.u32 %r1, [%rd1];
    add.s32 %r2, %r2, 1;
    setp.eq.s32 %p1, %r1, 0;
    setp.lt.s32 %p2, %r2, 100;
    and.pred %p3, %p1, %p2;
    @%p3 bra LOOP;""") == []


def test_compare_and_swap_a_lock_versus_a_retry():
    lock = _waits("""
LOOP:
    mov.u32 %r2, 0;
    mov.u32 %r3, 1;
    atom.global.cas.b32 %r1, [%rd1], %r2, %r3;
    setp.ne.s32 %p1, %r1, 0;
    @%p1 bra LOOP;""")
    retry = _waits("""
    ld.global.u32 %r1, [%rd1];
LOOP:
    mov.u32 %r2, %r1;
    add.s32 %r3, %r2, 1;
    atom.global.cas.b32 %r1, [%rd1], %r2, %r3;
    setp.ne.s32 %p1, %r2, %r1;
    @%p1 bra LOOP;""")
    assert lock == ["atom.global.cas.b32"] and retry == []
