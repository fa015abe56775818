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


def test_ptxas_exact_refuses_storages_that_place_registers_by_name(plugin):
    class Mine(BankedRegisterFile):
        pass

    name = plugin("operand_storage", Mine)
    with pytest.raises(ConfigError, match=r"sm\.register_count = 'ptxas_exact' reserves fewer registers than "
                                          r"instructions may name; it needs sm\.operand_storage = 'baseline' "
                                          rf"and sm\.context_switcher = 'none' \(have '{name}', 'none'\)"):
        load_config("h200", {"sm.operand_storage": name})
    # the other modes take any storage
    assert load_config("h200", {"sm.operand_storage": name, "sm.register_count": "ptxas"}).sm.register_count == "ptxas"
