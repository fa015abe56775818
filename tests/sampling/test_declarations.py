"""The plug-ins' sampling declarations: stationarity, tracked counters, port.settled."""

from __future__ import annotations

import pytest

from tlpsim.errors import ConfigError
from tlpsim.policies.registry import PluginRegistrationError, register, resolve, unregister
from tlpsim.policies.warp.base import WarpScheduler
from tlpsim.sampling import safety
from tlpsim.timing.plugin import Counter, Plugin, check_sampling, stationarity_of
from tlpsim.timing.port import GPUPort, PortError


def test_builtin_declarations():
    assert resolve("warp_scheduler", "gto")[0].stationarity == "stationary"
    assert resolve("cta_scheduler", "lcs")[0].stationarity == "settles"
    assert resolve("cta_scheduler", "lcs_bcs")[0].stationarity == "settles"
    assert resolve("cta_scheduler", "dyncta")[0].stationarity == "non_stationary"
    assert resolve("warp_scheduler", "ccws")[0].sampling_tracked == ("vta_hits",)
    assert Plugin.stationarity == "non_stationary"     # undeclared: never wave-sampled


def test_check_sampling_names_the_plugin_and_the_problem():
    class Bad(Plugin):
        stationarity = "sometimes"

    with pytest.raises(ConfigError, match="mine: stationarity must be one of stationary, settles, non_stationary"):
        check_sampling(Bad, "mine")

    class Untracked(Plugin):
        stationarity = "stationary"
        counters = {"hits": Counter("accesses", "hits")}
        sampling_tracked = ("misses",)

    with pytest.raises(ConfigError, match="names 'misses', which is not one of its counters \\(hits\\)"):
        check_sampling(Untracked, "mine")

    class Level(Plugin):
        counters = {"regs": Counter("registers", "in use", agg="max")}
        sampling_tracked = ("regs",)

    with pytest.raises(ConfigError, match="'regs' is a 'max' level"):
        check_sampling(Level, "mine")

    class Str(Plugin):
        sampling_tracked = "hits"

    with pytest.raises(ConfigError, match="tuple of counter names"):
        check_sampling(Str, "mine")


def test_registration_rejects_a_bad_declaration():
    with pytest.raises(PluginRegistrationError, match="warp_scheduler 'samp_bad'.*stationarity"):
        @register("warp_scheduler", "samp_bad")
        class SampBad(WarpScheduler):
            stationarity = "mostly"
    unregister("warp_scheduler", "samp_bad")


def test_safety_classifies_instances():
    class S(Plugin):
        stationarity = "stationary"
        counters = {"hits": Counter("accesses", "hits")}
        sampling_tracked = ("hits",)

    class T(Plugin):
        stationarity = "settles"

    class N(Plugin):
        pass

    s, t, n = S(), T(), N()
    plugins = [("warp_scheduler.s", s), ("cta_scheduler.t", t), ("monitor.n", n), ("monitor.n", N())]
    assert safety.blockers(plugins) == ["monitor.n"]
    assert safety.settling(plugins) == [("cta_scheduler.t", t)]
    assert safety.tracked(plugins) == [("warp_scheduler.s", "hits")]
    assert stationarity_of(n) == "non_stationary"


class _GPU:
    def __init__(self) -> None:
        self.sms: list = []
        self.settled: set = set()


def test_port_settled_records_the_decision_point_and_refuses_other_plugins():
    class T(Plugin):
        stationarity = "settles"
        plugin_name = "t"

    gpu = _GPU()
    port = GPUPort(gpu, "cta_scheduler")
    t = T()
    port.owner = t
    port.settled(3)
    assert gpu.settled == {(id(t), 3)}

    class S(Plugin):
        stationarity = "stationary"
        plugin_name = "s"

    port.owner = S()
    with pytest.raises(PortError, match="only a plug-in that declares stationarity = \"settles\""):
        port.settled(3)
