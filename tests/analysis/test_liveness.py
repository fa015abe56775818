"""Golden and property tests for tlpsim.analysis.liveness (standard and GPU-aware)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.analysis.liveness import def_use, liveness, register_units
from tlpsim.frontend.ptx_parser import parse_ptx

DECLS = """
  .reg .pred %p<4>;
  .reg .b16 %h<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<5>;
"""


def kernel(body: str, decls: str = DECLS):
    text = (".version 8.0\n.target sm_80\n.address_size 64\n"
            f".visible .entry k(.param .u64 k_p0)\n{{\n{decls}\n{body}\n}}\n")
    return parse_ptx(text).kernels["k"]


def S(*regs):
    return frozenset("%" + r for r in regs)


# ------------------------------------------------------------------ straight line

STRAIGHT = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.v2.u32 {%r2, %r3}, [%rd3];
  setp.lt.u32 %p1, %r2, %r3;
  selp.u32 %r4, %r2, %r3, %p1;
  add.u32 %r5, %r4, %r1;
  st.global.u32 [%rd3+8], %r5;
  ret;
"""


def test_def_use_operands():
    fn = kernel(STRAIGHT + "")
    du = def_use(fn)
    assert du[4].defs == S("r2", "r3") and du[4].uses == S("rd3")  # Vec dst, address base
    assert du[6].reads == ("%r2", "%r3", "%p1")
    assert du[8].uses == S("rd3", "r5") and du[8].defs == frozenset()  # st: address base is a use
    assert du[1].uses == frozenset()  # %tid.x is not a register
    g = kernel("@!%p1 mov.u32 %r1, 3;\n ld.global.v4.u32 {%r2, _, %r3, _}, [%rd1];\n ret;")
    assert def_use(g)[0].reads == ("%p1",) and def_use(g)[0].defs == S("r1")
    assert def_use(g)[1].defs == S("r2", "r3")


def test_register_units():
    fn = kernel("ret;", DECLS + "  .reg .b128 %q<2>;\n  .reg .f64 %fd<2>;\n")
    u = register_units(fn)
    assert (u["%p1"], u["%h1"], u["%r1"], u["%rd1"], u["%fd1"], u["%q1"]) == (0, 1, 1, 2, 2, 4)


def test_straight_line_golden():
    fn = kernel(STRAIGHT)
    for gpu in (False, True):
        lv = liveness(fn, gpu_aware=gpu)
        assert [lv.live_in(i) for i in range(10)] == [
            S(), S("rd1"), S("rd1", "r1"), S("rd1", "r1", "rd2"), S("r1", "rd3"),
            S("r1", "rd3", "r2", "r3"), S("r1", "rd3", "r2", "r3", "p1"), S("r1", "rd3", "r4"),
            S("rd3", "r5"), S()]
        assert lv.live_out(3) == S("r1", "rd3") and lv.live_out(8) == S()
        assert not any(lv.soft)
        # 64-bit values count 2, predicates 0
        assert [lv.live_in_units(i) for i in range(10)] == [0, 2, 3, 5, 3, 5, 5, 4, 3, 0]
        assert lv.pressure(2) == 5 and lv.max_pressure == 5
        assert lv.live_in(6, rf_only=True) == S("r1", "rd3", "r2", "r3")
        assert lv.is_predicate("%p1") and not lv.is_predicate("%rd1")
        # last uses
        assert lv.reads(3) == ("%rd1", "%rd2") and lv.last_use_flags(3) == (True, True)
        assert lv.last_use_flags(2) == (False,)  # %r1 is read again by instruction 7
        assert lv.last_uses(6) == S("r2", "r3", "p1")
        assert lv.last_use_flags(7) == (True, True)
        assert lv.warp_last_use_flags(7) == (True, True)  # no divergence


# ------------------------------------------------------------------ divergence

IF_THEN = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra $L_skip;
  add.u32 %r2, %r1, 5;
$L_skip:
  st.global.u32 [%rd1], %r2;
  ret;
"""


@pytest.mark.parametrize("rule", ["ipdom", "regless", "mask"])
def test_if_then_partial_write_is_soft(rule):
    """Lanes that skip the `then` block still need %r2 == 0: the write at 5 is
    soft, so GPU-aware liveness keeps %r2 live across it; textbook liveness kills it."""
    fn = kernel(IF_THEN)
    std = liveness(fn, gpu_aware=False)
    gpu = liveness(fn, gpu_aware=True, soft_rule=rule)
    assert std.live_in(5) == S("r1", "rd1")
    assert gpu.live_in(5) == S("r1", "r2", "rd1")
    assert gpu.soft_defs(5) == S("r2") and gpu.hard_defs(5) == S()
    assert std.soft_defs(5) == S() and std.hard_defs(5) == S("r2")
    assert gpu.live_out(4) == std.live_out(4) == S("r1", "r2", "rd1")
    assert gpu.soft_defs(2) == S()  # before the branch every lane is active


IF_ELSE = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  add.u32 %r9, %r1, 100;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra $L_else;
  add.u32 %r2, %r1, 1;
  bra.uni $L_join;
$L_else:
  add.u32 %r2, %r9, %r1;
$L_join:
  st.global.u32 [%rd1], %r2;
  ret;
"""


def test_if_else_sibling_path():
    """Both arms write %r2.  Whichever arm runs second must not clobber the %r2
    the other arm's lanes left for the join: the "ipdom" rule makes both writes
    soft (live from the arm's start, but not before the branch, where no lane
    has a value); Algorithm 2 verbatim treats them as hard."""
    fn = kernel(IF_ELSE)
    std = liveness(fn, gpu_aware=False)
    ipd = liveness(fn, gpu_aware=True)
    alg2 = liveness(fn, gpu_aware=True, soft_rule="regless")
    assert std.live_in(5) == alg2.live_in(5) == S("r1", "rd1")
    assert ipd.soft_defs(5) == ipd.soft_defs(7) == S("r2")
    assert alg2.soft_defs(5) == alg2.soft_defs(7) == S()
    assert ipd.live_in(5) == S("r1", "r2", "rd1")
    assert ipd.live_out(4) == S("r1", "r9", "rd1")  # %r2 holds nothing before the branch
    assert ipd.live_in(0) == S()
    # whole-warp view: %r9 is only read in the else arm, but while the then arm runs
    # the else lanes still need it; %r1 dies per thread at 5, not for the warp
    assert ipd.live_in(5) == S("r1", "r2", "rd1")
    assert ipd.warp_live_in(5) == S("r1", "r2", "r9", "rd1")
    assert ipd.reads(5) == ("%r1",)
    assert ipd.last_use_flags(5) == (True,) and ipd.warp_last_use_flags(5) == (False,)
    assert ipd.warp_live_in(8) == ipd.live_in(8) == S("r2", "rd1")  # reconverged


# ------------------------------------------------------------------ loops

DO_WHILE = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
$L_loop:
  mul.lo.u32 %r4, %r2, 3;
  add.u32 %r3, %r3, %r4;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra $L_loop;
  add.u32 %r5, %r3, %r4;
  st.global.u32 [%rd1], %r5;
  ret;
"""


def test_do_while_loop_exit_lanes():
    """Lanes leave the loop at different iterations; those that left hold their
    last %r4 while the rest overwrite it, so the write at 4 is soft.  Algorithm 2
    verbatim misses it (the exiting block does not dominate the body)."""
    fn = kernel(DO_WHILE)
    std = liveness(fn, gpu_aware=False)
    ipd = liveness(fn)
    alg2 = liveness(fn, soft_rule="regless")
    loop_carried = S("r1", "r2", "r3", "rd1")
    assert std.live_in(4) == alg2.live_in(4) == loop_carried
    assert ipd.live_in(4) == loop_carried | S("r4")
    assert ipd.soft_defs(4) == S("r4") and ipd.soft_defs(5) == S("r3")
    assert ipd.soft_defs(6) == S() and ipd.soft_defs(7) == S()  # %r2, %p1 are dead after the loop
    assert alg2.soft_defs(4) == S()
    assert ipd.live_out(3) == loop_carried  # no lane has %r4 before the first iteration
    for lv in (std, ipd, alg2):  # loop-carried values are live around the back edge
        assert loop_carried <= lv.live_out(8) and lv.live_in(9) == S("r3", "r4", "rd1")


WHILE = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  mov.u32 %r4, 0;
$L_head:
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra $L_exit;
  mul.lo.u32 %r4, %r2, 3;
  add.u32 %r2, %r2, 1;
  bra.uni $L_head;
$L_exit:
  st.global.u32 [%rd1], %r4;
  ret;
"""


@pytest.mark.parametrize("rule", ["ipdom", "regless"])
def test_while_loop_header_exit(rule):
    fn = kernel(WHILE)
    std, gpu = liveness(fn, gpu_aware=False), liveness(fn, soft_rule=rule)
    assert std.live_in(6) == S("r1", "r2", "rd1")
    assert gpu.live_in(6) == S("r1", "r2", "r4", "rd1") and gpu.soft_defs(6) == S("r4")
    assert gpu.live_in(4) == std.live_in(4) == S("r1", "r2", "r4", "rd1")


# ------------------------------------------------------------------ predication

GUARDED = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  mov.u32 %r2, 1;
  @%p1 mov.u32 %r2, 2;
  add.u32 %r3, %r2, %r1;
  @%p1 mov.u32 %r2, 7;
  @!%p1 mov.u32 %r2, 8;
  add.u32 %r3, %r3, %r2;
  @%p1 mov.u32 %r6, 3;
  @%p1 st.global.u32 [%rd1+4], %r6;
  st.global.u32 [%rd1], %r3;
  ret;
"""


def test_guarded_writes():
    fn = kernel(GUARDED)
    std, gpu = liveness(fn, gpu_aware=False), liveness(fn)
    assert gpu.soft_defs(4) == S("r2")  # !p1 lanes keep 1
    assert gpu.live_in(4) == S("r1", "r2", "rd1", "p1") and gpu.live_out(3) == gpu.live_in(4)
    assert "%r2" not in std.live_in(4) and "%r2" not in std.live_out(3)  # textbook: write 3 looks dead
    assert gpu.soft_defs(6) == S()  # completed by the @!p1 write at 7
    assert gpu.soft_defs(7) == S("r2")
    assert gpu.live_in(6) == S("r3", "rd1", "p1") and gpu.live_in(7) == S("r2", "r3", "rd1", "p1")
    assert gpu.reads(5) == ("%r2", "%r1") and gpu.last_use_flags(5) == (True, True)
    assert gpu.soft_defs(9) == S()  # a first write keeps nothing alive
    assert gpu.hard_defs(9) == S("r6")


# ------------------------------------------------------------------ properties

N_LABELS = 4


@st.composite
def random_kernels(draw):
    """Random PTX with 64-bit values, vectors, predicates, guards, loops and
    arbitrary (possibly irreducible) branches."""
    r = lambda: f"%r{draw(st.integers(0, 5))}"
    rd = lambda: f"%rd{draw(st.integers(0, 2))}"
    p = lambda: f"%p{draw(st.integers(0, 2))}"
    vec_dst = lambda a, b, src: f"mov.b64 {{%r{a}, %r{b}}}, {src};"
    forms = [
        lambda: f"add.s32 {r()}, {r()}, {r()};",
        lambda: f"mov.u32 {r()}, {draw(st.integers(0, 9))};",
        lambda: f"add.s64 {rd()}, {rd()}, {rd()};",
        lambda: f"mov.b64 {rd()}, {{{r()}, {r()}}};",
        lambda: vec_dst(*draw(st.sampled_from([(0, 1), (2, 3), (4, 5), (1, 4)])), rd()),
        lambda: f"setp.lt.s32 {p()}, {r()}, {r()};",
        lambda: f"@{draw(st.sampled_from(['', '!']))}{p()} add.s32 {r()}, {r()}, 1;",
        lambda: f"ld.global.u32 {r()}, [{rd()}];",
        lambda: f"st.global.u32 [{rd()}+4], {r()};",
        lambda: f"@{p()} bra L{draw(st.integers(0, N_LABELS - 1))};",
        lambda: f"bra.uni L{draw(st.integers(0, N_LABELS - 1))};",
        lambda: "bar.sync 0;",
    ]
    n = draw(st.integers(1, 28))
    lines = [draw(st.sampled_from(forms))() for _ in range(n)]
    for k in range(N_LABELS):
        lines.insert(draw(st.integers(0, len(lines))), f"L{k}:")
    lines.append("ret;")
    return kernel("\n".join("  " + x for x in lines))


def check_fixpoint(fn, lv):
    cfg = kernel_cfg(fn)
    for blk in fn.blocks:
        reach = blk.index in cfg.reachable()
        for i in range(blk.start, blk.end):
            if not reach:
                assert lv.live_in(i) == lv.live_out(i) == frozenset()
                continue
            assert lv.soft_defs(i) <= lv.defs(i)
            assert lv.live_in(i) == lv.uses(i) | (lv.live_out(i) - lv.hard_defs(i))
            if i + 1 < blk.end:
                assert lv.live_out(i) == lv.live_in(i + 1)
        if reach:
            succ = frozenset().union(*(lv.live_in(fn.blocks[s].start) for s in blk.succs))
            if lv.defined_out is not None:  # GPU-aware: nothing flows where no value exists
                succ &= lv.defined_out[blk.index]
            assert lv.live_out(blk.end - 1) == succ


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_kernels())
def test_liveness_is_a_fixpoint(fn):
    """live_in(i) = use(i) | (live_out(i) - hard_def(i)) for every instruction, and
    live_out of a block is the union of its successors' live_in."""
    for gpu, rule in ((False, "ipdom"), (True, "ipdom"), (True, "regless"), (True, "mask")):
        check_fixpoint(fn, liveness(fn, gpu_aware=gpu, soft_rule=rule))
    std, gpu = liveness(fn, gpu_aware=False), liveness(fn)
    for i in range(len(fn.instructions)):
        assert gpu.pressure(i) >= gpu.live_in_units(i)
        if not gpu.soft[i] and not any(gpu.soft):  # no soft write anywhere: same as textbook
            assert gpu.live_in(i) <= std.live_in(i)
