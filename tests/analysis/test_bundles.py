"""Golden and property tests for tlpsim.analysis.bundles (EXPARS bundles)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlpsim.analysis.analyzed import analyze
from tlpsim.analysis.bundles import BundleParams, Bundles, bundles, default_start_reg, is_long_latency
from tlpsim.analysis.liveness import liveness
from tlpsim.analysis.weights import register_weights
from tlpsim.frontend.ptx_parser import parse_ptx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_release import DECLS, IF_ELSE, kernel, structured_kernels

LOAD = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  add.u32 %r3, %r1, 1;
  add.u32 %r4, %r3, 2;
  add.u32 %r5, %r2, %r4;
  st.global.u32 [%rd3], %r5;
  ret;
"""


def shape(bd: Bundles):
    return [(b.start, b.end, b.ends) for b in bd]


def phys(w, *regs):
    return tuple(sorted({p for r in regs for p in w.allocation.regs_of("%" + r)}))


def test_long_latency_ends_bundle():
    fn = kernel(LOAD)
    w = register_weights(fn)
    rf_only = bundles(fn, w, start_reg=w.allocation.n_regs)  # nothing in the scratchpad
    assert shape(rf_only) == [(0, 5, "long_latency"), (5, 10, "block")]
    assert all(b.spm_registers == b.prefetch == () for b in rf_only)
    spm = bundles(fn, w, start_reg=0)  # everything in the scratchpad, 8 registers fit
    assert shape(spm) == [(0, 5, "long_latency"), (5, 10, "block")]
    first, second = spm
    assert first.prefetch == ()  # nothing is live at the kernel start
    # the second bundle needs %r1, %r2 and %rd3 on entry; %r3..%r5 are written first
    assert second.prefetch == phys(w, "r1", "r2", "rd3")
    assert second.spm_registers == second.registers == phys(w, "r1", "r2", "r3", "r4", "r5", "rd3")
    assert is_long_latency(fn.instructions[4]) and not is_long_latency(fn.instructions[8])  # st


def test_divergent_blocks_and_default_split():
    fn = kernel(IF_ELSE)
    w = register_weights(fn)
    bd = bundles(fn, w)
    assert bd.start_reg == default_start_reg(5) == 1  # at most 80% of 5 registers in the SPM
    assert shape(bd) == [(0, 5, "block"), (5, 7, "block"), (7, 8, "block"), (8, 10, "block")]
    then, other, join = bd[1], bd[2], bd[3]
    assert set(then.prefetch) == {p for p in phys(w, "r1", "r2") if p >= 1}  # %r2: soft write, merged
    assert set(other.prefetch) == {p for p in phys(w, "r1", "r2", "r9") if p >= 1}
    assert join.prefetch == tuple(p for p in phys(w, "r2", "rd1") if p >= 1)
    assert bd.at(6) is then and bd.bundle_of[7] == 2
    assert default_start_reg(81) == 17 and default_start_reg(0) == 0


CHAIN = ("  ld.param.u64 %rd1, [k_p0];\n" + "".join(f"  mov.u32 %r{k}, {k};\n" for k in range(1, 9))
         + "  add.u32 %r9, %r1, %r2;\n" + "".join(f"  add.u32 %r9, %r9, %r{k};\n" for k in range(3, 9))
         + "  st.global.u32 [%rd1], %r9;\n  ret;")


def test_budget_conflict_and_length():
    fn = kernel(CHAIN)
    w = register_weights(fn)
    assert w.allocation.n_regs == 10
    assert BundleParams().lines == 16 and BundleParams().budget == 8
    eight = bundles(fn, w, start_reg=0)
    assert [len(b.spm_registers) for b in eight] == [8, 8, 3] and {b.ends for b in eight} == {"budget", "block"}
    four = bundles(fn, w, start_reg=0, params=BundleParams(concurrent_bundles=4))
    assert max(len(b.spm_registers) for b in four) == 4 and len(four) == 6
    # 4 lines, one bundle: register r may only use line r % 4
    direct = BundleParams(oc_bytes=512, concurrent_bundles=1)
    bd = bundles(fn, w, start_reg=0, params=direct)
    assert "conflict" in {b.ends for b in bd}
    for b in bd:
        if not b.over_budget:
            assert len({p % 4 for p in b.spm_registers}) == len(b.spm_registers)
        else:
            assert len(b) == 1
    capped = bundles(fn, w, params=BundleParams(max_length=3))
    assert [len(b) for b in capped] == [3] * 6 and capped[-1].ends == "block"
    s = capped.summary()
    assert s["bundles"] == 6 and s["ends_length"] == 5 and s["pref_instructions"] == 6
    assert s["code_size_increase"] == pytest.approx(6 / 18)
    with pytest.raises(ValueError):
        BundleParams(tau=1.0)
    with pytest.raises(ValueError):
        bundles(fn, w, start_reg=-1)


def test_barrier_and_registration():
    text = (".version 8.0\n.target sm_80\n.address_size 64\n"
            f".visible .entry k(.param .u64 k_p0)\n{{\n{DECLS}\n"
            "  mov.u32 %r1, %tid.x;\n  bar.sync 0;\n  add.u32 %r2, %r1, 1;\n  bar.warp.sync -1;\n"
            "  mov.u32 %r3, %r2;\n  ret;\n}\n")
    ak = analyze(parse_ptx(text), "k")
    assert isinstance(ak.bundles, Bundles)
    assert shape(ak.bundles) == [(0, 2, "long_latency"), (2, 6, "block")]  # bar.warp.sync does not wait long


# ------------------------------------------------------------------ invariants


def check_bundles(fn, bd: Bundles, weights=None, lv=None) -> None:
    weights = weights if weights is not None else register_weights(fn)
    lv = lv if lv is not None else liveness(fn)
    alloc, prm = weights.allocation, bd.params
    assert [b.index for b in bd for _ in range(len(b))] == list(bd.bundle_of)
    assert len(bd.bundle_of) == len(fn.instructions)  # every instruction in exactly one bundle
    for b in bd:
        blk = fn.blocks[b.block]
        assert blk.start <= b.start < b.end <= blk.end  # never spans a block
        assert len(b) <= prm.max_length
        for i in range(b.start, b.end - 1):
            assert not is_long_latency(fn.instructions[i])  # long latency ends a bundle
        regs = {p for i in range(b.start, b.end) for v in lv.def_use[i].uses | lv.def_use[i].defs
                for p in alloc.regs_of(v)}
        assert b.registers == tuple(sorted(regs))
        assert b.spm_registers == tuple(p for p in b.registers if p >= bd.start_reg)
        if b.over_budget:
            assert len(b) == 1
        else:
            assert len(b.spm_registers) <= prm.budget
            if prm.direct_mapped:
                assert len({p % prm.lines for p in b.spm_registers}) == len(b.spm_registers)
        assert set(b.prefetch) <= set(b.spm_registers)
        # prefetched: a value read (or merged by a soft write) before the bundle writes it
        need, written = set(), set()
        for i in range(b.start, b.end):
            need |= {v for v in lv.def_use[i].uses | lv.soft[i] if v not in written}
            written |= lv.def_use[i].defs - lv.soft[i]
        assert b.prefetch == tuple(sorted({p for v in need for p in alloc.regs_of(v) if p >= bd.start_reg}))


@st.composite
def bundle_params(draw):
    return BundleParams(oc_bytes=128 * draw(st.sampled_from([2, 4, 8, 16])),
                        concurrent_bundles=draw(st.integers(1, 4)), direct_mapped=draw(st.booleans()),
                        max_length=draw(st.integers(1, 12)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(structured_kernels(), bundle_params(), st.integers(0, 12))
def test_bundles_never_span_blocks(fn, prm, start_reg):
    w = register_weights(fn)
    check_bundles(fn, bundles(fn, w), w)
    bd = bundles(fn, w, start_reg=start_reg, params=prm)
    check_bundles(fn, bd, w)
    # bundles formed for one split stay valid for every larger split
    for b in bd:
        if not b.over_budget:
            spm = [p for p in b.registers if p >= start_reg + 1]
            assert len(spm) <= prm.budget
