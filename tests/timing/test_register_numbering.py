"""One register numbering (issue 25, gap 1): the registers instructions name are exactly
the registers the RF reserves per thread, on every preset. The full check over every
built-in workload is benchmarks/register_numbering.py; here a representative subset."""

from __future__ import annotations

import pytest

import tlpsim
from tlpsim.config.loader import list_presets, load_config
from tlpsim.errors import ConfigError, KernelError
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.session import register_numbering, rf_bank_period
from tlpsim.timing.builder import latency_tables, sm_limits
from tlpsim.timing.occupancy import occupancy
from tlpsim.timing.static import StaticKernel
from tlpsim.workloads.registry import load_workloads

# spmv: ptxas's count far above the packed allocation (48 vs 21/22 at sm_80); btree: the
# packed allocation above ptxas's (the documented exception); sgemm_naive: a loop nest
SUBSET = ("spmv", "btree", "sgemm_naive")


def highest_named(sk: StaticKernel) -> int:
    return max(r for ins in sk.instrs for r in ins.src_regs + ins.dst_regs)


def kernels_on(preset: str, names=SUBSET):
    """(config, launch record, analyzed kernel) of every distinct kernel of `names` at tiny,
    compiled as `preset` compiles them."""
    cfg = load_config(preset)
    out = []
    with tlpsim.Device(cfg, trace=False) as dev:
        for name in names:
            seen = set()
            for rec in load_workloads()[name].execute("tiny").launches:
                if rec.mangled not in seen:
                    seen.add(rec.mangled)
                    out.append((cfg, rec, dev.analyzed_kernel(rec.mangled)))
    return out


@pytest.fixture(scope="module")
def by_preset():
    return {p: kernels_on(p) for p in list_presets()}


def test_instructions_name_exactly_the_registers_the_rf_reserves(by_preset):
    for preset, kernels in by_preset.items():
        for cfg, rec, ak in kernels:
            ptxas = rec.resources.registers
            num = register_numbering(cfg, ak.fn, ptxas, ak)
            sk = StaticKernel(ak.fn, latency_tables(cfg), analyzed=num.analyzed, allocation=num.allocation)
            where = f"{preset}: {rec.kernel}"
            assert highest_named(sk) + 1 == num.named_regs == sk.n_regs, where
            assert num.named_regs == max(ptxas, num.allocation_regs), where
            if cfg.sm.register_count == "ptxas_exact":   # every preset: the card's reservation, whatever is named
                assert num.rf_regs == ptxas and num.sized_by == "ptxas", where
                continue
            assert num.rf_regs == num.named_regs, where
            assert num.sized_by == ("ptxas" if ptxas >= num.allocation_regs else "allocation"), where
            assert num.allocation_regs == ak.allocation.n_regs and num.analyzed.budget == (ptxas,
                                                                                         rf_bank_period(cfg.sm))
            # CTAs/SM: today's (ptxas's count) unless the packed allocation needs more
            threads = rec.block[0] * rec.block[1] * rec.block[2]
            smem = rec.resources.shared_bytes + rec.shared_mem
            today = occupancy(sm_limits(cfg), ptxas, smem, threads).ctas
            now = occupancy(sm_limits(cfg), num.rf_regs, smem, threads).ctas
            assert now == today or num.sized_by == "allocation", where


def test_the_documented_exception_and_the_spmv_counts(by_preset):
    """gtx480 reserves ptxas's count (GPGPU-Sim's); "ptxas" reserves the packed allocation
    where it needs more (btree's kernels)."""
    got = {rec.kernel: register_numbering(cfg, ak.fn, rec.resources.registers, ak)
           for cfg, rec, ak in by_preset["gtx480"]}
    assert {k: (n.compiler_regs, n.allocation_regs, n.rf_regs, n.named_regs) for k, n in got.items()} == {
        "spmv_csr_scalar": (61, 21, 61, 61), "spmv_csr_vector": (61, 22, 61, 61),
        "btree_find": (13, 25, 13, 25), "btree_range": (14, 30, 14, 30), "sgemm_naive": (57, 43, 57, 57)}
    alt = load_config("gtx480", {"sm.register_count": "ptxas"})
    got = {rec.kernel: register_numbering(alt, ak.fn, rec.resources.registers, ak)
           for _, rec, ak in by_preset["gtx480"]}
    assert {k: (n.rf_regs, n.sized_by) for k, n in got.items()} == {
        "spmv_csr_scalar": (61, "ptxas"), "spmv_csr_vector": (61, "ptxas"), "btree_find": (25, "allocation"),
        "btree_range": (30, "allocation"), "sgemm_naive": (57, "ptxas")}


def test_allocation_mode_numbers_and_sizes_by_the_packed_allocation(by_preset):
    for cfg, rec, ak in by_preset["gtx480"]:
        alt = load_config("gtx480", {"sm.register_count": "allocation"})
        num = register_numbering(alt, ak.fn, rec.resources.registers, ak)
        assert num.allocation is ak.allocation and num.analyzed is ak and num.sized_by == "allocation"
        assert num.rf_regs == ak.allocation.n_regs


def test_a_bad_register_count_names_the_key():
    with pytest.raises(ConfigError, match=r"sm\.register_count: Input should be 'ptxas', 'ptxas_exact' or 'allocation'"):
        load_config("gtx480", {"sm.register_count": "packed"})


class Seen(ExecutionChecker):
    events = frozenset({"kernel_start"})
    info: list = []

    def on_kernel_start(self, kernel, now):
        type(self).info.append(kernel)


@pytest.mark.parametrize("mode", ["ptxas", "allocation"])
def test_kernel_info_carries_both_counts(plugin, mode):
    Seen.info = []
    cfg = load_config("gtx480", {"sm.register_count": mode,
                                 "sm.execution_checker": plugin("execution_checker", Seen)})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        result = load_workloads()["spmv"].execute("tiny")
    infos = list({i.kid: i for i in Seen.info}.values())  # every SM's checker sees each launch
    assert [(i.name, i.compiler_regs, i.allocation_regs) for i in infos] == [
        ("spmv_csr_scalar", 61, 21), ("spmv_csr_vector", 61, 22)]
    for info, rec in zip(infos, result.launches):
        assert info.compiler_regs == rec.resources.registers
        assert info.allocation_regs == info.static.analyzed.packed_allocation.n_regs
        assert info.regs_per_thread == (info.compiler_regs if mode == "ptxas" else info.allocation_regs)
        assert info.rf_sized_by == mode
        assert highest_named(info.static) + 1 == info.regs_per_thread
        assert info.analyzed is info.static.analyzed
    # the RF's size sets occupancy: 61 registers x 256 threads (cuda11, the preset's toolchain) allow 2 CTAs of the GTX480's
    # 32768 registers; 24 (22 rounded up to 4) allow 5
    assert result.launches[0].stats.ctas_per_sm_limit == (2 if mode == "ptxas" else 5)


def test_an_allocation_that_never_fits_says_why():
    # fermi_dmr's 16384 registers hold a 256-thread CTA of ptxas's 63 registers (cuda11, capped at 63), which
    # the preset reserves, not of the 74 the packed allocation of kmeans_assign needs, which "ptxas" reserves
    cfg = load_config("fermi_dmr", {"sm.register_count": "ptxas"})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        with pytest.raises(KernelError, match=r"kernel kmeans_assign never fits on an SM \(limited by regs: 74 "
                                              r"regs/thread.*allocation needs 74 registers/thread, more than "
                                              r"ptxas's 63, and nothing is spilled \(sm.register_count\)"):
            load_workloads()["kmeans"].execute("tiny")


def test_analyze_command_reports_the_timing_models_numbering():
    """`tlpsim analyze --config P` compiles as P does and analyses the registers the RF
    reserves on P; the launch records on a P device agree."""
    import json

    from click.testing import CliRunner

    from tlpsim.cli_analyze import analyze_cmd

    for preset in ("gtx480", "maxwell_gpuduet"):
        res = CliRunner().invoke(analyze_cmd, ["spmv", "--config", preset, "--json"])
        assert res.exit_code == 0, res.output
        out = json.loads(res.output)
        g = load_config(preset).gpu
        assert out["compile"]["toolchain"] == g.toolchain == "cuda11"
        assert out["compile"]["arch"] == g.cuda11_arch
        by_kernel = {rep["mangled"]: rep for rep in out["kernels"]}
        for cfg, rec, ak in kernels_on(preset, ("spmv",)):
            reg = by_kernel[rec.mangled]["registers"]
            assert reg["ptxas"] == rec.resources.registers, preset
            assert reg["ours"] == max(reg["ptxas"], reg["packed"]) == \
                register_numbering(cfg, ak.fn, reg["ptxas"], ak).rf_regs, preset
            assert reg["packed"] == ak.allocation.n_regs
