"""The %clock probe: it records the timing model's issue cycle of every %clock read,
per warp, and turns them into each warp's timed interval.

The hand-made kernel reads %clock, runs a chain of N dependent integer adds (the
first reads a register that was ready long before), and reads %clock again. On a
1-SM GPU with a perfect instruction cache and one warp per scheduler, a warp's
instructions reach its buffer in fetch groups of `fetch_width` (2) slots, fetched
when the buffer runs empty, decoded the next cycle and issued from the one after
(GPGPU-Sim's fetch -> decode -> issue; tests/timing/test_fetch_decode.py). With no
branch, groups start at the pcs that are multiples of 2, so an instruction issues
the cycle after its predecessor when both came in one group and two cycles after
when it starts a group; each add of the chain issues one dependent-issue interval
after its predecessor (longer than a fetch), and

    interval = gap(first add) + (N - 1) x I_add + gap(closing read),
    gap(pc) = 2 if pc starts a fetch group else 1

I_add is what the model's tables and pipeline give for an instruction with
register sources (see tests/timing/test_pipeline.py): issue -> a collector unit
(`sm.pipelines.collector_delay`) -> operand read (1 cycle) -> `result_delay`
(dispatch register + the opcode's latency + writeback, StaticInstr) -> the
dependent issues the next cycle.
"""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.frontend.ptx_parser import parse_ptx
from tlpsim.validate.clock import PROBE_NAME, ClockRead, clock_intervals, drain, reads_clock


def _ptx(n: int) -> str:
    adds = "\n".join("  add.s32 %r2, %r2, 1;" for _ in range(n - 1))
    return f""".version 7.0
.target sm_80
.address_size 64
.visible .entry clk(.param .u64 out)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r6, %tid.x;
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %clock;
  add.s32 %r2, %r6, 1;
{adds}
  mov.u32 %r3, %clock;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r2;
  ret;
}}
"""


def _run(n: int, warps: int):
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True, "sm.execution_checker": PROBE_NAME})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False) as dev:
        out = tlpsim.zeros(32 * warps, np.uint32)
        tlpsim.RawKernel(_ptx(n), "clk")((1,), (32 * warps,), (out,), resources={"registers": 16,
                                                                               "shared_bytes": 0})
        reads = drain(dev)
        assert (out.get() == np.arange(32 * warps) + n).all()
        static = next(iter(dev._timing._static.values()))
    add = next(si for si in static.instrs if si.op == "add" and si.src_regs)
    pl = cfg.sm.pipelines
    interval = pl.collector_delay + 1 + add.result_delay + 1
    return reads, interval, static


@pytest.mark.parametrize("warps", [1, 2])
def test_clock_interval_is_the_dependent_chain_in_issue_cycles(warps):
    for n in (1, 5, 9):
        reads, interval, static = _run(n, warps)
        clock_pcs = sorted({r.pc for r in reads})
        opening, closing = clock_pcs
        assert closing == opening + n + 1            # the reads bracket the n adds

        def gap(pc: int) -> int:
            return 2 if pc % 2 == 0 else 1

        expected = gap(opening + 1) + (n - 1) * interval + gap(closing)
        assert clock_intervals(reads) == {w: expected for w in range(warps)}
        assert [static.instrs[pc].op for pc in clock_pcs] == ["mov", "mov"]
        assert len(reads) == 2 * warps and {r.sm for r in reads} == {0}


def test_drain_empties_the_probe_and_ignores_devices_without_it():
    reads, _, _ = _run(3, 1)
    assert len(reads) == 2
    with tlpsim.Device(mode="timing", config=load_config("gtx480", {"gpu.n_sms": 1}), trace_cache=False) as dev:
        assert drain(dev) == []
    with tlpsim.Device() as dev:        # functional mode: no timing model
        assert drain(dev) == []


def test_intervals_run_from_the_last_opening_read_to_the_closing_one():
    # dep_chain's pattern: t0 is read at the top of each of two passes (pc 5), t1 once after (pc 40)
    reads = [ClockRead(0, 0, 0, 5, 100), ClockRead(0, 0, 1, 5, 101), ClockRead(0, 0, 0, 5, 1100),
             ClockRead(0, 0, 1, 5, 1103), ClockRead(0, 0, 0, 40, 2100), ClockRead(0, 0, 1, 40, 2110),
             ClockRead(0, 0, 2, 5, 50)]    # warp 2 never reached its closing read
    assert clock_intervals(reads) == {0: 1000, 1: 1007}


def test_reads_clock_finds_clock_and_clock64_sources():
    fn = parse_ptx(_ptx(2).replace("mov.u32 %r3, %clock;", "mov.u64 %rd3, %clock64;"), "<t>").kernels["clk"]
    hits = [ins.opcode for ins in fn.instructions if reads_clock(ins)]
    assert hits == ["mov.u32", "mov.u64"]
