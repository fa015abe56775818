"""Golden and property tests for tlpsim.analysis.regions (RegLess Algorithm 1),
plus the corpus test that runs regions, bundles and release points on every
kernel of tests/corpus that can be flattened."""

from __future__ import annotations

import sys
from pathlib import Path
from statistics import mean

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlpsim.analysis.analyzed import analyze
from tlpsim.analysis.liveness import liveness
from tlpsim.analysis.regalloc import allocate
from tlpsim.analysis.regions import Region, RegionParams, Regions, regions, warp_live_out
from tlpsim.analysis.switch_points import is_global_load
from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.loader import load_program

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_release import DO_WHILE, IF_ELSE, IF_THEN, S, kernel, structured_kernels

CORPUS = sorted((Path(__file__).resolve().parent.parent / "corpus").glob("*.cu"))


def shape(rg: Regions):
    return [(r.start, r.end) for r in rg]


# ------------------------------------------------------------------ golden


def test_divergent_if_else_regions():
    fn = kernel(IF_ELSE)
    rg = regions(fn)
    assert shape(rg) == [(0, 5), (5, 7), (7, 8), (8, 10)]  # one region per block
    assert [r.ends for r in rg] == ["block"] * 4 and rg.region_of[6] == 1 and rg.at(7).index == 2
    then, other, join = rg[1], rg[2], rg[3]
    # both arms write %r2: the writes are soft, so %r2 is preloaded to keep the other lanes' values
    assert then.inputs == S("r1", "r2") and then.preload == ("%r1", "%r2") and then.outputs == S("r2")
    # in the then arm %r1 is only evictable: the else lanes still need it
    assert then.evict == ((5, "%r1"), (5, "%r2")) and then.erase == ()
    assert other.inputs == S("r1", "r2", "r9") and other.erase == ((7, "%r9"),)
    assert other.invalidating_reads == S("r9")  # the preload of %r9 is its last read
    assert join.invalidate == S("r1", "r9")  # dead once the paths reconverge
    assert join.erase == ((8, "%r2"), (8, "%rd1")) and join.outputs == S()
    assert rg[0].outputs == S("r1", "r9", "rd1") and rg[0].inputs == S()
    assert rg[0].input_regs == 0 and rg[0].output_regs == 4  # %rd1 is two registers


def test_soft_definition_is_preloaded():
    fn = kernel(IF_THEN)
    then = regions(fn)[1]
    assert (then.start, then.end) == (5, 6)
    assert then.inputs == S("r1", "r2")  # %r2 merged by a soft write: preloaded
    assert then.erase == ((5, "%r1"),) and then.invalidating_reads == S("r1")
    textbook = regions(fn, live=liveness(fn, gpu_aware=False))[1]
    assert textbook.inputs == S("r1")  # standard liveness would lose the skipping lanes' %r2
    assert regions(fn)[2].invalidate == S("r1")


def test_loop_regions():
    fn = kernel(DO_WHILE)
    rg = regions(fn)
    assert shape(rg) == [(0, 4), (4, 9), (9, 11)]
    body = rg[1]
    assert body.inputs == S("r1", "r2", "r3") and body.outputs == S("r2", "r3") and body.interior == S("r4")
    assert body.preload == ("%r2", "%r3", "%r1")  # in order of first reference
    assert body.erase == ((4, "%r3"), (5, "%r4")) and body.invalidating_reads == S("r3")
    assert body.evict == ((5, "%r3"), (7, "%r1"), (7, "%r2"))
    assert rg[2].invalidate == S("r1", "r3")  # carried around the loop, dead after it
    assert body.interior_regs == 1 and body.input_regs == 3


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


def test_global_load_and_first_use_are_split():
    """The load at 4 and its use at 7 may not share a region: the split window is
    [max(start + 6, 5), 7] and both points cost 8 registers of input + output, so
    the larger first region wins."""
    fn = kernel(LOAD)
    rg = regions(fn)
    assert shape(rg) == [(0, 7), (7, 10)]
    assert rg[0].ends == "load_use" and rg[1].ends == "block"
    assert rg[1].inputs == S("r2", "r4", "rd3") and rg[1].input_regs == 4
    assert rg[0].outputs == S("r2", "r4", "rd3") and rg[0].interior == S("r1", "r3", "rd1", "rd2")
    generic = kernel(LOAD.replace("ld.global.u32", "ld.u32"))
    assert shape(regions(generic)) == [(0, 7), (7, 10)]
    assert shape(regions(generic, params=RegionParams(include_generic_loads=False))) == [(0, 10)]


CHAIN = ("  ld.param.u64 %rd1, [k_p0];\n" + "".join(f"  mov.u32 %r{k}, {k};\n" for k in range(1, 9))
         + "  add.u32 %r9, %r1, %r2;\n" + "".join(f"  add.u32 %r9, %r9, %r{k};\n" for k in range(3, 9))
         + "  st.global.u32 [%rd1], %r9;\n  ret;")


def test_max_live_and_min_length():
    """Eight values summed one by one: holding them and the 64-bit address in one
    region takes 10 registers."""
    fn = kernel(CHAIN)
    assert regions(fn).regions[0].max_live == 10 and len(regions(fn)) == 1
    rg = regions(fn, params=RegionParams(max_live=4))
    assert shape(rg) == [(0, 6), (6, 11), (11, 14), (14, 16), (16, 18)]
    assert [r.ends for r in rg] == ["max_live"] * 4 + ["block"]
    assert all(r.max_live <= 4 for r in rg) and [r.max_live for r in rg] == [2, 4, 4, 3, 3]
    assert rg[1].inputs == S("r1", "r2", "r3") and rg[2].inputs == S("r4", "r5", "r6", "r9")
    # without the minimum length the cheapest cut is after every single definition
    tiny = regions(fn, params=RegionParams(max_live=4, min_length=1))
    assert [len(r) for r in tiny][:9] == [1] * 9 and all(r.max_live <= 4 for r in tiny)
    for prm in (RegionParams(max_live=4), RegionParams(max_live=4, min_length=1)):
        check_regions(fn, regions(fn, params=prm))


def test_bank_capacity_and_over_limit():
    fn = kernel(CHAIN)
    rg = regions(fn, params=RegionParams(n_banks=2, bank_capacity=2))
    assert all(max(r.bank_usage) <= 2 and len(r.bank_usage) == 2 for r in rg)
    assert "bank" in {r.ends for r in rg}
    check_regions(fn, rg)
    wide = kernel("""
  ld.param.u64 %rd1, [k_p0];
  mov.u32 %r1, 1;
  mov.u32 %r2, 2;
  mov.u32 %r3, 3;
  mov.u32 %r4, 4;
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  ret;""")
    rg = regions(wide, params=RegionParams(max_live=3, min_length=1))
    (big,) = [r for r in rg if r.over_limit]
    assert (big.start, big.end, big.max_live) == (5, 6, 6) and big.ends == "max_live"
    check_regions(wide, rg)


def test_summary_and_registration():
    fn = kernel(IF_ELSE)
    s = regions(fn).summary()
    assert s["regions"] == 4 and s["instructions"] == 10 and s["avg_instructions"] == 2.5
    assert s["ends_block"] == 4 and s["over_limit"] == 0 and s["max_live"] == 3
    assert s["avg_inputs"] == pytest.approx((0 + 2 + 3 + 3) / 4)
    assert s["metadata_instructions"] == sum(r.metadata_instructions for r in regions(fn))
    assert regions(fn).boundaries == (0, 5, 7, 8)
    r = regions(kernel(CHAIN))[0]  # 18 instructions, 0 preloads: header + 2 flag instructions
    assert r.metadata_instructions == 3
    ak = analyze(_module(IF_ELSE), "k")
    assert isinstance(ak.regions, Regions) and ak.regions.boundaries == (0, 5, 7, 8)
    with pytest.raises(ValueError):
        RegionParams(max_live=0)


def _module(body: str):
    from tlpsim.frontend.ptx_parser import parse_ptx

    return parse_ptx(".version 8.0\n.target sm_80\n.address_size 64\n"
                     ".visible .entry k(.param .u64 k_p0)\n{\n .reg .pred %p<4>;\n .reg .b32 %r<12>;\n"
                     f" .reg .b64 %rd<5>;\n{body}\n}}\n")


# ------------------------------------------------------------------ invariants


def brute_occupancy(fn, lv, alloc, r: Region, n_banks: int) -> tuple[int, tuple[int, ...]]:
    """Registers the OSU holds at each instruction of ``r``: its operands, and every
    live value whose next reference in the region reads (or soft-writes) it."""
    rf = set(alloc.phys)
    du = lv.def_use
    refs = [(du[j].uses | du[j].defs) & rf for j in range(len(du))]
    reads = [(du[j].uses | lv.soft[j]) & rf for j in range(len(du))]
    peak, banks = 0, [0] * n_banks
    for j in range(r.start, r.end):
        held = set(refs[j])
        for v in lv.live_in(j) & rf:
            nxt = next((k for k in range(j, r.end) if v in refs[k]), None)
            if nxt is not None and v in reads[nxt]:
                held.add(v)
        phys = {p for v in held for p in alloc.regs_of(v)}
        peak = max(peak, len(phys))
        for b in range(n_banks):
            banks[b] = max(banks[b], sum(1 for p in phys if p % n_banks == b))
    return peak, tuple(banks)


def check_regions(fn, rg: Regions, lv=None, alloc=None) -> None:
    lv = lv if lv is not None else liveness(fn)
    alloc = alloc if alloc is not None else allocate(fn)
    prm = rg.params
    covered = [r.index for r in rg for _ in range(len(r))]
    assert covered == list(rg.region_of) and len(covered) == len(fn.instructions)  # each instruction once
    assert [r.index for r in rg] == list(range(len(rg)))
    for r in rg:
        blk = fn.blocks[r.block]
        assert blk.start <= r.start < r.end <= blk.end  # never spans a block
        assert r.ends in ("block", "max_live", "bank", "load_use") and (r.ends == "block") == (r.end == blk.end
                                                                                          and not r.over_limit)
        if r.over_limit:
            assert len(r) == 1
        else:
            assert r.max_live <= prm.max_live and max(r.bank_usage) <= prm.bank_capacity
        assert (r.max_live, r.bank_usage) == brute_occupancy(fn, lv, alloc, r, prm.n_banks)
        for i in range(r.start, r.end):  # no global load together with its first use
            if is_global_load(fn.instructions[i], prm.include_generic_loads) and lv.def_use[i].defs:
                dst = lv.def_use[i].defs
                j = next((j for j in range(i + 1, blk.end) if dst & (lv.def_use[j].uses | lv.def_use[j].defs)), None)
                assert j is None or j >= r.end, (r, i, j)
        refs = frozenset().union(*((lv.def_use[j].uses | lv.def_use[j].defs) for j in range(r.start, r.end)))
        defs = frozenset().union(*(lv.def_use[j].defs for j in range(r.start, r.end)))
        assert r.inputs <= refs & (lv.live_in(r.start) | frozenset().union(*lv.soft[r.start:r.end]))
        assert r.outputs <= defs & warp_live_out(lv, r.end - 1)
        assert not (r.interior & (r.inputs | r.outputs)) and r.interior | r.inputs | r.outputs <= refs
        assert set(r.preload) == r.inputs
        for i, v in r.erase:  # erased values are dead for the whole warp
            assert r.start <= i < r.end and v not in warp_live_out(lv, i)
        for i, v in r.evict:
            assert v in warp_live_out(lv, i)
        assert not (r.invalidate & lv.warp_live_in(r.start))
        if r.start != blk.start:
            assert r.invalidate == frozenset()


@st.composite
def region_params(draw):
    return RegionParams(max_live=draw(st.integers(2, 8)), bank_capacity=draw(st.integers(1, 4)),
                        n_banks=draw(st.sampled_from([1, 2, 4, 8])), min_length=draw(st.integers(1, 6)),
                        include_generic_loads=draw(st.booleans()))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(structured_kernels(), region_params())
def test_regions_cover_and_respect_limits(fn, prm):
    check_regions(fn, regions(fn))
    check_regions(fn, regions(fn, params=prm))


# ------------------------------------------------------------------ corpus


@pytest.fixture(scope="module")
def corpus_kernels():
    out = []
    for path in CORPUS:
        prog = load_program(path, arch="sm_80")
        for k in prog.kernels.values():
            try:
                out.append(analyze(prog.module, k))
            except UnsupportedPTX:
                continue
    return out


def test_corpus_all_three_analyses(corpus_kernels, record_property):
    from test_bundles import check_bundles

    stats = []
    for ak in corpus_kernels:
        fn, lv = ak.fn, ak.liveness
        rg, bd, rp = ak.regions, ak.bundles, ak.release_points
        check_regions(fn, rg, lv, ak.allocation)
        check_bundles(fn, bd, ak.weights, lv)
        for i in range(len(fn.instructions)):  # release only what no lane needs after i
            after = warp_live_out(lv, i)
            assert not (rp.released[i] & after)
            assert not {p for v in after for p in ak.allocation.regs_of(v)} & set(rp.released_phys[i])
        for br in rp.branch_releases:
            assert not (br.registers & lv.warp_live_in(br.index))
        assert rp.flag_instructions == -(-len(fn.instructions) // 18) + len(rp.reconvergence_points)
        stats.append(rg.summary())
    assert len(stats) >= 60
    avg = {k: mean(s[k] for s in stats) for k in ("avg_instructions", "avg_live", "avg_inputs")}
    record_property("corpus_region_stats", avg)
    # RegLess Table 2: 3.3-16.0 static instructions per region over Rodinia (SASS, not PTX)
    assert 3.0 <= avg["avg_instructions"] <= 20.0


# ------------------------------------------------------------------ command line


def test_analyze_command(tmp_path):
    import json

    from click.testing import CliRunner

    from tlpsim.cli_analyze import analyze_cmd

    src = tmp_path / "k.ptx"
    src.write_text(".version 8.0\n.target sm_80\n.address_size 64\n"
                   ".visible .entry k(.param .u64 k_p0)\n{\n .reg .pred %p<4>;\n .reg .b32 %r<12>;\n"
                   f" .reg .b64 %rd<5>;\n{IF_ELSE}\n}}\n")
    runner = CliRunner()
    res = runner.invoke(analyze_cmd, [str(src), "--json"])
    assert res.exit_code == 0, res.output
    (rep,) = json.loads(res.output)["kernels"]
    assert rep["kernel"] == "k" and rep["regions"]["summary"]["regions"] == 4
    assert [r["start"] for r in rep["regions"]["table"]] == [0, 5, 7, 8]
    assert len(rep["live_curve"]) == 10 and rep["release"]["summary"]["flag_instructions"] == 2
    dot = tmp_path / "c.dot"
    args = [str(src), "--kernel", "k", "--dot", str(dot)]
    try:
        import matplotlib  # noqa: F401

        args += ["--plot", str(tmp_path / "p.png")]
    except ImportError:
        pass
    res = runner.invoke(analyze_cmd, args)
    assert res.exit_code == 0, res.output
    assert "RegLess regions: 4" in res.output and "RFV release" in res.output and "switch points" in res.output
    assert dot.read_text().startswith("// block 0: regions 0") and "fillcolor" in dot.read_text()
    if "--plot" in args:
        assert (tmp_path / "p.png").stat().st_size > 0
    for bad in ([str(tmp_path / "missing.cu")], [str(src), "--kernel", "nope"], ["no_such_workload"]):
        res = runner.invoke(analyze_cmd, bad)
        assert res.exit_code == 2 and "error:" in res.output, res.output
