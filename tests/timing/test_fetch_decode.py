"""The front end as GPGPU-Sim models it (shader.cc fetch/decode/issue): a fetch
brings two instruction slots that are decoded into the warp's buffer the next
cycle and issue from the cycle after, so one warp issues at most 2 instructions
every 3 cycles; a taken branch flushes the wrong-path slots and refetches from the
target (1 cycle after the branch issues, or 2 when the branch was the fetch's last
slot and the fall-through was fetched first); a warp at a barrier fetches."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register, unregister


def _source_fetch():
    """The Python source of tlpsim.timing.fetch: the unit tests below drive Fetch with
    stand-in warps and issue stage, which the compiled class (typed attributes) refuses;
    the end-to-end test runs whichever core is installed."""
    import importlib.util
    from pathlib import Path

    import tlpsim.timing

    spec = importlib.util.spec_from_file_location("_fetch_source", Path(tlpsim.timing.__file__).with_name("fetch.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Fetch


Fetch = _source_fetch()

STREAM = r'''
extern "C" __global__ void stream(unsigned* out) {
    unsigned a = threadIdx.x, b = a + 1, c = a + 2, d = a + 3, e = a + 4, f = a + 5, g = a + 6, h = a + 7;
    asm volatile("add.u32 %0, %0, 1;" : "+r"(a)); asm volatile("add.u32 %0, %0, 1;" : "+r"(b));
    asm volatile("add.u32 %0, %0, 1;" : "+r"(c)); asm volatile("add.u32 %0, %0, 1;" : "+r"(d));
    asm volatile("add.u32 %0, %0, 1;" : "+r"(e)); asm volatile("add.u32 %0, %0, 1;" : "+r"(f));
    asm volatile("add.u32 %0, %0, 1;" : "+r"(g)); asm volatile("add.u32 %0, %0, 1;" : "+r"(h));
    out[threadIdx.x] = a + b + c + d + e + f + g + h;
}'''


@pytest.fixture
def probe():
    names = []

    def make(ops):
        log = []

        class Probe(ExecutionChecker):
            events = frozenset({"instr_issued"})

            def watches(self, instr):
                return instr.op in ops

            def on_instr_issued(self, warp, instr, mask, now):
                log.append((now, instr.op, instr.pc))

        name = f"t_{uuid.uuid4().hex[:8]}"
        register("execution_checker", name)(Probe)
        names.append(name)
        return name, log

    yield make
    for n in names:
        unregister("execution_checker", n)


def _issue_log(probe, src, name, args, ops):
    pname, log = probe(ops)
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "sm.execution_checker": pname, "l1i.perfect": True})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(src, name)
        k((1,), (32,), args(tlpsim))
    return log


def test_one_warp_issues_two_instructions_every_three_cycles(probe):
    log = _issue_log(probe, STREAM, "stream", lambda t: (t.zeros(32, np.uint32),), {"add"})
    # the eight inline adds: the longest run of consecutive pcs
    runs, cur = [], [log[0]]
    for e in log[1:]:
        cur = cur + [e] if e[2] == cur[-1][2] + 1 else [e]
        runs.append(cur)
    adds = max(runs, key=len)[:8]   # (the final sum's dependent adds follow them)
    assert len(adds) == 8
    # pairs of consecutive slots issue back to back, the next pair 2 cycles later
    # (fetched after the pair's second issue, decoded, issued): gaps alternate 1, 2
    # (a 128-byte line boundary would cut a fetch to one slot: a 3-cycle gap)
    cycles = [c for c, _, _ in adds]
    gaps = np.diff(cycles).tolist()
    assert set(gaps) <= {1, 2, 3} and all({a, b} == {1, 2} for a, b in zip(gaps, gaps[1:]) if 3 not in (a, b))
    assert all(hi - lo >= 3 for lo, hi in zip(cycles, cycles[2:]))


class _W:
    """A warp as Fetch sees it."""

    def __init__(self, pcs, code_addr=0):
        self.pcs, self.pos, self.n, self.code_addr = pcs, 0, len(pcs), code_addr
        self.ibuf, self.in_fetch, self.done, self.refetch_delay, self.slot = 0, False, False, 0, 0


class _Issue:
    def __init__(self):
        self.ready = []

    def update_ready(self, w):
        self.ready.append(w.ibuf)


def _decoded(pcs, pos=0, code_addr=0):
    f = Fetch(2, 1, None, 2)
    f.issue = _Issue()
    w = _W(pcs, code_addr)
    w.pos = pos
    f.want(w)
    assert f.tick([w], 10) and w.ibuf == 0 and len(f) == 1   # fetched at 10, not decoded yet
    assert f.tick([w], 11) and f.issue.ready == [w.ibuf]      # decoded at 11
    return w.ibuf, w.refetch_delay


def test_a_fetch_holds_the_sequential_slots_up_to_a_jump_or_the_line_end():
    assert _decoded([0, 1, 2, 3]) == (2, 0)
    assert _decoded([0, 7, 8]) == (1, 1)             # a jump after slot 0: slot 1 is wrong-path, flushed a cycle later
    assert _decoded([0, 1, 9]) == (2, 2)             # a jump from the last slot: the fall-through is fetched first
    assert _decoded([15, 16, 17]) == (1, 0)          # pc 15 ends the 128-byte line: one slot
    assert _decoded([15, 3], code_addr=0) == (1, 2)  # ... and a jump from it
    assert _decoded([3, 4]) == (2, 0) and _decoded([3]) == (1, 0)   # the stream's end


def test_a_jumping_warp_refetches_after_the_flush():
    f = Fetch(2, 1, None, 2)
    f.issue = _Issue()
    w = _W([0, 9, 10])
    w.refetch_delay, w.pos = 1, 1
    f.refetch(w, 20)                    # a branch in slot 0 issued at 20: slot 1 is flushed at 21
    assert w.in_fetch and len(f) == 1 and not f.queue
    f.tick([w], 21)                     # the target is fetched at 21 ...
    assert w.ibuf == 0 and f.decoding == [w]
    f.tick([w], 22)                     # ... decoded at 22: it issues from 23
    assert w.ibuf == 2 and not len(f)


def test_a_jump_from_the_last_slot_wastes_a_fetch_on_the_fall_through():
    f = Fetch(2, 1, None, 2)
    f.issue = _Issue()
    w, other = _W([0, 1, 9, 10]), _W([0, 1, 2, 3])
    other.slot = 1
    w.refetch_delay, w.pos = 2, 2
    f.refetch(w, 20)                    # the branch (pc 1, the fetch's last slot) issued at 20
    f.want(other)
    f.tick([w, other], 20)              # the port fetches w's fall-through at 20 ...
    assert f.queue == [1] and f.flushed == [(22, 0)] and w.refetch_delay == 0
    f.tick([w, other], 21)              # ... so the other warp waits for 21
    assert f.decoding == [other] and w.ibuf == 0
    f.tick([w, other], 22)              # the flush at 22 refetches w from the target
    assert other.ibuf == 2 and f.decoding == [w]
    f.tick([w, other], 23)
    assert w.ibuf == 2 and not len(f)   # decoded at 23: w issues from 24, 4 cycles after its branch
