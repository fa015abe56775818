"""`sm.register_count = "ptxas_exact"` (the h200 and h100 presets): the register file
reserves exactly ptxas's per-thread count, so CTAs per SM are the card's, while the
instructions keep the names of the spreading allocation, which may be more where the PTX
allocation needs more registers than ptxas's SASS (docs/plugins.md, "operand storage")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.session import register_numbering
from tlpsim.timing.builder import sm_limits
from tlpsim.timing.occupancy import occupancy
from tlpsim.workloads.registry import load_workloads

sys.path.insert(0, str(Path(__file__).parent))
from test_register_numbering import highest_named, kernels_on  # noqa: E402

# kernel: (ptxas's count for sm_90, the packed allocation, threads, CTAs/SM reserving ptxas's count
# (the card's), CTAs/SM reserving the larger of the two)
EXPECTED = {
    "btree_find": (16, 25, 256, 8, 8),        # 2,048 threads either way
    "btree_range": (17, 30, 256, 8, 8),
    # 48 x 32 = 1,536 per warp: 10 warps per 16,384-register part, 40 per SM = 5 CTAs of 8 warps;
    # 77 x 32 = 2,464 -> 2,560: 6 warps per part, 24 = 3 CTAs (74 in the PTX's own order: the h200's
    # list-scheduled blocks, gpu.block_schedule, hold the hoisted loads' values longer)
    "kmeans_assign": (48, 77, 256, 5, 3),
    # 51 x 32 = 1,632 -> 1,792: 9 per part, 36 warps = 9 CTAs of 4; 80 x 32 = 2,560: 6 per part, 24
    # warps = 6 CTAs (the list order predicates raycast's short branch regions, gpu.block_schedule, and
    # the larger blocks hold hoisted values longer: 56 without that, 57 in the PTX's own order)
    "raycast": (51, 80, 128, 9, 6),
}


@pytest.fixture(scope="module")
def h200_kernels():
    return {rec.kernel: (cfg, rec, ak) for cfg, rec, ak in kernels_on("h200", ("btree", "kmeans", "raycast"))}


def test_h200_reserves_ptxas_count_and_names_the_allocation(h200_kernels):
    assert load_config("h200").sm.register_count == load_config("h100").sm.register_count == "ptxas_exact"
    for kernel, (ptxas, packed, threads, card, larger) in EXPECTED.items():
        cfg, rec, ak = h200_kernels[kernel]
        num = register_numbering(cfg, ak.fn, rec.resources.registers, ak)
        assert (num.compiler_regs, num.allocation_regs, num.rf_regs, num.named_regs, num.sized_by) == (
            ptxas, packed, ptxas, max(ptxas, packed), "ptxas"), kernel
        smem = rec.resources.shared_bytes + rec.shared_mem
        assert rec.block[0] * rec.block[1] * rec.block[2] == threads
        assert occupancy(sm_limits(cfg), num.rf_regs, smem, threads).ctas == card, kernel
        old = load_config("h200", {"sm.register_count": "ptxas"})
        assert occupancy(sm_limits(old), register_numbering(old, ak.fn, ptxas, ak).rf_regs, smem,
                         threads).ctas == larger, kernel


class Seen(ExecutionChecker):
    events = frozenset({"kernel_start"})
    info: list = []

    def on_kernel_start(self, kernel, now):
        type(self).info.append(kernel)


def test_a_timed_launch_runs_at_the_cards_occupancy(plugin):
    Seen.info = []
    cfg = load_config("h200", {"sm.execution_checker": plugin("execution_checker", Seen)})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        result = load_workloads()["kmeans"].execute("tiny")
    info = next(i for i in Seen.info if i.name == "kmeans_assign")
    assert (info.regs_per_thread, info.compiler_regs, info.allocation_regs, info.named_regs,
            info.rf_sized_by) == (48, 48, 77, 77, "ptxas")
    assert highest_named(info.static) + 1 == info.named_regs == info.static.n_regs
    launch = next(r for r in result.launches if r.kernel == "kmeans_assign")
    assert launch.stats.ctas_per_sm_limit == 5 and launch.resources.registers == 48
    assert result.verified


def test_ptxas_exact_refuses_only_storages_that_need_names_inside_the_reservation(plugin):
    from tlpsim.session import build_gpu

    class ByName(BankedRegisterFile):        # keyed by name (banks): any name will do
        pass

    class ByPosition(BankedRegisterFile):    # places registers by their index in the reservation
        register_names = "reserved"

    class Undecided(BankedRegisterFile):
        register_names = "some"

    by_name, by_position, undecided = (plugin("operand_storage", c) for c in (ByName, ByPosition, Undecided))
    assert build_gpu(load_config("h200", {"sm.operand_storage": by_name})).sms
    with pytest.raises(ConfigError, match=r"^sm\.operand_storage: ByPosition declares register_names = 'reserved' "
                                          r"\(it places registers by their position in the RF's reservation\), "
                                          r"but sm\.register_count = 'ptxas_exact' reserves ptxas's count while "
                                          r"instructions may name more \(KernelInfo\.named_regs\); set "
                                          r"sm\.register_count = 'ptxas', or handle every name"):
        build_gpu(load_config("h200", {"sm.operand_storage": by_position}))
    # the other modes reserve every name: the same storage builds
    assert build_gpu(load_config("h200", {"sm.operand_storage": by_position, "sm.register_count": "ptxas"})).sms
    with pytest.raises(ConfigError, match=r"sm\.operand_storage: register_names must be one of named, reserved, "
                                          r"got 'some'"):
        build_gpu(load_config("gtx480", {"sm.operand_storage": undecided}))


def test_a_context_switch_saves_no_more_than_the_reservation():
    """Under ptxas_exact the PTX allocation may keep more values live than ptxas's count;
    `port.live_registers` (what a switcher saves) stops at the registers reserved."""
    from types import SimpleNamespace

    from tlpsim.timing.port import SMPort

    static = SimpleNamespace(live_regs=lambda pc: {-1: 0, 7: 30, 9: 12}[pc])
    warp = SimpleNamespace(pos=0, n=2, pcs=[7, 9], run=SimpleNamespace(static=static,
                                                                     kres=SimpleNamespace(regs_per_thread=20)))
    port = SMPort.__new__(SMPort)
    port._warp = lambda slot: warp
    assert port.live_registers(0) == 20       # 30 live, 20 reserved
    warp.pos = 1
    assert port.live_registers(0) == 12
    warp.pos = 2
    assert port.live_registers(0) == 0


def test_gpgpusim_presets_reserve_ptxas_count():
    """GPGPU-Sim sizes a CTA's registers by ptxas's count (its -v report), so the Fermi and
    Maxwell presets it is checked against reserve exactly that (lcs_bcs page, point 7)."""
    for preset in ("gtx480", "tesla_m2050", "fermi_dmr", "fermi_rfv", "gtx980", "maxwell_gpuduet", "expars_maxwell"):
        assert load_config(preset).sm.register_count == "ptxas_exact", preset

