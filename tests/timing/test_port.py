"""The SM port, command by command: each test plugs a small plug-in into one GPU
with one SM and checks the exact effect of one event or command."""

from __future__ import annotations


import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import KernelError
from tlpsim.policies.alloc.base import BaselineAllocator
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.cta.round_robin import RoundRobinCTAScheduler
from tlpsim.policies.monitor.base import Monitor
from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.timing.port import PortError

CHAIN = r'''
extern "C" __global__ void chain(const float* in, float* out, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    #pragma unroll
    for (int k = 0; k < 16; ++k) x = fmaf(x, a, b);
    if (i < n) out[i] = x;
}'''

SYNC = r'''
extern "C" __global__ void sync(float* out) {
    __shared__ float s[128];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[127 - threadIdx.x];
}'''


def _chain(overrides=None, ctas=1, block=32, n_sms=1):
    # a perfect instruction cache keeps cold I-cache misses out of the hand-computed cycles
    cfg = load_config("gtx480", {"gpu.n_sms": n_sms, "l1i.perfect": True, **(overrides or {})})
    n = ctas * block
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(CHAIN, "chain")
        out = tlpsim.zeros(n, np.float32)
        rec = k((ctas,), (block,), (tlpsim.asarray(np.ones(n, np.float32)), out, np.float32(1.0),
                                    np.float32(0.0), np.int32(n)))
        assert np.allclose(out.get(), 1.0)
    return rec


# ---------------------------------------------------------------- warp holds and timers

class HoldUntil(ExecutionChecker):
    """Holds every warp of each admitted CTA until cycle 60; records issue cycles."""

    events = frozenset({"cta_admitted", "instr_issued"})
    issued: list = []

    def on_cta_admitted(self, cta, now):
        for w in cta.warps:
            self.port.hold_warp_until(w.slot, 60)

    def on_instr_issued(self, warp, instr, mask, now):
        type(self).issued.append((now, warp.slot, instr.pc, mask))


def test_hold_until_a_cycle_releases_exactly_then(plugin):
    HoldUntil.issued = []
    name = plugin("execution_checker", HoldUntil)
    rec = _chain({"sm.execution_checker": name})
    assert HoldUntil.issued[0][0] == 60            # nothing issues before the release cycle
    assert len(HoldUntil.issued) == rec.warp_instructions
    fmas = [m for _, _, pc, m in HoldUntil.issued if rec.device._compiled[next(iter(rec.device._compiled))]
            .fn.instructions[pc].base == "fma"]
    assert len(fmas) == 16 and set(fmas) == {0xFFFFFFFF}    # executed-lane masks: all 32 lanes
    free = _chain()
    assert rec.stats.cycles > free.stats.cycles


class HoldForever(ExecutionChecker):
    events = frozenset({"warp_started"})

    def on_warp_started(self, warp, now):
        self.port.hold_warp(warp.slot)


def test_a_warp_held_forever_is_a_deadlock_naming_the_hold(plugin):
    name = plugin("execution_checker", HoldForever)
    with pytest.raises(KernelError, match="hold by the execution_checker plug-in"):
        _chain({"sm.execution_checker": name})


class Timers(ExecutionChecker):
    events = frozenset({"kernel_start", "timer"})
    fired: list = []

    def on_kernel_start(self, kernel, now):
        self.port.wake_at(now + 25, "a")
        self.port.wake_at(now + 10, "b")

    def on_timer(self, tag, now):
        type(self).fired.append((tag, now))


def test_timers_fire_at_their_cycle_in_order(plugin):
    Timers.fired = []
    name = plugin("execution_checker", Timers)
    _chain({"sm.execution_checker": name})
    assert Timers.fired == [("b", 10), ("a", 25)]   # kernel_start at cycle 0 (first dispatch)


# ---------------------------------------------------------------- writeback delay and units

class DelayFma(ExecutionChecker):
    """Delays every fma's result by 3 cycles (a redundant check before dependents issue)."""

    events = frozenset({"instr_issued"})

    def watches(self, instr):
        return instr.op == "fma"

    def on_instr_issued(self, warp, instr, mask, now):
        self.port.delay_writeback(3)


def test_delayed_writebacks_lengthen_a_dependent_chain_exactly(plugin):
    base = _chain()
    name = plugin("execution_checker", DelayFma)
    slow = _chain({"sm.execution_checker": name})
    assert slow.stats.cycles - base.stats.cycles == 3 * 16    # 16 dependent fmas on the critical path


class Occupier(ExecutionChecker):
    events = frozenset({"kernel_start"})
    seen: list = []

    def on_kernel_start(self, kernel, now):
        p = self.port
        start = p.occupy_unit("sfu", 40)
        type(self).seen = [start, p.unit_free_at("sfu"), p.occupy_unit("sfu", 5), p.unit_free_at("sfu"),
                           p.smem_access(4), p.smem_access(2)]


def test_unit_and_scratchpad_occupancy_is_exact(plugin):
    name = plugin("execution_checker", Occupier)
    _chain({"sm.execution_checker": name})
    # one SFU unit on the GTX480: the second occupation queues behind the first
    assert Occupier.seen == [0, 40, 40, 45, 4, 6]


def test_port_rejects_bad_commands(plugin):
    class Bad(ExecutionChecker):
        events = frozenset({"kernel_start"})

        def on_kernel_start(self, kernel, now):
            self.port.hold_warp(40)

    name = plugin("execution_checker", Bad)
    with pytest.raises(PortError, match="no resident warp in slot 40"):
        _chain({"sm.execution_checker": name})


# ---------------------------------------------------------------- memory through the L1 port

class Loader(ExecutionChecker):
    """Loads 256 bytes of its backing store when the kernel starts."""

    events = frozenset({"kernel_start"})
    done: list = []

    def on_kernel_start(self, kernel, now):
        base = self.port.backing_store("spill", 256)
        assert base % 128 == 0
        self.port.mem_request("read", base, 256, lambda cycle: type(self).done.append((now, cycle)))


def test_memory_requests_go_through_the_l1_port(plugin):
    Loader.done = []
    base = _chain()
    name = plugin("execution_checker", Loader)
    rec = _chain({"sm.execution_checker": name})
    (issued, ready), = Loader.done
    assert ready > issued + 100          # two L1 misses served from DRAM
    reqs = lambda st: sum(s["mem_requests"] for s in st.per_sm)
    assert reqs(rec.stats) == reqs(base.stats) + 2           # two 128-byte lines
    l1 = lambda st: sum(s["l1d_misses"] for s in st.per_sm)
    assert l1(rec.stats) == l1(base.stats) + 2


class Bypass(Monitor):
    events = frozenset({"kernel_start"})

    def on_kernel_start(self, kernel, now):
        self.port.bypass_l1(kernel.kid)


def test_l1_bypass_sends_global_loads_past_the_l1(plugin):
    name = plugin("monitor", Bypass)
    rec = _chain({"monitor.policy": name})
    assert sum(s["l1d_accesses"] for s in rec.stats.per_sm) == 0
    assert sum(s["mem_requests"] for s in rec.stats.per_sm) > 0


# ---------------------------------------------------------------- CTA dispatch control

class OnePerSM(RoundRobinCTAScheduler):
    """Round robin, with at most one resident CTA of each kernel per SM."""

    events = frozenset({"kernel_start", "cta_admitted", "cta_retired"})
    peak = 0
    resident = 0
    retired: list = []

    def on_kernel_start(self, kernel, now):
        self.port.set_cta_limit(kernel.kid, 1)

    def on_cta_admitted(self, cta, now):
        cls = type(self)
        cls.resident += 1
        cls.peak = max(cls.peak, cls.resident)

    def on_cta_retired(self, cta, now):
        type(self).resident -= 1
        type(self).retired.append((cta.index, cta.insts))

    def on_cta_done(self, sm, kid, cta, now):
        assert cta == type(self).retired[-1][0]   # the CTA's index, not a completion count


def test_cta_limit_holds_residency_and_retirements_report_the_cta(plugin):
    OnePerSM.peak, OnePerSM.resident, OnePerSM.retired = 0, 0, []
    name = plugin("cta_scheduler", OnePerSM)
    rec = _chain({"gpu.cta_scheduler": name}, ctas=4)
    assert OnePerSM.peak == 1
    assert sorted(i for i, _ in OnePerSM.retired) == [0, 1, 2, 3]
    per_cta = rec.warp_instructions // 4
    assert all(insts == per_cta for _, insts in OnePerSM.retired)
    assert rec.stats.cycles > _chain(ctas=4).stats.cycles


class HoldDispatch(RoundRobinCTAScheduler):
    """Holds dispatch to the SM until a GPU timer at cycle 100."""

    events = frozenset({"kernel_start", "timer"})
    first: list = []

    def on_kernel_start(self, kernel, now):
        self.port.sm(0).hold_dispatch()
        self.port.wake_at(100)

    def on_timer(self, tag, now):
        self.port.sm(0).release_dispatch()

    def assign(self, sms, kernels, now):
        out = super().assign(sms, kernels, now)
        if out and not type(self).first:
            type(self).first.append(now)
        return out


def test_held_dispatch_resumes_when_released_by_a_timer(plugin):
    HoldDispatch.first = []
    name = plugin("cta_scheduler", HoldDispatch)
    rec = _chain({"gpu.cta_scheduler": name}, ctas=2)
    # kernel_start fires with the first dispatch (cycle 0); the second CTA waits for cycle 100
    assert rec.stats.cycles > 100
    dense_cfg = {"gpu.cta_scheduler": name}
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True, **dense_cfg})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=True):
        k = tlpsim.RawKernel(CHAIN, "chain")
        r2 = k((2,), (32,), (tlpsim.asarray(np.ones(64, np.float32)), tlpsim.zeros(64, np.float32),
                             np.float32(1.0), np.float32(0.0), np.int32(64)))
    assert r2.stats.cycles == rec.stats.cycles


# ---------------------------------------------------------------- capacity and partial CTAs

class OneWarpAtATime(BaselineAllocator):
    """Admits a CTA one warp at a time: the next warp when the previous one finishes."""

    events = frozenset({"warp_started", "warp_finished"})
    log: list = []

    def allocate(self, kres, slot):
        g = super().allocate(kres, slot)
        g.warps = 1
        return g

    def grant_warps(self, grant, waiting):
        return 1 if self._free else 0

    def on_warp_started(self, warp, now):
        self._free = False
        type(self).log.append(("start", warp.gwarp, now))

    def on_warp_finished(self, warp, now):
        type(self).log.append(("end", warp.gwarp, now))
        self._free = True
        self.port.resources_changed()


def test_partial_ctas_admit_warps_as_the_allocator_grants_them(plugin):
    OneWarpAtATime.log = []
    name = plugin("resource_allocator", OneWarpAtATime)
    rec = _chain({"sm.resource_allocator": name}, block=128)
    log = OneWarpAtATime.log
    assert [(e, w) for e, w, _ in log] == [("start", 0), ("end", 0), ("start", 1), ("end", 1), ("start", 2),
                                           ("end", 2), ("start", 3), ("end", 3)]
    assert rec.stats.warp_insts == rec.warp_instructions


class Wide(BaselineAllocator):
    """Twice the baseline's CTA and warp slots (storage provided elsewhere)."""

    def max_contexts(self):
        c, w = super().max_contexts()
        return 2 * c, 2 * w

    def fits(self, kres):
        return self.ctas < 16


def test_allocator_sizes_the_slot_tables(plugin):
    name = plugin("resource_allocator", Wide)
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "sm.resource_allocator": name})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(SYNC, "sync")
        rec = k((16,), (128,), (tlpsim.zeros(16 * 128, np.float32),))
    assert rec.stats.avg_resident_ctas > 8   # more than the baseline's 8 CTA slots
    assert rec.stats.warp_insts == rec.warp_instructions


# ---------------------------------------------------------------- observation events

class Watcher(ExecutionChecker):
    events = frozenset({"warp_blocked", "warp_unblocked", "writeback", "l1d_access"})
    blocked: dict = {}
    wb: list = []
    l1: list = []

    def on_warp_blocked(self, warp, reason, now):
        type(self).blocked[reason] = type(self).blocked.get(reason, 0) + 1

    def on_warp_unblocked(self, warp, reason, now):
        pass

    def on_writeback(self, warp, instr, value_class, now):
        type(self).wb.append(value_class)

    def on_l1d_access(self, warp, line, outcome, evicted, now):
        type(self).l1.append(outcome)


def test_observation_events_report_reasons_values_and_l1_outcomes(plugin):
    Watcher.blocked, Watcher.wb, Watcher.l1 = {}, [], []
    name = plugin("execution_checker", Watcher)
    rec = _chain({"sm.execution_checker": name})
    assert Watcher.blocked.get("memory", 0) >= 1 and Watcher.blocked.get("scoreboard", 0) >= 16
    assert Watcher.blocked.get("fetch", 0) >= 1
    static = rec.device._timing._static[next(iter(rec.device._timing._static))]
    writers = sum(1 for pc in rec.trace.pc.tolist() if static.instrs[pc].dst_mask)
    assert len(Watcher.wb) == writers                     # one writeback event per result
    assert set(Watcher.wb) <= set(range(-1, 8)) and 0 in Watcher.wb  # value classes; uniform values occur
    assert Watcher.l1.count("miss") == sum(s["l1d_misses"] for s in rec.stats.per_sm)
    base = _chain()
    assert rec.stats.cycles == base.stats.cycles   # observing changes nothing


class Windows(Monitor):
    events = frozenset({"window"})
    seen: list = []

    class Params:
        pass

    def on_window(self, counters, now):
        type(self).seen.append((counters.first_cycle, counters.last_cycle, sum(s.warp_insts for s in counters.sms)))


def test_monitor_windows_tile_the_run(plugin):
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class P:
        window_cycles: int = 50

    Windows.Params = P
    Windows.seen = []
    name = plugin("monitor", Windows)
    rec = _chain({"monitor.policy": name}, ctas=4)
    seen = Windows.seen
    assert [(a, b) for a, b, _ in seen] == [(50 * k, 50 * k + 49) for k in range(len(seen))]
    assert len(seen) == rec.stats.cycles // 50
    assert sum(n for _, _, n in seen) <= rec.stats.warp_insts


# ---------------------------------------------------------------- operand storage contract

class SlowWrites(BankedRegisterFile):
    """The baseline banks, with every write completing 2 cycles late (through the plug-in path)."""

    def write(self, warp, instr, now):
        return super().write(warp, instr, now) + 2


def test_write_completion_cycles_are_respected(plugin):
    base = _chain()
    name = plugin("operand_storage", SlowWrites)
    slow = _chain({"sm.operand_storage": name})
    # 16 dependent fmas each wait 2 more cycles for their source's write
    assert slow.stats.cycles - base.stats.cycles >= 2 * 16
    assert slow.stats.warp_insts == base.stats.warp_insts


class SeesOperands(BankedRegisterFile):
    seen: list = []

    def try_read(self, warp, instr, now):
        type(self).seen.append((warp.slot, warp.cta, warp.gwarp, instr.pc, instr.src_regs))
        return super().try_read(warp, instr, now)


def test_operand_storage_sees_physical_registers_and_the_warp(plugin):
    SeesOperands.seen = []
    name = plugin("operand_storage", SeesOperands)
    rec = _chain({"sm.operand_storage": name}, ctas=2, block=64)
    n_regs = max(r for *_, regs in SeesOperands.seen for r in regs) + 1
    assert n_regs <= 16          # physical registers: a few per thread, not PTX's virtual names
    assert {(s, c, g) for s, c, g, _, _ in SeesOperands.seen} >= {(0, 0, 0), (1, 0, 1)}
    assert len(SeesOperands.seen) >= rec.warp_instructions - 4 * 2  # every issue attempt (exits/barriers excluded)


def test_rf_banks_and_collectors_come_from_the_config():
    from tlpsim.session import build_gpu

    gpu = build_gpu(load_config("fermi_rfv"))
    assert gpu.sms[0].operands.banks.n_banks == 32
    gpu = build_gpu(load_config("gtx480", {"sm.rf_banks": 2, "sm.operand_collector.units.sp": 3}))
    banks = gpu.sms[0].operands.banks
    assert banks.n_banks == 2 and banks.cap["sp"] == 3


class MemWaits(ExecutionChecker):
    events = frozenset({"instr_issued"})
    flags: list = []

    def on_instr_issued(self, warp, instr, mask, now):
        type(self).flags.append((instr.op, instr.long_wait, warp.waiting_mem))


def test_waiting_mem_is_set_while_a_load_is_outstanding(plugin):
    MemWaits.flags = []
    name = plugin("execution_checker", MemWaits)
    _chain({"sm.execution_checker": name})
    after_load = [f for f in MemWaits.flags if f[0] == "ld" and f[1]]
    assert after_load and all(w for _, _, w in after_load)      # set when the global load issues
    assert MemWaits.flags[-1][2] is False                        # cleared once its data was written back


def test_subclasses_of_built_in_schedulers_get_their_context(plugin):
    from tlpsim.policies.warp.gto import GreedyThenOldest
    from tlpsim.session import build_gpu

    name = plugin("warp_scheduler", type("MyGTO", (GreedyThenOldest,), {}))
    gpu = build_gpu(load_config("gtx480", {"gpu.n_sms": 1, "sm.warp_scheduler": name}))
    scheds = gpu.sms[0].issue.policies
    assert [s.index for s in scheds] == [0, 1] and all(s.port is not None and s.config is not None
                                                      for s in scheds)


def test_settled_marks_a_settling_plugins_last_decision_point():
    """port.settled(kid) (tlpsim.sampling): recorded for a plug-in declared "settles",
    refused for any other (it would switch wave sampling on for the wrong reason)."""
    from tlpsim.session import build_gpu

    gpu = build_gpu(load_config("gtx480", {"gpu.cta_scheduler": "lcs", "gpu.n_sms": 2}))
    lcs = gpu.cta_policy
    lcs.port.settled(5)
    assert gpu.settled == {(id(lcs), 5)}
    gto = dict(gpu.sms[0].plugins)["warp_scheduler.gto"]
    with pytest.raises(PortError, match="port.settled\\(5\\) from the warp_scheduler plug-in 'gto'"):
        gto.port.settled(5)
