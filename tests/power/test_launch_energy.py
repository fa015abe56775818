"""Energy of real timing runs: the record on LaunchStats matches the launch's own
counters exactly, the RF write count is the instructions' destination registers,
table overrides act in proportion, and the figure/CLI paths work."""

from dataclasses import asdict

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.power.table import node_table
from tlpsim.session import build_gpu
from tlpsim.timing.builder import latency_tables
from tlpsim.timing.static import StaticKernel

KERNEL = r'''
extern "C" __global__ void saxpy_smem(const float* x, float* y, float a) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = x[i];
    __syncthreads();
    y[i] = a * s[threadIdx.x ^ 1] + y[i];
}'''


@pytest.fixture(scope="module")
def traced():
    n, block = 128 * 30, 128
    with tlpsim.Device() as dev:
        k = tlpsim.RawKernel(KERNEL, "saxpy_smem")
        rec = k((n // block,), (block,), (tlpsim.asarray(np.arange(n, dtype=np.float32)),
                                          tlpsim.zeros(n, np.float32), np.float32(2.0)))
        ck = dev._compiled[(id(k.program.module), k.kernel.name)]
    return ck, rec


def _run(traced, overrides=()):
    ck, rec = traced
    cfg = load_config("gtx480", list(overrides))
    gpu = build_gpu(cfg)
    sk = StaticKernel(ck.fn, latency_tables(cfg), ck.oc.space_of_access)
    gpu.launch(sk, rec.trace, rec.resources.registers, rec.resources.shared_bytes)
    (st,) = gpu.run()
    return st, sk, rec


def test_register_reads_and_writes_are_the_instructions_operands(traced):
    st, sk, rec = _run(traced)
    pcs = np.asarray(rec.trace.pc)
    executed = np.bincount(pcs, minlength=len(sk.instrs))
    reads = sum(int(n) * len(si.src_regs) for n, si in zip(executed, sk.instrs))
    writes = sum(int(n) * len(si.dst_regs) for n, si in zip(executed, sk.instrs))
    assert sum(s["rf_reads"] for s in st.per_sm) == reads
    assert sum(s["rf_writes"] for s in st.per_sm) == writes > 0
    assert st.energy.events["rf_bank"]["access"] == (reads + writes) * 8


def test_record_matches_the_launch_counters(traced):
    st, _, rec = _run(traced)
    e = st.energy
    ps = st.per_sm
    assert e.technology_node == "40nm"
    assert e.seconds == pytest.approx(st.cycles / 700e6)
    assert e.events["decode"] == {"access": st.warp_insts}
    assert e.events["smem"]["crossbar"] == sum(s["smem_accesses"] + s["smem_bank_conflict_cycles"] for s in ps)
    assert e.events["icnt"] == {"flit": st.components["icnt_up_flits"] + st.components["icnt_down_flits"]}
    t = node_table("40nm")
    # no gating on Fermi: 32 banks of 4 KB per SM leak for the whole launch
    assert e.static_j["rf_bank"] == pytest.approx(15 * 32 * st.cycles / 700e6 * t["rf_bank"]["leakage_mw_per_bank"] * 1e-3)
    assert e.static_j["sm_core"] == pytest.approx(15 * st.cycles / 700e6 * t["sm_core"]["leakage_mw_per_bank"] * 1e-3)
    # GPUWattch's constant powers: idle SMs (no resident warps) and the chip's 11 W
    busy = sum(s["issue_slots"] for s in ps) / 2
    assert e.static_j["sm_idle"] == pytest.approx((15 * st.cycles - busy) / 700e6 * 1.59)
    assert e.static_j["gpu_const"] == pytest.approx(st.cycles / 700e6 * 11.0)
    assert e.total_j == pytest.approx(sum(e.dynamic_j.values()) + sum(e.static_j.values()))


def test_ideal_gating_powers_the_resident_ctas_registers(traced):
    st, _, rec = _run(traced, ["power.gate_unused=true"])
    regs = -(-rec.resources.registers // 4) * 4 * 128       # rounded to 4 per thread, 128 threads
    cta_cycles = sum(s["resident_cta_cycles"] for s in st.per_sm)
    assert cta_cycles > 0
    t = node_table("40nm")
    assert st.energy.static_j["rf_bank"] == pytest.approx(cta_cycles * regs * 4 / 4096 / 700e6 *
                                                          t["rf_bank"]["leakage_mw_per_bank"] * 1e-3)
    smem = rec.resources.shared_bytes
    assert st.energy.static_j["smem"] == pytest.approx(cta_cycles * smem / 1536 / 700e6 *
                                                       t["smem"]["leakage_mw_per_bank"] * 1e-3)


def test_a_table_override_changes_the_energy_in_proportion(traced):
    base, _, _ = _run(traced)
    st, _, _ = _run(traced, ["power.table.rf_bank.access_energy_pj=9.36", "power.table.sm_core.leakage_mw_per_bank=0"])
    assert st.cycles == base.cycles
    assert st.energy.dynamic_j["rf_bank"] == pytest.approx(2 * base.energy.dynamic_j["rf_bank"])
    assert st.energy.static_j["sm_core"] == 0.0
    for k in base.energy.dynamic_j:
        if k != "rf_bank":
            assert st.energy.dynamic_j[k] == base.energy.dynamic_j[k], k
    assert st.energy.static_j["rf_bank"] == base.energy.static_j["rf_bank"]


def test_technology_node_selects_the_table(traced):
    a, _, _ = _run(traced)
    b, _, _ = _run(traced, ["power.technology_node=28nm"])
    assert b.energy.dynamic_j["rf_bank"] == pytest.approx(a.energy.dynamic_j["rf_bank"] * 3.276 / 4.68)


def test_disabled_power_leaves_no_record(traced):
    st, _, _ = _run(traced, ["power.enabled=false"])
    assert st.energy is None
    assert "energy" in asdict(st)


def test_figure_and_cli(traced, tmp_path):
    from click.testing import CliRunner

    from tlpsim.cli import main
    from tlpsim.report.energy_plot import energy_bars, stack_order

    st, _, _ = _run(traced)
    order = stack_order({"a": st.energy})
    assert order[0] == max(order, key=st.energy.structure_j)
    assert set(order) <= set(st.energy.dynamic_j) | set(st.energy.static_j)
    png = energy_bars({"a": st.energy, "b": st.energy}, tmp_path / "e.png", normalise=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "run.png"
    res = CliRunner().invoke(main, ["run", "vecadd", "--size", "tiny", "--mode", "timing", "--stats-out",
                                    str(tmp_path / "s.json"), "--energy-plot", str(out)])
    assert res.exit_code == 0, res.output
    assert "average power" in res.output and out.read_bytes()[:4] == b"\x89PNG"
