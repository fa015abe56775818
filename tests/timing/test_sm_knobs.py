"""SM knobs that the timing model honours (GPGPU-Sim's meaning): register banks and
their ports and mapping, shared-memory banks, dual issue, sub-core, fetch throughput,
SIMT width, the watchdog — each changes what it should, by the amount it should."""

from dataclasses import asdict

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.timing.builder import latency_tables
from tlpsim.timing.regbanks import OperandStats, RegisterBanks
from tlpsim.timing.static import StaticKernel
from tlpsim.trace.format import SHARED_BANK_COUNTS

# one SM, so a launch's cycles follow from its own warps only
ONE_SM = {"gpu.n_sms": 1}

STRIDED_SMEM = r'''
extern "C" __global__ void strided(float* out, int stride) {
    __shared__ float s[2048];
    s[threadIdx.x * stride] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x * stride];
}'''

ILP = r'''
extern "C" __global__ void ilp(float* out, float a, float b) {
    float x = a, y = b, z = a + b, w = a - b;
    #pragma unroll
    for (int k = 0; k < 32; ++k) { x = x * a + b; y = y * b + a; z = z * a - b; w = w * b - a; }
    out[threadIdx.x] = x + y + z + w;
}'''


def _run(src, name, args_fn, grid=(1,), block=(32,), overrides=None):
    cfg = load_config("gtx480", {**ONE_SM, **(overrides or {})})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(src, name)
        rec = k(grid, block, args_fn())
    return rec


def _strided(stride, banks):
    return _run(STRIDED_SMEM, "strided", lambda: (tlpsim.zeros(256, np.float32), np.int32(stride)),
                block=(32,), overrides={"sm.shared_banks": banks})


def test_trace_records_conflict_degree_per_bank_count():
    rec = _strided(2, 32)
    tr = rec.trace
    shared = tr.mem_space == 1
    # words 0, 2, 4, ..., 62 (32 distinct): bank = word mod B, so B/2 banks are used,
    # each by 64/B of the words
    expected = {8: 8, 16: 4, 32: 2, 64: 1}
    for nb in SHARED_BANK_COUNTS:
        assert set(tr.bank_degrees(nb)[shared].tolist()) == {expected[nb]}


def test_shared_banks_knob_sets_the_conflict_replays():
    cycles = {nb: _strided(2, nb).stats for nb in (16, 32, 64)}
    # two shared accesses per warp (a store and a load): conflict cycles = (degree - 1) each
    assert sum(s["smem_bank_conflict_cycles"] for s in cycles[64].per_sm) == 0
    assert sum(s["smem_bank_conflict_cycles"] for s in cycles[32].per_sm) == 2
    assert sum(s["smem_bank_conflict_cycles"] for s in cycles[16].per_sm) == 6
    assert cycles[64].cycles < cycles[32].cycles


def test_shared_banks_must_be_a_recorded_count():
    with pytest.raises(ConfigError, match="sm.shared_banks.*8, 16, 32, 64"):
        load_config("gtx480", {"sm.shared_banks": 128})


def test_rf_banks_changes_cycles():
    base = _run(ILP, "ilp", lambda: (tlpsim.zeros(256, np.float32), np.float32(1.0), np.float32(0.5)),
                block=(256,))
    two = _run(ILP, "ilp", lambda: (tlpsim.zeros(256, np.float32), np.float32(1.0), np.float32(0.5)),
               block=(256,), overrides={"sm.rf_banks": 2})
    conflicts = lambda st: sum(s["rf_bank_conflicts"] for s in st.per_sm)
    assert conflicts(two.stats) > conflicts(base.stats)
    assert two.stats.cycles > base.stats.cycles


def test_bank_mapping_with_and_without_warp_id_and_sub_core():
    shifted = RegisterBanks(16, {"sp": 1}, stats=None)
    assert [shifted.bank_of(3, 0, r) for r in (0, 13, 14)] == [3, 0, 1]      # (slot + reg) mod 16
    plain = RegisterBanks(16, {"sp": 1}, stats=None, use_warp_id=False)
    assert [plain.bank_of(3, 0, r) for r in (0, 13, 14)] == [0, 13, 14]       # reg mod 16
    sub = RegisterBanks(16, {"sp": 1}, stats=None, n_schedulers=4, sub_core=True)
    assert [sub.bank_of(1, s, 3) for s in range(4)] == [0, 4, 8, 12]           # (1+3) mod 4 + 4*sched


def test_write_ports_serialise_same_bank_writes():
    one = RegisterBanks(4, {"sp": 1}, stats=OperandStats(), write_ports=1)
    assert one.write(0, 0, (1,), 10) == 10
    assert one.write(0, 0, (5,), 10) == 11     # bank 1 again in cycle 10: next cycle
    assert one.write(0, 0, (2,), 10) == 10     # another bank: same cycle
    two = RegisterBanks(4, {"sp": 1}, stats=OperandStats(), write_ports=2)
    assert two.write(0, 0, (1,), 10) == 10 and two.write(0, 0, (5,), 10) == 10
    assert two.write(0, 0, (9,), 10) == 11     # third write to bank 1 in one cycle


def test_read_ports_allow_that_many_reads_per_bank_per_cycle():
    two = RegisterBanks(4, {"sp": 4}, stats=OperandStats(), read_ports=2)
    assert two.read(0, 0, "sp", (1, 5), now=10) == 12        # both read at 11: no conflict
    assert two.read(0, 0, "sp", (9,), now=10) == 13           # third read of bank 1 waits a cycle


def test_simt_width_multiplies_initiation_and_adds_passes_to_latency():
    rec = _run(ILP, "ilp", lambda: (tlpsim.zeros(32, np.float32), np.float32(1.0), np.float32(0.5)))
    fn = rec.device._compiled[next(iter(rec.device._compiled))].fn
    full = StaticKernel(fn, latency_tables(load_config("gtx480")))
    half = StaticKernel(fn, latency_tables(load_config("gtx480", {"sm.simt_width": 16})))
    for a, b in zip(full.instrs, half.instrs):
        if a.kind == 0:  # arithmetic
            assert (b.initiation, b.latency) == (2 * a.initiation, a.latency + 1)
        else:
            assert (b.initiation, b.latency) == (a.initiation, a.latency)


def test_dual_issue_issues_independent_instructions_of_one_warp_together():
    args = lambda: (tlpsim.zeros(32, np.float32), np.float32(1.0), np.float32(0.5))
    single = _run(ILP, "ilp", args)
    dual_diff = _run(ILP, "ilp", args, overrides={"sm.issue_width": 2})
    dual_any = _run(ILP, "ilp", args, overrides={"sm.issue_width": 2, "sm.dual_issue_diff_units": False})
    # all arithmetic here is SP: with different-unit dual issue nothing pairs up
    assert dual_diff.stats.cycles == single.stats.cycles
    assert dual_any.stats.cycles < single.stats.cycles
    assert dual_any.stats.warp_insts == single.stats.warp_insts == single.warp_instructions


def test_fetch_throughput_refills_more_warps_per_cycle():
    args = lambda: (tlpsim.zeros(1024, np.float32), np.float32(1.0), np.float32(0.5))
    one = _run(ILP, "ilp", args, block=(1024,))
    four = _run(ILP, "ilp", args, block=(1024,), overrides={"sm.fetch_throughput": 4, "sm.ibuffer_entries": 1})
    one_ib1 = _run(ILP, "ilp", args, block=(1024,), overrides={"sm.ibuffer_entries": 1})
    assert four.stats.cycles < one_ib1.stats.cycles
    assert one.stats.warp_insts == four.stats.warp_insts


def test_sub_core_model_partitions_units():
    args = lambda: (tlpsim.zeros(64, np.float32), np.float32(1.0), np.float32(0.5))
    shared = _run(ILP, "ilp", args, block=(64,))
    split = _run(ILP, "ilp", args, block=(64,), overrides={"sm.sub_core_model": True})
    assert asdict(shared.stats) != asdict(split.stats)
    assert split.stats.warp_insts == shared.stats.warp_insts


def test_watchdog_zero_is_off_and_dense_mode_needs_it():
    cfg = load_config("gtx480", {"monitor.watchdog_cycles": 0})
    assert cfg.monitor.watchdog_cycles == 0
    args = lambda: (tlpsim.zeros(32, np.float32), np.float32(1.0), np.float32(0.5))
    rec = _run(ILP, "ilp", args, overrides={"monitor.watchdog_cycles": 0})
    assert rec.stats.cycles > 0
    with pytest.raises(ConfigError, match="monitor.watchdog_cycles"):
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=True):
            tlpsim.RawKernel(ILP, "ilp")((1,), (32,), args())


def test_unknown_context_switcher_names_the_known_ones():
    from tlpsim.session import build_gpu

    with pytest.raises(ConfigError, match=r"sm.context_switcher: unknown context_switcher 'nope'.*none"):
        build_gpu(load_config("gtx480", {"sm.context_switcher": "nope"}))


def _issue_order(order: str) -> dict[int, list[int]]:
    """Per cycle, the schedulers of the instructions issued, in issue order (2 warps of
    the ILP kernel, one per scheduler; both may issue arithmetic in the same cycle)."""
    from tlpsim.policies.monitor.base import Monitor
    from tlpsim.policies.registry import register, unregister

    seen: dict[int, list[int]] = {}

    @register("monitor", "test_issue_order")
    class IssueOrder(Monitor):
        events = ("instr_issued",)

        def watches(self, instr):
            return True

        def on_instr_issued(self, warp, instr, mask, now):
            seen.setdefault(now, []).append(warp.sched)

    try:
        _run(ILP, "ilp", lambda: (tlpsim.zeros(64, np.float32), np.float32(1.0), np.float32(0.5)), block=(64,),
             overrides={"sm.scheduler_order": order, "monitor.policy": "test_issue_order"})
    finally:
        unregister("monitor", "test_issue_order")
    return seen


def test_scheduler_order_fixed_lets_scheduler_0_go_first_every_cycle():
    both = {c: s for c, s in _issue_order("fixed").items() if len(s) == 2}
    assert len(both) > 20 and all(s == [0, 1] for s in both.values())


def test_scheduler_order_rotate_lets_them_take_turns_by_cycle():
    # GPGPU-Sim 4.x's Issue_Prio: scheduler (cycle mod 2) goes first
    both = {c: s for c, s in _issue_order("rotate").items() if len(s) == 2}
    assert len(both) > 20 and all(s == [c % 2, 1 - c % 2] for c, s in both.items())
    assert {s[0] for s in both.values()} == {0, 1}


def test_scheduler_order_presets():
    # the presets validated against GPGPU-Sim 4.x rotate; the papers' (GPGPU-Sim 3.x) do not
    for preset, order in (("gtx480", "rotate"), ("h200", "rotate"), ("h100", "rotate"), ("tesla_m2050", "fixed"),
                          ("fermi_dmr", "fixed"), ("fermi_rfv", "fixed"), ("gtx980", "fixed"),
                          ("maxwell_gpuduet", "fixed"), ("expars_maxwell", "fixed")):
        assert load_config(preset).sm.scheduler_order == order, preset
    with pytest.raises(ConfigError, match="sm.scheduler_order"):
        load_config("gtx480", {"sm.scheduler_order": "random"})
