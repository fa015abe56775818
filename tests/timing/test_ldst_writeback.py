"""The L1 miss path's last stages as GPGPU-Sim models them: a reply waits a cycle in
the SM cluster's response FIFO (icnt.ejection_cycles), and the loads an L1 fill
completes leave the LD/ST unit through its one writeback register, one a cycle, two
cycles after the fill (m_next_wb; sm.pipelines.ldst_writeback_register), as shared
memory's results do."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.timing.cache import MSHR, CacheArray
from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.ldst import SMEM_WRITEBACK_STAGES, LdstParams, LdstUnit, _Instr
from tlpsim.timing.mem_types import READ, MemRequest
from tlpsim.timing.queues import TimedQueue


def _unit(wb_register: bool):
    l1d = CachePort("l1d", CacheArray(16384, 4, 128), MSHR(8, 8), 35)
    l1c = CachePort("l1c", CacheArray(8192, 2, 64), MSHR(2, 32), 1)
    u = LdstUnit(0, LdstParams(l1_pipeline=0, wb_register=wb_register), l1d, l1c, TimedQueue("out", 8),
                 TimedQueue("in", 8), lambda a: 0)
    u._period = 1
    return u, l1d


def _load(l1d, name: str, done: list):
    """A warp's load; its completion (the cycle its registers are written) goes to `done`."""
    return _Instr(SimpleNamespace(name=name), 1, [], READ, l1d, None, callback=lambda c: done.append((name, c)))


@pytest.mark.parametrize("wb_register,expected", [(False, [101, 101, 101]), (True, [102, 103, 104])])
def test_a_fill_releases_its_merged_loads_one_a_cycle_through_the_writeback_register(wb_register, expected):
    u, l1d = _unit(wb_register)
    done: list = []
    loads = [_load(l1d, n, done) for n in "abc"]
    for k, ins in enumerate(loads):               # a misses, b and c merge into its MSHR entry
        assert u._lookup(ins, 0x1000, 0xF, 10 + k)
    assert l1d.stats.misses == 1 and len(u.missq) == 1
    u.inflight = 3
    u._reply(MemRequest(READ, 0x1000, 0xF, 0, token=("fill", l1d, 0x1000)), 100)
    assert done == list(zip("abc", expected))
    assert u.inflight == 0


def test_shared_results_and_fill_releases_share_the_register():
    """A shared load due at a cycle a fill's load already holds writes the next free one."""
    u, l1d = _unit(True)
    done: list = []
    ins = _load(l1d, "a", done)
    assert u._lookup(ins, 0x1000, 0xF, 10)
    u.inflight = 1
    u._reply(MemRequest(READ, 0x1000, 0xF, 0, token=("fill", l1d, 0x1000)), 100)
    assert done == [("a", 100 + SMEM_WRITEBACK_STAGES)]
    assert u._book_wb(102, 100) == 103 and u._book_wb(102, 100) == 104 and u._book_wb(110, 100) == 110


def test_a_plug_in_request_takes_no_writeback_slot():
    u, l1d = _unit(True)
    seen: list[int] = []
    ins = _Instr(None, 0, [], READ, l1d, None, callback=seen.append)
    assert u._lookup(ins, 0x1000, 0xF, 10)
    u.inflight = 1
    u._reply(MemRequest(READ, 0x1000, 0xF, 0, token=("fill", l1d, 0x1000)), 100)
    assert seen == [101] and not u._wb_booked


CHASE = r'''
extern "C" __global__ void chase(const unsigned long long* p, unsigned long long* out, int steps) {
    unsigned long long a = (unsigned long long)p;
    for (int i = 0; i < steps; ++i) a = *(const unsigned long long*)a;
    out[0] = a;
}'''


def _chase(steps: int, overrides: dict) -> int:
    n = 64
    with tlpsim.Device(mode="timing", config=load_config("gtx480", overrides)):
        buf = tlpsim.zeros(n * 16, np.uint64)
        host = np.zeros(n * 16, np.uint64)
        host[::16] = buf.ptr + ((np.arange(n, dtype=np.uint64) + 1) % n) * 128
        buf.set(host)
        out = tlpsim.zeros(1, np.uint64)
        cycles = tlpsim.RawKernel(CHASE, "chase")((1,), (1,), (buf, out, np.int32(steps))).stats.cycles
        assert int(out.get()[0]) == buf.ptr + (steps % n) * 128
    return cycles


def _chase_step(overrides: dict) -> int:
    """Cycles per step of one thread chasing pointers through distinct 128-byte lines:
    each load misses the L1 and hits the L2 (the host copy left the data there), so a
    step is an L2 round trip; measured as the difference of 24 and 8 steps (each on a
    fresh device), which cancels the launch's fixed cost."""
    diff = _chase(24, overrides) - _chase(8, overrides)
    assert diff % 16 == 0, diff
    return diff // 16


def test_an_l2_hit_round_trip_takes_the_response_fifo_and_the_writeback_register():
    """One step with neither stage, +1 with the cluster's response FIFO, +1 more with
    the writeback register (the fill itself waits only for the FIFO)."""
    off = {"icnt.ejection_cycles": 0, "sm.pipelines.ldst_writeback_register": False}
    base = _chase_step(off)
    assert _chase_step(dict(off, **{"icnt.ejection_cycles": 1})) == base + 1
    assert _chase_step(dict(off, **{"sm.pipelines.ldst_writeback_register": True})) == base + 1
    assert _chase_step({"icnt.ejection_cycles": 1, "sm.pipelines.ldst_writeback_register": True}) == base + 2
