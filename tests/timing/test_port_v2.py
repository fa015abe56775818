"""Port v2 (issue 25): what a mechanism of two plug-ins needs from the port — the
allocator learns the launch and CTA slot and its grant reaches the CTA's view,
plug-ins of one SM find each other (`peer`), the port works in `__init__`, the L1
holds contexts only while bypassed, the RF geometry comes from the config, and
energy-table structures are counted by the plug-ins that declare them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.policies.alloc.base import BaselineAllocator
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.ctxswitch.base import ContextSwitcher
from tlpsim.policies.warp.gto import GreedyThenOldest
from tlpsim.timing.port import PortError, RFGeometry
from tlpsim.timing.views import Grant

SYNC = r'''
extern "C" __global__ void sync(float* out) {
    __shared__ float s[128];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[127 - threadIdx.x];
}'''


def _sync(overrides=None, ctas=12, launches=1, preset="gtx480"):
    cfg = load_config(preset, {"gpu.n_sms": 1, "l1i.perfect": True, **(overrides or {})})
    recs = []
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(SYNC, "sync")
        for _ in range(launches):
            out = tlpsim.zeros(ctas * 128, np.float32)
            recs.append(k((ctas,), (128,), (out,)))
            assert np.array_equal(out.get().reshape(ctas, 128), np.tile(np.arange(127, -1, -1, dtype=np.float32),
                                                                         (ctas, 1)))
    return recs


# ---------------------------------------------------------------- gap 2: grants, slots, peers

@dataclass
class SlotGrant(Grant):
    kid: int = -1
    slot: int = -1


class SlotAllocator(BaselineAllocator):
    """The baseline's accounting, with a grant that remembers its launch and CTA slot."""

    made: list = []

    def allocate(self, kres, slot):
        g = super().allocate(kres, slot)
        grant = SlotGrant(g.threads, g.warps, g.regs, g.smem, kid=kres.kid, slot=slot)
        type(self).made.append(grant)
        return grant


class GrantReader(ContextSwitcher):
    """Finds, for every admitted CTA, the allocator's grant through peer()."""

    events = frozenset({"cta_admitted"})
    seen: list = []

    def on_cta_admitted(self, cta, now):
        alloc = self.port.peer("resource_allocator")
        type(self).seen.append((cta.kid, cta.slot, cta.grant, alloc))


def test_allocate_learns_launch_and_slot_and_the_cta_view_carries_the_grant(plugin):
    SlotAllocator.made, GrantReader.seen = [], []
    a = plugin("resource_allocator", SlotAllocator)
    s = plugin("context_switcher", GrantReader)
    _sync({"sm.resource_allocator": a, "sm.context_switcher": s}, ctas=12, launches=2)
    seen = GrantReader.seen
    assert len(seen) == len(SlotAllocator.made) == 24
    kids = sorted({kid for kid, *_ in seen})
    assert len(kids) == 2
    for kid, slot, grant, alloc in seen:
        assert isinstance(alloc, SlotAllocator)                 # the SM's own allocator instance
        assert grant in SlotAllocator.made and (grant.kid, grant.slot) == (kid, slot)
    # 8 CTA slots on the GTX480: the first 8 CTAs of the first launch fill slots 0..7
    assert [slot for kid, slot, *_ in seen[:8]] == list(range(8))
    assert all(slot < 8 for _, slot, *_ in seen)


def test_peer_errors_name_the_point_and_the_rule(plugin):
    class AsksEarly(GreedyThenOldest):
        def __init__(self, params=None, **context):
            super().__init__(params, **context)
            self.port.peer("operand_storage")   # built after the warp schedulers

    name = plugin("warp_scheduler", AsksEarly)
    with pytest.raises(PortError, match=r"peer\('operand_storage'\).*not built yet.*resource_allocator, "
                                        r"warp_scheduler, operand_storage"):
        _sync({"sm.warp_scheduler": name})

    class AsksThird(ExecutionChecker):
        def __init__(self, params=None, **context):
            super().__init__(params, **context)
            assert self.port.peer("warp_scheduler", 1) is not self.port.peer("warp_scheduler", 0)
            self.port.peer("warp_scheduler", 2)

    name = plugin("execution_checker", AsksThird)
    with pytest.raises(PortError, match=r"peer\('warp_scheduler', 2\): this SM has 2 warp_scheduler plug-in"):
        _sync({"sm.execution_checker": name})

    class AsksGPU(ExecutionChecker):
        def __init__(self, params=None, **context):
            super().__init__(params, **context)
            self.port.peer("monitor")

    name = plugin("execution_checker", AsksGPU)
    with pytest.raises(PortError, match=r"peer\('monitor'\): not an SM-level extension point"):
        _sync({"sm.execution_checker": name})


def test_an_allocator_without_the_slot_argument_is_a_config_error(plugin):
    class Old(BaselineAllocator):
        def allocate(self, kres):
            return super().allocate(kres, 0)

    name = plugin("resource_allocator", Old)
    with pytest.raises(ConfigError, match=r"allocate\(\) must take \(kres, slot\).*takes \(kres\)"):
        _sync({"sm.resource_allocator": name})


# ---------------------------------------------------------------- gap 5: the port in __init__

class InitUser(BaselineAllocator):
    """Names only the keywords it wants (no **context) and uses the port in __init__."""

    seen: list = []

    def __init__(self, params=None, limits=None, cta_cap=None):
        super().__init__(params, limits, cta_cap)
        p = self.port
        type(self).seen.append((p.sm_id, p.point, p.n_schedulers, p.capacity("rf"), p.rf_geometry().banks,
                                self.config.gpu.n_sms))


def test_the_port_is_bound_before_init(plugin):
    InitUser.seen = []
    name = plugin("resource_allocator", InitUser)
    _sync({"sm.resource_allocator": name, "gpu.n_sms": 2}, ctas=2)
    assert InitUser.seen == [(0, "resource_allocator", 2, 131072, 16, 2), (1, "resource_allocator", 2, 131072, 16, 2)]


def test_commands_that_need_the_sm_name_the_command_and_the_rule_in_init(plugin):
    class TooSoon(BaselineAllocator):
        def __init__(self, params=None, **context):
            super().__init__(params, **context)
            self.port.resident_warps()

    name = plugin("resource_allocator", TooSoon)
    with pytest.raises(PortError, match=r"SM 0: port\.resident_warps\(\) of the resource_allocator plug-in needs "
                                        r"the SM, which is built after its plug-ins"):
        _sync({"sm.resource_allocator": name})

    class Slots(ExecutionChecker):
        seen: list = []

        def __init__(self, params=None, **context):
            super().__init__(params, **context)
            type(self).seen.append((self.port.n_warp_slots, self.port.n_cta_slots))

    name = plugin("execution_checker", Slots)
    _sync({"sm.execution_checker": name}, ctas=1)
    assert Slots.seen == [(48, 8)]       # the allocator's max_contexts(), known once it is built


# ---------------------------------------------------------------- gap 7: contexts parked in the L1

class ParkInL1(ContextSwitcher):
    """Reserves 4 KB of the L1 when the kernel starts, bypassing it first if `bypass`."""

    events = frozenset({"kernel_start"})
    bypass = False
    seen: list = []

    def on_kernel_start(self, kernel, now):
        p = self.port
        if type(self).bypass:
            p.bypass_l1(kernel.kid)
        before = p.spare_bytes("l1")
        p.reserve("l1", 4096)
        type(self).seen.append((before, p.spare_bytes("l1"), p.l1_bypassed()))
        with pytest.raises(PortError, match=r"bypass_l1\(.*on=False\) while 4096 B of the L1 hold contexts"):
            p.bypass_l1(kernel.kid, False)
        p.unreserve("l1", 4096)


def test_the_l1_holds_contexts_only_while_bypassed(plugin):
    name = plugin("context_switcher", ParkInL1)
    ParkInL1.bypass, ParkInL1.seen = False, []
    with pytest.raises(PortError, match=r"reserve\('l1', 4096\) from the context_switcher plug-in: the L1 data "
                                        r"cache holds contexts only while it is bypassed for data"):
        _sync({"sm.context_switcher": name}, ctas=1)
    ParkInL1.bypass = True
    rec, = _sync({"sm.context_switcher": name}, ctas=1)
    assert ParkInL1.seen == [(16384, 12288, True)]
    ParkInL1.bypass, ParkInL1.seen = False, []
    _sync({"sm.context_switcher": name, "l1d.bypass_global": True}, ctas=1)  # the config bypasses it for all
    assert ParkInL1.seen == [(16384, 12288, True)]


# ---------------------------------------------------------------- gap 9: RF geometry

class Geometry(ExecutionChecker):
    seen: list = []

    def __init__(self, params=None, **context):
        super().__init__(params, **context)
        type(self).seen.append(self.port.rf_geometry())


@pytest.mark.parametrize("preset,overrides,geometry", [
    ("gtx480", {}, RFGeometry(16, 8192, 8, 1024)),          # 128 KB in 16 banks of 8 x 1 KB
    ("fermi_rfv", {}, RFGeometry(32, 4096, 4, 1024)),       # Jeon: 32 banks of 4 x 1 KB
    ("gtx480", {"sm.rf_subarray_bytes": 2048}, RFGeometry(16, 8192, 4, 2048)),
])
def test_rf_geometry_comes_from_the_config(plugin, preset, overrides, geometry):
    Geometry.seen = []
    name = plugin("execution_checker", Geometry)
    _sync({"sm.execution_checker": name, **overrides}, ctas=1, preset=preset)
    assert Geometry.seen == [geometry]
    assert geometry.subarrays * geometry.subarray_bytes == geometry.total_bytes


def test_a_subarray_that_does_not_divide_a_bank_is_a_config_error():
    with pytest.raises(ConfigError, match=r"sm\.rf_subarray_bytes \(3000\) must divide a register bank"):
        load_config("gtx480", {"sm.rf_subarray_bytes": 3000})


# ---------------------------------------------------------------- gap 6: energy-table structures

class ReplayQueue(ExecutionChecker):
    """Uses the table's Warped-DMR ReplayQ: one access per issued instruction."""

    events = frozenset({"instr_issued"})
    structures = {"replayq": 1}

    def on_instr_issued(self, warp, instr, mask, now):
        self.port.count_energy("replayq")


def test_a_checker_counts_a_table_structure_it_declares(plugin):
    name = plugin("execution_checker", ReplayQueue)
    rec, = _sync({"sm.execution_checker": name}, ctas=2)
    base, = _sync({}, ctas=2)
    e = rec.stats.energy
    assert e.events["replayq"] == {"access": rec.stats.warp_insts}
    assert e.dynamic_j["replayq"] == pytest.approx(rec.stats.warp_insts * 37.4e-12)   # 40 nm table entry
    assert e.static_j["replayq"] > 0                         # it leaks for the whole launch
    assert "replayq" not in base.stats.energy.events and "replayq" not in base.stats.energy.static_j


def test_energy_declarations_that_clash_with_the_table_are_errors(plugin):
    from tlpsim.timing.plugin import EnergyStructure

    class Clash(ExecutionChecker):
        energy = {"replayq": EnergyStructure(access_pj=1.0, source="test")}

    name = plugin("execution_checker", Clash)
    with pytest.raises(ConfigError, match=r"execution_checker '.*': declares energy structure 'replayq', which the "
                                          r"40nm energy table already has.*`structures = \{'replayq'"):
        _sync({"sm.execution_checker": name}, ctas=1)

    class Missing(ExecutionChecker):
        structures = {"replay_queue": 1}

    name = plugin("execution_checker", Missing)
    with pytest.raises(ConfigError, match=r"uses energy-table structure 'replay_queue', which the 40nm table lacks"):
        _sync({"sm.execution_checker": name}, ctas=1)

    class Undeclared(ExecutionChecker):
        events = frozenset({"kernel_start"})

        def on_kernel_start(self, kernel, now):
            self.port.count_energy("replayq")

    name = plugin("execution_checker", Undeclared)
    with pytest.raises(PortError, match=r"count_energy\('replayq'\) from the execution_checker plug-in .*declares "
                                        r"no such structure"):
        _sync({"sm.execution_checker": name}, ctas=1)


def test_docs_list_exactly_the_energy_tables_structures():
    import re
    from pathlib import Path

    from tlpsim.power.table import available_nodes, node_table

    doc = (Path(__file__).resolve().parents[2] / "docs" / "plugins.md").read_text()
    section = doc.split("## The energy table's structures", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    for node in available_nodes():
        assert listed == set(node_table(node)), node
