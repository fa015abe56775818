"""Tests for tlpsim.analysis.switch_points (GPUDuet live registers at switch points)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tlpsim.analysis.analyzed import AnalyzedKernel, analyze, register_analysis, registered_analyses
from tlpsim.analysis.liveness import liveness
from tlpsim.analysis.regalloc import allocate
from tlpsim.analysis.switch_points import first_uses, is_barrier, switch_points
from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.loader import load_program
from tlpsim.frontend.ptx_parser import parse_ptx

CORPUS = sorted((Path(__file__).resolve().parent.parent / "corpus").glob("*.cu"))
DECLS = """
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<5>;
  .shared .align 4 .b8 smem[64];
"""


def module(body: str):
    text = (".version 8.0\n.target sm_80\n.address_size 64\n"
            f".visible .entry k(.param .u64 k_p0)\n{{\n{DECLS}\n{body}\n}}\n")
    return parse_ptx(text)


def kernel(body: str):
    return module(body).kernels["k"]


LOAD_BARRIER = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  add.u32 %r3, %r1, 1;
  add.u32 %r4, %r2, %r3;
  bar.sync 0;
  ld.shared.u32 %r5, [smem];
  add.u32 %r4, %r4, %r5;
  bar.warp.sync -1;
  st.global.u32 [%rd3], %r4;
  ret;
"""


def test_load_use_and_barrier():
    fn = kernel(LOAD_BARRIER)
    sp = switch_points(fn)
    assert [(p.index, p.kinds, p.loads) for p in sp.points] == [(6, ("load-use",), (4,)), (7, ("barrier",), ())]
    at6, at7 = sp.points
    assert at6.live == frozenset({"%r2", "%r3", "%rd3"}) and at6.live_regs == 4 == at6.phys_regs
    assert at7.live == frozenset({"%r4", "%rd3"}) and at7.live_regs == 3
    assert sp.context_registers == 4
    assert sp.context_bytes_per_warp == 4 * 4 * 32 == 512
    assert sp.allocated_registers == allocate(fn).n_regs
    assert sp.reduction == pytest.approx(4 / sp.allocated_registers)
    assert sp.at(7) is at7 and sp.at(5) is None
    assert not is_barrier(fn.instructions[10])  # bar.warp.sync


def test_first_use_in_loop_and_divergence():
    fn = kernel("""
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, 0;
$L:
  ld.global.u32 %r2, [%rd1];
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, 10;
  @%p1 bra $L;
  st.global.u32 [%rd1], %r2;
  ret;""")
    # next iteration's load rewrites %r2 (the scoreboard stalls the write) or the store reads it
    assert first_uses(fn, 2) == (2, 6)
    fn = kernel("""
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  add.u32 %r9, %r1, 7;
  ld.global.u32 %r2, [%rd1];
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra $L_else;
  add.u32 %r3, %r2, 1;
  bra.uni $L_join;
$L_else:
  add.u32 %r3, %r9, %r2;
$L_join:
  st.global.u32 [%rd1], %r3;
  ret;""")
    assert first_uses(fn, 3) == (6, 8)
    sp = switch_points(fn)
    at6 = sp.at(6)
    # the then-arm's lanes do not need %r9, the waiting else-arm lanes do
    assert "%r9" not in liveness(fn).live_in(6) and "%r9" in at6.live
    assert at6.live == frozenset({"%r2", "%r3", "%r9", "%rd1"}) and at6.live_regs == 5
    assert at6.phys_regs <= sp.allocated_registers


def test_generic_loads_optional():
    fn = kernel("""
  ld.param.u64 %rd1, [k_p0];
  ld.u32 %r1, [%rd1];
  add.u32 %r2, %r1, 1;
  st.u32 [%rd1], %r2;
  ret;""")
    assert [p.index for p in switch_points(fn).points] == [2]
    assert switch_points(fn, include_generic=False).points == ()
    assert switch_points(fn, include_generic=False).context_registers == 0


def test_analyzed_kernel(monkeypatch):
    m = module(LOAD_BARRIER)
    ak = analyze(m, "k")
    assert isinstance(ak, AnalyzedKernel) and analyze(m, m.kernels["k"]) is ak
    assert ak.fn is ak.kernel  # nothing to inline
    assert ak.switch_points.context_registers == 4
    assert ak.allocation is allocate(ak.fn) and ak.liveness is liveness(ak.fn)
    assert ak.weights.allocation.n_regs == ak.allocation.n_regs
    assert ak.standard_liveness.gpu_aware is False and ak.has("liveness")
    assert {"liveness", "allocation", "weights", "switch_points"} <= set(registered_analyses())
    with pytest.raises(dataclasses.FrozenInstanceError):
        ak.fn = None  # frozen

    import tlpsim.analysis.analyzed as analyzed_mod

    monkeypatch.setattr(analyzed_mod, "_PROVIDERS", dict(analyzed_mod._PROVIDERS))  # keep the registry clean

    @register_analysis("test_only_instruction_count")
    def _count(a: AnalyzedKernel) -> int:
        return len(a.fn.instructions)

    assert ak.get("test_only_instruction_count") == 13
    with pytest.raises(NotImplementedError):
        ak.get("no_such_analysis")


@pytest.fixture(scope="module")
def programs():
    return [load_program(p, arch="sm_80") for p in CORPUS]


def test_corpus_switch_points(programs):
    n = with_points = 0
    for prog in programs:
        for k in prog.kernels.values():
            try:
                ak = analyze(prog.module, k)
            except UnsupportedPTX:
                continue
            sp = ak.switch_points
            n += 1
            with_points += bool(sp.points)
            assert 0 <= sp.context_registers <= ak.allocation.n_regs
            for p in sp.points:
                assert p.phys_regs <= p.live_regs
                assert p.live_regs >= ak.liveness.live_in_units(p.index)
                ins = ak.fn.instructions[p.index]
                assert ("barrier" in p.kinds) == is_barrier(ins)
    assert n >= 60 and with_points >= 50
