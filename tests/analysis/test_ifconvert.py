"""tlpsim.analysis.ifconvert: short forward branches become predication, exactly."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import tlpsim
from tlpsim.analysis.analyzed import analyze
from tlpsim.analysis.ifconvert import MAX_REGION, if_convert, regions
from tlpsim.config.loader import load_config
from tlpsim.frontend.ptx_parser import parse_ptx
from tlpsim.workloads.registry import get_workload

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_schedule import HEAD, kernel  # the hand-written kernels' header and parse

# bfs_expand's shape: each edge's stores skipped by a branch on the loaded flag
TWO_EDGES = """
  ld.global.nc.u32 %r1, [%rd1];
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra $L_a;
  st.global.u32 [%rd2], %r1;
  add.s32 %r2, %r1, 1;
$L_a:
  ld.global.nc.u32 %r3, [%rd1+4];
  setp.ne.s32 %p2, %r3, 0;
  @!%p2 bra $L_b;
  st.global.u32 [%rd2+4], %r3;
$L_b:
  ret;"""


def test_regions_become_predicated_and_blocks_merge():
    fn = kernel(TWO_EDGES)
    assert len(fn.blocks) == 5 and regions(fn) == [(2, 5), (7, 9)]
    new = if_convert(fn)
    assert [str(i) for i in new.instructions] == [
        "ld.global.nc.u32 %r1, [%rd1];",
        "setp.ne.s32 %p1, %r1, 0;",
        "@!%p1 st.global.u32 [%rd2], %r1;",
        "@!%p1 add.s32 %r2, %r1, 1;",
        "ld.global.nc.u32 %r3, [%rd1+4];",
        "setp.ne.s32 %p2, %r3, 0;",
        "@%p2 st.global.u32 [%rd2+4], %r3;",
        "ret;"]
    assert len(new.blocks) == 1 and new.labels == {}
    assert [i.index for i in new.instructions] == list(range(8))
    assert len(fn.instructions) == 10  # the parsed function is left as it was
    # the list schedule can now hoist the second load over the first edge's store
    listed = analyze(parse_ptx(HEAD + TWO_EDGES + "\n}\n"), "k", scheduled=True).fn
    assert [i.opcode for i in listed.instructions][:2] == ["ld.global.nc.u32", "ld.global.nc.u32"]


def test_what_keeps_its_branch():
    body = "\n".join(f"  add.s32 %r{k % 8 + 2}, %r1, {k};" for k in range(MAX_REGION + 1))
    too_long = kernel(f"""
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra $L;
{body}
$L:
  ret;""")
    assert regions(too_long) == []
    for inner in ("bar.sync 0;",                       # a fence keeps its control flow
                  "@%p2 add.s32 %r2, %r2, 1;",          # already guarded
                  "setp.eq.s32 %p1, %r2, 0;",           # rewrites the branch's predicate
                  "ld.volatile.global.u32 %r2, [%rd1];"):
        fn = kernel(f"""
  setp.ne.s32 %p1, %r1, 0;
  @%p1 bra $L;
  add.s32 %r3, %r3, 1;
  {inner}
$L:
  ret;""")
        assert regions(fn) == [], inner
    # a backward branch, an unconditional one, and a body another branch enters
    assert regions(kernel("""
$L:
  add.s32 %r3, %r3, 1;
  setp.ne.s32 %p1, %r3, 9;
  @%p1 bra $L;
  ret;""")) == []
    assert regions(kernel("""
  bra $L;
  add.s32 %r3, %r3, 1;
$L:
  ret;""")) == []
    fn = kernel("""
  setp.ne.s32 %p1, %r1, 0;
  @%p2 bra $M;
  @%p1 bra $L;
  add.s32 %r3, %r3, 1;
$M:
  add.s32 %r3, %r3, 2;
$L:
  ret;""")
    assert regions(fn) == []
    assert if_convert(fn) is fn


def test_only_the_list_order_converts():
    plain = analyze(parse_ptx(HEAD + TWO_EDGES + "\n}\n"), "k")
    assert [i.base for i in plain.fn.instructions].count("bra") == 2


def test_bfs_same_results_fewer_branches():
    runs = {}
    for schedule in ("ptx", "list"):
        cfg = load_config("h200", {"gpu.block_schedule": schedule})
        with tlpsim.Device(config=cfg, mode="functional", trace=True, trace_cache=False) as dev:
            result = get_workload("bfs").execute("tiny")
            expand = [r for r in dev.launches if r.kernel == "bfs_expand"]
            fn = dev.analyzed_kernel(expand[0].mangled).fn
            ops = np.array([i.base for i in fn.instructions])
            runs[schedule] = (result, sum(int((ops[r.trace.pc] == "bra").sum()) for r in expand))
    assert runs["ptx"][0].verified and runs["list"][0].verified
    assert [c.max_error for c in runs["ptx"][0].checks] == [c.max_error for c in runs["list"][0].checks]
    assert runs["list"][1] < runs["ptx"][1]
