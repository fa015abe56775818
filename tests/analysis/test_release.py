"""Golden and property tests for tlpsim.analysis.release (RFV release flags).

Also home of :func:`structured_kernels`, the random structured-kernel strategy
(if/else, if-then, do-while and while loops with breaks, guarded writes, global
loads) that test_regions.py and test_bundles.py reuse.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlpsim.analysis.analyzed import analyze
from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.analysis.liveness import def_use, liveness
from tlpsim.analysis.regalloc import allocate
from tlpsim.analysis.release import PIR_SPAN, ReleasePoints, RenamingParams, loop_carried, release_points
from tlpsim.frontend.ptx_parser import parse_ptx

DECLS = """
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<5>;
"""


def kernel(body: str):
    text = (".version 8.0\n.target sm_80\n.address_size 64\n"
            f".visible .entry k(.param .u64 k_p0)\n{{\n{DECLS}\n{body}\n}}\n")
    return parse_ptx(text).kernels["k"]


def S(*regs):
    return frozenset("%" + r for r in regs)


# ------------------------------------------------------------------ golden

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


def test_divergent_if_else():
    """%r1 is read on both paths: never released inside either (the other path's
    lanes may not have run), released at the reconvergence point; %r9 is read on
    the else path only and released there."""
    fn = kernel(IF_ELSE)
    rp = release_points(fn)
    assert rp.reads[5] == ("%r1",) and rp.flags[5] == (False,) and rp.released[5] == S()
    assert rp.reads[7] == ("%r9", "%r1") and rp.flags[7] == (True, False) and rp.released[7] == S("r9")
    assert rp.reads[8] == ("%rd1", "%r2") and rp.flags[8] == (True, True)
    alloc = allocate(fn)
    assert set(rp.released_phys[7]) == set(alloc.regs_of("%r9"))
    assert set(rp.released_phys[8]) == set(alloc.regs_of("%rd1") + alloc.regs_of("%r2"))
    (br,) = rp.branch_releases
    assert (br.block, br.index, br.reconvergence, br.branches) == (3, 8, True, (4,))
    assert br.registers == S("r1", "r9")  # r1: both paths; r9: the then path never read it
    assert set(br.phys) == set(alloc.regs_of("%r1") + alloc.regs_of("%r9"))
    assert rp.reconvergence_points == (8,) and rp.held_by_loops == 0
    assert sum(map(sum, rp.flags)) == 3


DO_WHILE = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  mov.u32 %r3, 7;
$L_loop:
  add.u32 %r4, %r3, %r2;
  mul.lo.u32 %r3, %r4, 3;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra $L_loop;
  st.global.u32 [%rd1], %r2;
  ret;
"""


def test_loop_carried_values_are_held():
    """%r3 is read at 4 and rewritten at 5: per thread it is dead in between, but
    it carries a value around the back edge (Figure 2.6(d)), so it is released
    only after the loop, with %r1, by the list at the exit."""
    fn = kernel(DO_WHILE)
    lv = liveness(fn)
    assert "%r3" not in lv.live_out(4)  # per-thread dead ...
    rp = release_points(fn)
    assert rp.loop_carried[1] == S("r1", "r2", "r3", "rd1")
    assert rp.flags[4] == (False, False) and rp.released[4] == S() and rp.held_by_loops == 1
    assert rp.released[5] == S("r4")  # not loop-carried: released in the body
    assert rp.flags[5] == (set(allocate(fn).regs_of("%r4")) <= set(rp.released_phys[5]),)
    assert rp.flags[6] == (False,) and rp.flags[7] == (False, False)  # %r2, %r1: carried
    (br,) = rp.branch_releases
    assert (br.index, br.reconvergence, br.registers) == (9, True, S("r1", "r3"))
    assert rp.flags[9] == (True, True)
    assert loop_carried(fn, lv) == dict(rp.loop_carried)


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


def test_soft_definition_keeps_value():
    """The write at 5 is soft (lanes skipping it keep %r2 = 0), so %r2 stays live
    and is never released before the store; %r1 dies in the then block for every
    lane (the skipping lanes do not need it) and also at the join."""
    fn = kernel(IF_THEN)
    rp = release_points(fn)
    assert liveness(fn).soft_defs(5) == S("r2")
    assert rp.flags[5] == (True,) and rp.released[5] == S("r1")
    assert rp.dead_writes[5] == S()  # the soft write of %r2 is live
    (br,) = rp.branch_releases
    assert br.registers == S("r1") and br.index == 6  # r1 was live on the skip path only


def test_guards_repeats_and_dead_writes():
    fn = kernel("""
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  mov.u32 %r5, 9;
  @%p1 add.u32 %r2, %r1, %r1;
  st.global.u32 [%rd1], %r2;
  ret;""")
    rp = release_points(fn)
    # the guard is read first; a repeated operand is flagged at its last occurrence
    assert rp.reads[4] == ("%p1", "%r1", "%r1") and rp.flags[4] == (False, False, True)
    assert rp.dead_writes[3] == S("r5")  # written, never read
    assert not any(f for i, fl in enumerate(rp.flags) for f, r in zip(fl, rp.reads[i]) if r.startswith("%p"))


def test_metadata_counts():
    fn = kernel(IF_ELSE)
    rp = release_points(fn)
    n = len(fn.instructions)
    assert rp.pir_instructions == math.ceil(n / PIR_SPAN) == 1
    assert rp.pbr_instructions == 1 and rp.flag_instructions == 2
    assert rp.code_size_increase == pytest.approx(2 / n)
    assert rp.pir_instructions_per_block == len(fn.blocks)  # every block is < 18 instructions
    assert rp.pbr_instructions_needed == 1
    s = rp.summary()
    assert s["release_flags"] == 3 and s["flag_instructions"] == 2 and s["reconvergence_points"] == 1


LONG = "\n".join(f"  add.u32 %r{(k % 6) + 2}, %r{((k + 5) % 6) + 2}, {k};" for k in range(40))


def test_renaming_selection():
    fn = kernel(f"""
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 1;
  mov.u32 %r3, 2;
  mov.u32 %r4, 3;
  mov.u32 %r5, 4;
  mov.u32 %r6, 5;
  mov.u32 %r7, 6;
{LONG}
  add.u32 %r7, %r7, %r1;
  st.global.u32 [%rd1], %r7;
  ret;""")
    assert RenamingParams().entry_bits == 10 and RenamingParams().capacity == 17  # 1 KB, 48 warps
    assert RenamingParams(warps=820).capacity == 0  # 8192 bits < 10 bits x 820 warps
    rp = release_points(fn, renaming=RenamingParams(warps=400))  # 8192 // 4000 = 2
    ren = rp.renaming
    assert ren.capacity == 2 and len(ren.renamed) == 2
    alloc = allocate(fn)
    assert ren.n_exempt == alloc.n_regs - 2
    assert set(ren.candidates) == {p for p, k in ren.releases.items() if k}
    key = [(ren.lifetime[p] / max(1, ren.instances[p]), ren.instances[p], p) for p in ren.candidates]
    assert key == sorted(key) and ren.renamed == frozenset(ren.candidates[:2])
    # %r1 (tid) and %rd1 live across the whole kernel: the worst candidates
    long_lived = set(alloc.regs_of("%r1") + alloc.regs_of("%rd1"))
    assert not long_lived & ren.renamed
    only = rp.flags_for(ren.renamed)
    for i, fl in enumerate(only):
        for f, full, r in zip(fl, rp.flags[i], rp.reads[i]):
            assert f <= full and (not f or set(alloc.regs_of(r)) <= ren.renamed)
    assert rp.summary()["release_flags_renamed"] == sum(map(sum, only))


def test_registered_analysis():
    m = parse_ptx(".version 8.0\n.target sm_80\n.address_size 64\n"
                  f".visible .entry k(.param .u64 k_p0)\n{{\n{DECLS}\n{IF_ELSE}\n}}\n")
    ak = analyze(m, "k")
    assert isinstance(ak.release_points, ReleasePoints) and ak.release_points is ak.get("release_points")
    assert ak.release_points.flags == release_points(ak.fn).flags


# ------------------------------------------------------------------ random structured kernels

N_R = 6  # %r0..%r5 are data; %r8+depth are loop counters


@st.composite
def structured_kernels(draw, max_depth: int = 2):
    """Random PTX built from structured statements: straight-line code (64-bit
    values, vector loads, guarded writes, global loads and stores), if/else,
    if-then, do-while loops and while loops with an optional break.  Every
    register is written before the body, so every value is defined."""
    labels = itertools.count()
    reg = lambda: f"%r{draw(st.integers(0, N_R - 1))}"

    def simple() -> list[str]:
        k = draw(st.integers(0, 7))
        if k == 0:
            return [f"add.s32 {reg()}, {reg()}, {reg()};"]
        if k == 1:
            return [f"mov.u32 {reg()}, {draw(st.integers(0, 9))};"]
        if k == 2:
            return [f"mul.wide.s32 %rd2, {reg()}, 4;", "add.s64 %rd3, %rd1, %rd2;", f"ld.global.u32 {reg()}, [%rd3];"]
        if k == 3:
            return [f"st.global.u32 [%rd1+4], {reg()};"]
        if k == 4:
            return [f"setp.lt.s32 %p{draw(st.integers(0, 1))}, {reg()}, {reg()};"]
        if k == 5:
            return [f"@%p{draw(st.integers(0, 1))} add.s32 {reg()}, {reg()}, 1;"]
        if k == 6:
            a, b = draw(st.sampled_from([(0, 1), (2, 3), (4, 5), (1, 4)]))
            return ["add.s64 %rd2, %rd1, 8;", f"ld.global.v2.u32 {{%r{a}, %r{b}}}, [%rd2];"]
        return [f"mov.b64 %rd2, {{{reg()}, {reg()}}};", "add.s64 %rd3, %rd3, %rd2;"]

    def body(depth: int) -> list[str]:
        out: list[str] = []
        for _ in range(draw(st.integers(0, 3))):
            c = draw(st.integers(0, 4)) if depth < max_depth else 0
            k = next(labels)
            cnt = f"%r{8 + depth}"
            if c == 0:
                out += simple()
            elif c == 1:
                out += [f"setp.lt.s32 %p2, {reg()}, {reg()};", f"@%p2 bra $E{k};", *body(depth + 1),
                        f"bra.uni $J{k};", f"$E{k}:", *body(depth + 1), f"$J{k}:"]
            elif c == 2:
                out += [f"setp.lt.s32 %p2, {reg()}, {reg()};", f"@%p2 bra $J{k};", *body(depth + 1), f"$J{k}:"]
            elif c == 3:
                out += [f"mov.u32 {cnt}, 0;", f"$L{k}:", *body(depth + 1), f"add.s32 {cnt}, {cnt}, 1;",
                        f"setp.lt.s32 %p3, {cnt}, {reg()};", f"@%p3 bra $L{k};"]
            else:
                brk = ([f"setp.eq.s32 %p2, {reg()}, 3;", f"@%p2 bra $X{k};"] if draw(st.booleans()) else [])
                out += [f"mov.u32 {cnt}, 0;", f"$H{k}:", f"setp.ge.s32 %p3, {cnt}, {reg()};", f"@%p3 bra $X{k};",
                        *body(depth + 1), *brk, f"add.s32 {cnt}, {cnt}, 1;", f"bra.uni $H{k};", f"$X{k}:"]
        return out

    pro = ["ld.param.u64 %rd1, [k_p0];", "mov.u32 %r0, %tid.x;"]
    pro += [f"add.s32 %r{k}, %r0, {k};" for k in range(1, N_R)]
    pro += ["mov.u64 %rd2, 0;", "mov.u64 %rd3, 0;", "mov.u32 %r8, 0;", "mov.u32 %r9, 0;", "mov.u32 %r10, 0;"]
    pro += [f"setp.ne.s32 %p{k}, %r{k}, 0;" for k in range(4)]
    kept = draw(st.lists(st.integers(0, N_R - 1), min_size=1, max_size=3, unique=True))
    epi = [f"st.global.u32 [%rd1+{4 * k}], %r{k};" for k in kept] + ["st.global.u64 [%rd1+64], %rd3;", "ret;"]
    return kernel("\n".join("  " + x for x in pro + body(0) + epi))


# ------------------------------------------------------------------ brute-force reference


def _succ_positions(fn, i: int) -> list[int]:
    blk = fn.blocks[fn.instructions[i].block]
    if i + 1 < blk.end:
        return [i + 1]
    out, seen, work = [], set(), list(blk.succs)
    while work:  # skip empty blocks
        b = work.pop()
        if b in seen:
            continue
        seen.add(b)
        if fn.blocks[b].end > fn.blocks[b].start:
            out.append(fn.blocks[b].start)
        else:
            work.extend(fn.blocks[b].succs)
    return out


def bf_live(fn, starts, reg: str) -> bool:
    """Per-thread, path-based: some path from one of ``starts`` reads ``reg``
    before an unguarded write (a guarded write may not happen)."""
    du = def_use(fn)
    seen, work = set(), list(starts)
    while work:
        j = work.pop()
        if j in seen:
            continue
        seen.add(j)
        if reg in du[j].uses:
            return True
        if reg in du[j].defs and du[j].guard is None:
            continue
        work.extend(_succ_positions(fn, j))
    return False


def divergent_regions(fn) -> dict:
    """Divergent branch block -> (reconvergence block, blocks run before reconvergence)."""
    cfg = kernel_cfg(fn)
    ipdom = cfg.immediate_post_dominators()
    out = {}
    for d in cfg.reachable():
        succ = cfg.successors(d)
        if len(succ) < 2 or fn.instructions[fn.blocks[d].end - 1].has("uni"):
            continue
        r, seen, work = ipdom[d], set(), [s for s in succ if s != ipdom[d]]
        while work:
            n = work.pop()
            if n in seen:
                continue
            seen.add(n)
            work.extend(s for s in cfg.successors(n) if s != r)
        out[d] = (r, seen)
    return out


def waiting_points(fn, regions: dict, b: int) -> list[int]:
    """Instructions where lanes of the warp may wait while it runs block ``b``:
    for every divergent branch whose region holds ``b``, its reconvergence point
    and its successors that do not dominate ``b``; plus the headers of loops
    holding ``b`` (loop-carried values)."""
    cfg = kernel_cfg(fn)
    pts = []
    for d, (r, region) in regions.items():
        if b in region:
            blocks = ([r] if r is not None else []) + [s for s in cfg.successors(d)
                                                       if s != r and not cfg.dominates(s, b)]
            pts += [fn.blocks[x].start for x in blocks]
    pts += [fn.blocks[h].start for h, lp in cfg.loops().items() if b in lp.body]
    return pts


def check_release_safety(fn, rp=None) -> int:
    """No register (virtual, or any virtual register sharing a released physical
    register) is released while a lane of the warp may still read it."""
    rp = rp if rp is not None else release_points(fn)
    alloc = allocate(fn)
    on_phys: dict[int, list[str]] = {}
    for v in alloc.phys:
        for p in alloc.regs_of(v):
            on_phys.setdefault(p, []).append(v)
    reach = kernel_cfg(fn).reachable()
    regions = divergent_regions(fn)
    checked = 0

    def safe(where: str, starts, wait, regs) -> None:
        nonlocal checked
        for v in regs:
            checked += 1
            assert not bf_live(fn, starts, v), f"{where}: {v} is still read after its release\n{fn.name}"
            assert not bf_live(fn, wait, v), f"{where}: {v} is needed by waiting lanes"

    for ins in fn.instructions:
        i = ins.index
        if ins.block not in reach:
            continue
        wait = waiting_points(fn, regions, ins.block)
        safe(f"instr {i} {ins}", _succ_positions(fn, i), wait, rp.released[i])
        safe(f"instr {i} {ins} (phys)", _succ_positions(fn, i), wait,
             {v for p in rp.released_phys[i] for v in on_phys[p]})
        for f, r in zip(rp.flags[i], rp.reads[i]):
            assert not f or r in rp.released[i]
    for br in rp.branch_releases:
        wait = waiting_points(fn, regions, br.block)
        safe(f"branch list at {br.index}", [br.index], wait,
             set(br.registers) | {v for p in br.phys for v in on_phys[p]})
    return checked


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(structured_kernels())
def test_release_never_frees_a_live_register(fn):
    rp = release_points(fn)
    check_release_safety(fn, rp)
    lv = liveness(fn)
    for i in range(len(fn.instructions)):  # and agrees with the warp-wide liveness views
        warp_dead = lv.warp_last_use_flags(i)
        for f, w, r in zip(rp.flags[i], warp_dead, rp.reads[i]):
            assert not f or w, (i, r)


def test_release_safety_on_golden_kernels():
    for body in (IF_ELSE, DO_WHILE, IF_THEN):
        assert check_release_safety(kernel(body)) > 0
