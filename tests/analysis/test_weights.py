"""Tests for tlpsim.analysis.weights: reference weights and the EXPARS register order."""

from __future__ import annotations

from pathlib import Path

import pytest

from tlpsim.analysis.liveness import liveness
from tlpsim.analysis.regalloc import Allocation, allocate, check_allocation
from tlpsim.analysis.weights import _expars_mapping, _feasible, reference_weights, register_weights
from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.inline import flatten_kernel
from tlpsim.frontend.loader import load_program
from tlpsim.frontend.ptx_parser import parse_ptx

CORPUS = sorted((Path(__file__).resolve().parent.parent / "corpus").glob("*.cu"))
DECLS = """
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<5>;
"""


def kernel(body: str):
    text = (".version 8.0\n.target sm_80\n.address_size 64\n"
            f".visible .entry k(.param .u64 k_p0)\n{{\n{DECLS}\n{body}\n}}\n")
    return parse_ptx(text).kernels["k"]


STRAIGHT = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 add.u32 %r2, %r2, %r2;
  st.global.u32 [%rd3+8], %r2;
  ret;
"""

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

NESTED = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, 0;
$L_outer:
  mov.u32 %r2, 0;
$L_inner:
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 8;
  @%p1 bra $L_inner;
  add.u32 %r1, %r1, %r2;
  setp.lt.u32 %p2, %r1, 100;
  @%p2 bra $L_outer;
  st.global.u32 [%rd1], %r1;
  ret;
"""


def test_straight_line_counts_reads_and_writes():
    w = reference_weights(kernel(STRAIGHT))
    # %r2: write 4, read 5, read+read+write 6 (a repeated operand counts twice), read 7
    assert dict(w) == {"%rd1": 2, "%r1": 3, "%rd2": 2, "%rd3": 3, "%r2": 6}  # no predicates


def test_loop_weights():
    fn = kernel(DO_WHILE)
    w = reference_weights(fn)
    assert w["%r2"] == 1 + 10 + 20 + 10  # def before the loop; 3 reads and a write inside
    assert w["%r4"] == 10 + 10 + 1 and w["%r3"] == 1 + 20 + 1 and w["%r1"] == 1 + 10
    loop_header = fn.instructions[4].block
    assert reference_weights(fn, trip_counts={loop_header: 100})["%r4"] == 201
    assert reference_weights(fn, loop_weight=2)["%r4"] == 5
    n = reference_weights(kernel(NESTED))
    assert n["%r2"] == 10 + 3 * 100 + 10  # write in the outer loop, 3 refs in the inner, read in outer
    assert n["%r1"] == 1 + 20 + 10 + 1


def test_expars_order_hot_registers_low():
    fn = kernel(DO_WHILE)
    rw = register_weights(fn)
    a = rw.allocation
    assert a.n_regs == allocate(fn).n_regs
    assert a.phys["%r2"] == 0  # the hottest value
    assert list(rw.ordered) == sorted(rw.ordered, reverse=True)
    assert rw.coverage[0] == 0.0 and rw.coverage[-1] == pytest.approx(1.0)
    assert all(x <= y for x, y in zip(rw.coverage, rw.coverage[1:]))
    assert rw.total == pytest.approx(sum(rw.phys))
    assert rw.rf_fraction(1) == pytest.approx(rw.ordered[0] / rw.total)
    assert rw.rf_fraction(99) == pytest.approx(1.0)
    assert check_allocation(fn, a) == []
    assert a.ordering.endswith("+expars")


def test_expars_keeps_pairs_aligned():
    fn = kernel(STRAIGHT)
    rw = register_weights(fn)
    a = rw.allocation
    for v in ("%rd1", "%rd2", "%rd3"):
        assert a.phys[v] % 2 == 0
    assert check_allocation(fn, a, liveness(fn)) == []


def test_placement_never_grows_the_allocation():
    # a hot single, a warm pair, a cold single: the pair cannot take register 1
    a = Allocation({"a": 0, "b": 1, "c": 2}, 4, 0, width={"a": 1, "b": 1, "c": 2})
    assert _expars_mapping(a, [1.0, 5.0, 3.0, 3.0]) == {1: 0, 0: 1, 2: 2, 3: 3}
    # two quads and a hot single in 9 registers: the single must not go first
    a = Allocation({"q1": 0, "q2": 4, "s": 8}, 9, 0, width={"q1": 4, "q2": 4, "s": 1})
    assert not _feasible({4: 2, 1: 0}, 1, 9) and _feasible({4: 2, 1: 1}, 0, 9)
    m = _expars_mapping(a, [5.0] * 4 + [4.0] * 4 + [9.0])
    assert m[8] == 8 and sorted(m.values()) == list(range(9))
    assert _feasible({2: 1, 1: 1}, 1, 4) and not _feasible({2: 2, 1: 0}, 1, 5)


@pytest.fixture(scope="module")
def programs():
    return [load_program(p, arch="sm_80") for p in CORPUS]


def test_corpus_weights(programs):
    n = 0
    for prog in programs:
        for k in prog.kernels.values():
            try:
                fn = flatten_kernel(prog.module, k)
            except UnsupportedPTX:
                continue
            a = allocate(fn)
            rw = register_weights(fn, a)
            assert rw.allocation.n_regs == a.n_regs
            assert sorted(rw.mapping.values()) == list(range(a.n_regs))
            assert check_allocation(fn, rw.allocation) == [], k.name
            assert rw.coverage[-1] == pytest.approx(1.0) or rw.total == 0
            # hot registers low: the first half holds at least as many weighted
            # references as under the allocator's own numbering
            half = a.n_regs // 2
            assert sum(rw.ordered[:half]) >= sum(rw.phys[:half]) - 1e-9
            n += 1
    assert n >= 60
