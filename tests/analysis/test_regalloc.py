"""Golden, property and corpus tests for tlpsim.analysis.regalloc."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlpsim.analysis.liveness import liveness
from tlpsim.analysis.regalloc import (
    BANK_FUNCTIONS,
    Allocation,
    allocate,
    bank_of,
    check_allocation,
    compare_with_ptxas,
    interference_graph,
)
from tlpsim.analysis.weights import register_weights
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


def overlaps(fn, alloc: Allocation, live) -> list[str]:
    """Independent validity check: at every program point, the live values (and
    the values an instruction writes, with those live after it) use disjoint
    physical registers; predicates likewise among themselves."""
    bad = []
    for i in range(len(fn.instructions)):
        for regs in (live.live_in(i), live.live_out(i) | live.defs(i)):
            seen: dict[tuple[str, int], str] = {}
            for v in regs:
                if v in alloc.pred_phys:
                    slots = [("p", alloc.pred_phys[v])]
                else:
                    base, w = alloc.phys[v], alloc.width[v]
                    assert base % w == 0, f"{v} misaligned"
                    slots = [("r", base + k) for k in range(w)]
                for s in slots:
                    if s in seen:
                        bad.append(f"{i}: {v} and {seen[s]} share {s}")
                    seen[s] = v
    return bad


# ------------------------------------------------------------------ golden

STRAIGHT = """
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.v2.u32 {%r2, %r3}, [%rd3];
  setp.lt.u32 %p1, %r2, %r3;
  setp.gt.u32 %p2, %r2, %r3;
  selp.u32 %r4, %r2, %r3, %p1;
  @%p2 add.u32 %r4, %r4, %r1;
  st.global.u32 [%rd3+8], %r4;
  ret;
"""


def test_straight_line_is_optimal_and_aligned():
    fn = kernel(STRAIGHT)
    a = allocate(fn)
    live = liveness(fn)
    assert a.max_live == live.max_pressure == 5
    assert a.n_regs == 5
    assert a.pred_regs == 2  # %p1 and %p2 are live together; not counted in n_regs
    assert set(a.pred_phys) == {"%p1", "%p2"} and "%p1" not in a.phys
    for v in ("%rd1", "%rd2", "%rd3"):
        assert a.width[v] == 2 and a.phys[v] % 2 == 0 and a.regs_of(v) == (a.phys[v], a.phys[v] + 1)
    assert a.phys["%rd1"] != a.phys["%rd2"]  # both live at 3
    assert overlaps(fn, a, live) == [] and check_allocation(fn, a) == []
    assert allocate(fn) is a  # cached


def test_wide_values_need_aligned_pairs():
    # three 32-bit values and one 64-bit value live together: 5 units, but the
    # pair cannot straddle an odd boundary
    fn = kernel("""
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  ld.param.u64 %rd1, [k_p0];
  add.u32 %r4, %r1, %r2;
  add.u32 %r4, %r4, %r3;
  st.global.u32 [%rd1], %r4;
  ret;""")
    a = allocate(fn)
    assert a.max_live == 5 and a.n_regs in (5, 6)
    assert a.phys["%rd1"] % 2 == 0
    assert overlaps(fn, a, liveness(fn)) == []


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


def test_gpu_aware_interference_is_stricter():
    """Per thread %r2 may reuse %r1's register (it is written where %r1 dies);
    with the other arm's lanes holding %r2 at the join, the GPU-aware graph
    makes them interfere."""
    fn = kernel(IF_ELSE)
    std = interference_graph(fn, liveness(fn, gpu_aware=False))
    gpu = interference_graph(fn, liveness(fn))
    assert not std.interferes("%r2", "%r1") and gpu.interferes("%r2", "%r1")
    assert gpu.interferes("%rd1", "%r2") and not gpu.interferes("%p1", "%r1")  # predicates apart
    for g in (std, gpu):
        assert all(b in g.adj[a] for a in g.adj for b in g.adj[a])  # symmetric
    a = allocate(fn)
    assert a.phys["%r1"] != a.phys["%r2"]
    assert overlaps(fn, a, liveness(fn)) == []


def test_banks():
    assert bank_of(3, 0, 4) == 3 and bank_of(3, 1, 4) == 0 and bank_of(7, 6, 16) == 13
    assert BANK_FUNCTIONS["gpgpusim"] is bank_of and BANK_FUNCTIONS["unshifted"](5, 3, 4) == 1
    a = Allocation({"%rd1": 2, "%r1": 1}, 4, 0, width={"%rd1": 2, "%r1": 1})
    assert a.banks("%rd1", warp_id=1, n_banks=4) == (3, 0)
    assert a.banks("%rd1", 1, 4, bank_fn=lambda r, w, n: r // 2) == (1, 1)
    assert a.banks("%p1", 0, 4) == ()


# ------------------------------------------------------------------ properties

N_LABELS = 4


@st.composite
def random_kernels(draw):
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
        lambda: f"@{p()} mov.u32 {r()}, 7;",
        lambda: f"ld.global.u32 {r()}, [{rd()}];",
        lambda: f"st.global.u32 [{rd()}+4], {r()};",
        lambda: f"@{p()} bra L{draw(st.integers(0, N_LABELS - 1))};",
        lambda: f"bra.uni L{draw(st.integers(0, N_LABELS - 1))};",
    ]
    lines = [draw(st.sampled_from(forms))() for _ in range(draw(st.integers(1, 30)))]
    for k in range(N_LABELS):
        lines.insert(draw(st.integers(0, len(lines))), f"L{k}:")
    lines.append("ret;")
    return kernel("\n".join("  " + x for x in lines))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_kernels())
def test_allocation_never_shares_a_live_register(fn):
    for gpu, rule in ((True, "ipdom"), (True, "regless"), (True, "mask"), (False, "ipdom")):
        live = liveness(fn, gpu_aware=gpu, soft_rule=rule)
        a = allocate(fn, live)
        assert overlaps(fn, a, live) == []
        assert check_allocation(fn, a, live) == []
        assert a.n_regs >= live.max_pressure == a.max_live
        assert all(p + a.width[v] <= a.n_regs for v, p in a.phys.items())
    # the EXPARS renumbering keeps it valid and no larger
    a = allocate(fn)
    w = register_weights(fn, a)
    assert w.allocation.n_regs == a.n_regs
    assert sorted(w.mapping.values()) == sorted(w.mapping) == list(range(a.n_regs))
    assert overlaps(fn, w.allocation, liveness(fn)) == []


# ------------------------------------------------------------------ corpus


@pytest.fixture(scope="module")
def programs():
    return [load_program(p, arch="sm_80") for p in CORPUS]


def test_corpus_allocations(programs, record_property):
    """Every flattenable kernel of the corpus gets a valid allocation; our count is
    reported next to ptxas's (the test asserts validity, not a ratio)."""
    rows = []
    for prog in programs:
        flattenable = []
        for name, k in prog.kernels.items():
            try:
                fn = flatten_kernel(prog.module, k)
            except UnsupportedPTX:
                continue
            flattenable.append(name)
            a = allocate(fn)
            live = liveness(fn)
            assert overlaps(fn, a, live) == [], name
            assert a.n_regs >= a.max_live
        got = compare_with_ptxas(prog)
        assert [r[0] for r in got] == flattenable
        rows.extend(got)
    assert len(rows) >= 60
    ratios = [ours / ptxas for _, ours, ptxas in rows if ptxas]
    worst = max(rows, key=lambda r: r[1] / r[2])
    lines = [f"{name[:40]:40s} ours={ours:3d} ptxas={ptxas:3d}" for name, ours, ptxas in rows]
    summary = (f"{len(rows)} kernels: ours/ptxas mean {statistics.mean(ratios):.2f}, "
               f"worst {worst[1] / worst[2]:.2f} ({worst[0]})")
    print("\n" + "\n".join(lines) + "\n" + summary)
    record_property("regalloc_vs_ptxas", summary)
