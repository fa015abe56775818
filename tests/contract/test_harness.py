"""The conformance harness catches what it promises to: a plug-in whose choices
change from run to run, one that never lets a warp go, and it names them."""

from __future__ import annotations

import random

import pytest

from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register, unregister
from tlpsim.policies.warp.gto import GreedyThenOldest
from tlpsim.testing import ConformanceError, check_plugin


class Coin(GreedyThenOldest):
    """Picks a ready warp at random, unseeded: not deterministic."""

    def choose(self, ready, now):
        return random.choice(list(ready))


class Jail(ExecutionChecker):
    """Holds every warp forever."""

    events = frozenset({"warp_started"})

    def on_warp_started(self, warp, now):
        self.port.hold_warp(warp.slot)


@pytest.fixture
def registered():
    register("warp_scheduler", "harness_coin")(Coin)
    register("execution_checker", "harness_jail")(Jail)
    yield
    unregister("warp_scheduler", "harness_coin")
    unregister("execution_checker", "harness_jail")


def test_a_random_scheduler_fails_determinism_and_dense(registered):
    random.seed()
    rep = check_plugin("warp_scheduler", "harness_coin", workloads=["reduction"],
                       checks=["verify", "dense", "deterministic"])
    failed = {c for _, c, _ in rep.failures}
    assert failed <= {"dense", "deterministic"} and "deterministic" in failed
    with pytest.raises(ConformanceError, match="(?s)harness_coin.*statistics differ"):
        rep.raise_for_failures()


def test_a_plugin_that_never_releases_a_warp_fails_termination_naming_the_hold(registered):
    rep = check_plugin("execution_checker", "harness_jail", workloads=["vecadd"],
                       overrides={"monitor.watchdog_cycles": 1000}, checks=["terminates"])
    (workload, check, message), = rep.failures
    assert (workload, check) == ("vecadd", "terminates")
    assert "hold by the execution_checker plug-in" in message and "warp 0" in message


def test_unknown_checks_and_points_are_errors():
    from tlpsim.errors import TlpsimError

    with pytest.raises(TlpsimError, match="unknown check"):
        check_plugin("warp_scheduler", "gto", checks=["speed"])
    with pytest.raises(TlpsimError, match="unknown extension point"):
        check_plugin("warp_sched", "gto")


# spmv's 48-register CTAs (CUDA 13.5's ptxas) leave spare RF for the contract switcher's
# saved contexts; under gtx480's own toolchain (cuda11: 61 registers) two CTAs fill the RF
CUDA13 = {"gpu.toolchain": "cuda13"}


def test_contexts_moved_through_the_rf_ports_count_the_same_dense_and_skip_ahead():
    # transfer("rf") keeps every operand collector waiting on the reserved bank cycles:
    # skip-ahead sleeps through them and must count the refused issue attempts
    # (collector_full) the dense run makes every cycle (spmv: 20,167 vs 169,981 before)
    from pathlib import Path

    duet = str(Path(__file__).parent / "plugins" / "duet_like.py")
    rep = check_plugin("context_switcher", "contract_duet", {"active_warps": 8, "bytes_per_cycle": 32, "storage": "rf"},
                       plugins=[duet], workloads=["spmv"], checks=["terminates", "dense", "invariants"],
                       overrides=CUDA13)
    assert rep.ok, rep.summary()
    # spread register numbering (issue 25), issue 29's front end; then issue 29's ID_OC stage
    # (33862, 44412 before): memory collectors are taken a cycle after issue and the LD/ST
    # queue holds ID_OC + 2 collectors + OC_EX (4, was 2), so more of spmv's loads are in
    # flight, while ID_OC_MEM takes one memory instruction a cycle from both schedulers
    # (without that limit: 33466, 46203); then issue 29's L1 miss path (34337, 44698 before):
    # replies wait a cycle in the cluster's response FIFO, the loads a fill completes leave
    # through the LD/ST writeback register one a cycle, and the L2 looks each sector up;
    # then the crossbar's booksim pipeline, icnt.latency 2 -> 5 (34958, 45150 before); then
    # GPGPU-Sim's per-sector read replies and write acks and the switch's speed-up of 2
    # (35473, 45951 before); then gtx480's schedulers taking turns at issuing first,
    # sm.scheduler_order = "rotate" (34579, 44627 before)
    assert rep.cycles["spmv"] == [35187, 45387]
