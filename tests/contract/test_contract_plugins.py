"""The six contract plug-ins (tests/contract/plugins/): one per mechanism class of
the papers, each a test of the SM port with an exact, hand-computed effect on a
hand-written PTX kernel, and each passing the conformance harness.

The kernels (straight.ptx, loaduse.ptx) are small enough to follow by hand. The
analyses' allocator gives straight.ptx five physical registers:
%rd1 -> 0,1  %r1 -> 2  %r2 -> 3  %r3 -> 4  %r4 -> 4  %rd2 -> 0,1  %rd3 -> 2,3, so its
ten instructions read and write (pc: reads -> writes)

    0 ld.param        -> 0,1        5 cvta  0,1     -> 0,1
    1 mov %tid.x      -> 2          6 mul   2       -> 2,3
    2 add   2         -> 3          7 add   0,1,2,3 -> 0,1
    3 mul   3,2       -> 4          8 st    0,1,4
    4 add   4,3       -> 4          9 ret

and the release points free 3 after pc 4, 2,3 after pc 7 and 0,1,4 after pc 8.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import TlpsimError
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.external import activate
from tlpsim.policies import registry
from tlpsim.policies.registry import register, unregister
from tlpsim.testing import Target, check_targets

HERE = Path(__file__).parent
PLUGINS = sorted(str(p) for p in (HERE / "plugins").glob("*_like.py"))
STRAIGHT = (HERE / "straight.ptx").read_text()
LOADUSE = (HERE / "loaduse.ptx").read_text()
SKIP0 = (HERE / "skip0.ptx").read_text()
activate(PLUGINS)


def _run(kernel: str, threads: int, overrides: dict, ctas: int = 1):
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True, **overrides})
    n = ctas * threads
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        if kernel == "straight":
            out = tlpsim.zeros(n, np.int32)
            rec = tlpsim.RawModule(STRAIGHT).get_function("straight")((ctas,), (threads,), (out,))
            t = np.arange(threads)                 # every CTA writes out[threadIdx.x]
            assert (out.get()[:threads] == (t + 7) * t + t + 7).all() and not out.get()[threads:].any()
        else:
            a = tlpsim.asarray(np.arange(n, dtype=np.int32))
            out = tlpsim.zeros(n, np.int32)
            rec = tlpsim.RawModule(LOADUSE).get_function("loaduse")((ctas,), (threads,), (a, out))
            assert (out.get()[:threads] == 2 * np.arange(threads)).all()
    return rec


def _counts(rec, key):
    return rec.stats.plugins[key]


def _mem_requests(rec):
    return sum(s["mem_requests"] for s in rec.stats.per_sm)


def test_lcs_like_throttle_holds_dispatch_at_floor_of_sum_over_max():
    cls = registry.get("cta_scheduler", "contract_lcs")
    cls.decisions, cls.admissions = [], []
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True, "gpu.cta_scheduler": "contract_lcs"})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        out = tlpsim.zeros(16 * 32, np.int32)
        rec = tlpsim.RawModule(SKIP0).get_function("skip0")((16,), (32,), (out, np.int32(40)))
    want = np.tile(np.arange(32) + 120, 16)
    want[:32] = 0
    assert (out.get() == want).all()
    (sm, kid, at, insts, limit), = cls.decisions            # one SM, one kernel: one decision
    # CTA 0 retires first, after its 4 instructions (mov, setp, bra, ret); greedy-then-oldest
    # favoured it, so the seven other resident CTAs have issued fewer: Eq. 1 gives sum // 4 < 8
    assert len(insts) == 8 and max(insts) == 4
    assert limit == sum(insts) // 4 < 8
    after = [resident for s, k, t, resident in cls.admissions if t > at]
    assert after and max(after) <= limit                      # dispatch held above the limit from then on
    assert len(cls.admissions) == 16
    assert _counts(rec, "cta_scheduler.contract_lcs") == {"throttled_sms": 1, "limit_sum": limit}


def test_expars_like_storage_charges_scratchpad_cycles_for_high_registers():
    base = _run("straight", 32, {})
    same = _run("straight", 32, {"sm.operand_storage": {"impl": "contract_expars", "threshold": 8}})
    assert same.stats.cycles == base.stats.cycles             # ptxas's 8 registers: none >= 8, the baseline exactly
    assert _counts(same, "operand_storage.contract_expars") == {"spm_reads": 0, "spm_writes": 0, "spm_cycles": 0}
    rec = _run("straight", 32, {"sm.operand_storage": {"impl": "contract_expars", "threshold": 3,
                                                       "cycles_per_access": 4}})
    # registers spread over ptxas's 8: %rd1 0-1, %r1 2, %r2 3, %r3 4, %r4 5, %rd2 6-7, %rd3 0-1.
    # Reads of registers >= 3: pc3 (3), pc4 (4,3), pc7 (6,7), pc8 (6,7,5) = 8; writes: pc2 (3),
    # pc3 (4), pc4 (5), pc5 (6,7), pc7 (6,7) = 7; each 4 bank cycles
    assert _counts(rec, "operand_storage.contract_expars") == {"spm_reads": 8, "spm_writes": 7, "spm_cycles": 60}
    assert rec.stats.cycles > base.stats.cycles


class IssueLog(ExecutionChecker):
    events = frozenset({"instr_issued"})
    log: list = []

    def on_instr_issued(self, warp, instr, mask, now):
        type(self).log.append((warp.gwarp, instr.pc, now))


@pytest.fixture
def issue_log():
    register("execution_checker", "contract_issue_log")(IssueLog)
    IssueLog.log = []
    yield IssueLog.log
    unregister("execution_checker", "contract_issue_log")


def test_regless_like_storage_holds_warps_until_their_region_is_staged(issue_log):
    cls = registry.get("operand_storage", "contract_regless")
    cls.staged = []
    base = _run("loaduse", 64, {})
    rec = _run("loaduse", 64, {"sm.operand_storage": "contract_regless", "sm.execution_checker": "contract_issue_log"})
    # loaduse.ptx has two regions: [0, 7) with no inputs and [7, 12) ending at the load's use, whose
    # six input registers (%rd2 -> 2, %rd4 -> 2, %r1, %r2) are staged: 6 lines of 128 B per warp
    assert _counts(rec, "operand_storage.contract_regless")["preloads"] == 2
    assert _counts(rec, "operand_storage.contract_regless")["preload_bytes"] == 2 * 6 * 128
    assert _mem_requests(rec) == _mem_requests(base) + 2 * 6
    for gwarp, region, asked, arrived in cls.staged:
        assert region == 1 and arrived > asked
        first = min(t for w, pc, t in issue_log if w == gwarp and pc == 7)
        assert first >= arrived                                # the region's first instruction waited


def test_rfv_like_pool_allocates_at_writes_and_frees_at_release_points():
    base = _run("straight", 32, {})
    for pool in (256, 6):
        rec = _run("straight", 32, {"sm.operand_storage": {"impl": "contract_rfv", "pool_entries": pool}})
        # registers spread over ptxas's 8: %rd1 0-1, %r1 2, %r2 3, %r3 4, %r4 5, %rd2 6-7, %rd3 0-1.
        # allocations: pc0 (0,1), pc1 (2), pc2 (3), pc3 (4), pc4 (5), pc5 (6,7), pc6 (0,1: freed after
        # pc5) = 10; releases 3,4 + 0,1 + 2 + 0,1 + 5,6,7 = 10; at most 6 mapped (pc4 maps 5 before
        # freeing 3 and 4); nothing left at exit
        assert _counts(rec, "operand_storage.contract_rfv") == {
            "allocations": 10, "releases": 10, "peak_entries": 6, "waits": 0, "freed_at_exit": 0}
        assert rec.stats.cycles == base.stats.cycles           # the pool never runs short
    with pytest.raises(TlpsimError, match="warp"):            # 5 entries cannot hold pc4's six registers
        _run("straight", 32, {"sm.operand_storage": {"impl": "contract_rfv", "pool_entries": 5},
                              "monitor.watchdog_cycles": 2000})
    # the packed numbering (sm.register_count = allocation), where pc4 writes the register pc3's
    # result frees: two warps in 9 entries, one waits at pc3 (its fifth register) until the
    # other frees 3 after pc4
    two = _run("straight", 64, {"sm.operand_storage": {"impl": "contract_rfv", "pool_entries": 9},
                                "sm.register_count": "allocation"})
    c = _counts(two, "operand_storage.contract_rfv")
    assert c["allocations"] == c["releases"] == 12 and c["peak_entries"] == 9 and c["waits"] > 0


def test_duet_like_switcher_moves_live_registers_of_memory_blocked_warps(issue_log):
    rec = _run("loaduse", 64, {"sm.context_switcher": "contract_duet", "sm.execution_checker": "contract_issue_log"})
    # one warp runs at a time. w0 blocks on its global load at pc7 with 6 live registers (768 B):
    # out, and w1 (not started: 0 B) in. w1 blocks the same way: out (768 B), w0 back in (768 B).
    # w0 finishes: w1 back in (768 B). Scratchpad holds both saved contexts at once (1536 B).
    assert _counts(rec, "context_switcher.contract_duet") == {
        "switch_outs": 2, "switch_ins": 3, "bytes_moved": 768 * 4, "peak_saved": 1536}
    w0_load = next(t for w, pc, t in issue_log if w == 0 and pc == 6)
    assert min(t for w, pc, t in issue_log if w == 1) > w0_load   # w1 ran only once w0 was switched out


@pytest.mark.parametrize("threads,expect", [(16, {"intra_checks": 7, "inter_checks": 0, "unchecked": 0}),
                                            (32, None)])
def test_dmr_like_checker_uses_idle_lanes_or_an_idle_unit(threads, expect):
    rec = _run("straight", threads, {"sm.execution_checker": "contract_dmr"})
    c = _counts(rec, "execution_checker.contract_dmr")
    # seven arithmetic instructions (pc1-7); 16 threads leave half the lanes idle for each
    if expect is not None:
        assert c == expect
    else:
        assert c["intra_checks"] == 0 and c["inter_checks"] + c["unchecked"] == 7 and c["inter_checks"] >= 6


def test_the_contract_plugins_pass_the_conformance_harness():
    targets = [Target.plugin("cta_scheduler", "contract_lcs"),
               Target.plugin("operand_storage", "contract_expars", {"threshold": 8}),
               Target.plugin("operand_storage", "contract_regless"),
               Target.plugin("operand_storage", "contract_rfv", {"pool_entries": 896}),
               Target.plugin("context_switcher", "contract_duet", {"active_warps": 24}),
               Target.plugin("execution_checker", "contract_dmr")]
    reports = check_targets(targets, plugins=PLUGINS, pure_python_workloads=("vecadd",))
    assert all(r.ok for r in reports), "\n".join(r.summary() for r in reports)
