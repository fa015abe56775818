"""Plug-in counters as levels (`Counter(agg="max" | "mean")`) and the peak resident
CTAs and warps: exact values on hand-made inputs and on one small run."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.report.metrics import plugin_totals, residency, run_metrics
from tlpsim.timing.plugin import Counter, PluginCounts

STRAIGHT = open(__file__.replace("timing/test_counter_levels.py", "contract/straight.ptx")).read()


def test_counter_aggregation_is_validated():
    with pytest.raises(ConfigError, match="agg must be one of sum, max, mean, got 'avg'"):
        Counter("x", agg="avg")


def test_levels_keep_their_peak_since_a_mark_and_their_integral_over_cycles():
    clock = [0]
    c = PluginCounts({"n": Counter("e"), "peak": Counter("e", agg="max"), "mean": Counter("e", agg="mean")},
                     lambda: clock[0])
    for t, v in ((0, 4), (10, 9), (12, 2)):
        clock[0] = t
        c.n += 1
        c.peak = c.mean = v
    clock[0] = 20
    # mean: 4 for 10 cycles, 9 for 2, 2 for 8 = 40 + 18 + 16
    assert c.aggregated() == {"n": 3, "peak": 9, "mean": 74}
    assert c.peak == 2                      # the plug-in reads back what it wrote
    c.mark()                                # a new launch: the peak restarts from the current level
    assert c.aggregated()["peak"] == 2


def test_run_totals_sum_counts_take_the_highest_peak_and_weight_means_by_cycles():
    stats = [{"cycles": 100, "plugins": {"p.x": {"n": 3, "peak": 9, "mean": 2.0}},
              "plugin_units": {"p.x": {"n": "e", "peak": "regs", "mean": "regs"}},
              "plugin_aggs": {"p.x": {"peak": "max", "mean": "mean"}}},
             {"cycles": 300, "plugins": {"p.x": {"n": 4, "peak": 7, "mean": 6.0}},
              "plugin_units": {"p.x": {"n": "e", "peak": "regs", "mean": "regs"}},
              "plugin_aggs": {"p.x": {"peak": "max", "mean": "mean"}}}]
    totals, units = plugin_totals(stats)
    assert totals == {"p.x": {"n": 7, "peak": 9, "mean": 5.0}}
    assert units == {"p.x": {"n": "e", "peak": "regs (peak)", "mean": "regs (mean)"}}


def test_the_residency_cell_shows_the_peak_only_beyond_the_limit():
    assert residency(6, "threads", 6, 48) == "6 (threads)"
    assert residency(2, "regs", 3, 24) == "3 peak, 24 warps (2 regs)"


class Levels(ExecutionChecker):
    """Level = the pc of the last issued instruction; logs (cycle, pc)."""

    events = frozenset({"instr_issued", "kernel_start", "kernel_end"})
    counters = {"pc_peak": Counter("pc", agg="max"), "pc_mean": Counter("pc", agg="mean"),
                "issued": Counter("warp instructions")}
    log: list = []

    def on_kernel_start(self, kernel, now):
        type(self).log.append(("start", now))

    def on_kernel_end(self, kernel, now):
        type(self).log.append(("end", now))

    def on_instr_issued(self, warp, instr, mask, now):
        type(self).log.append((instr.pc, now))
        self.counts.issued += 1
        self.counts.pc_peak = self.counts.pc_mean = instr.pc


def test_level_counters_of_a_run_are_exact(plugin):
    Levels.log = []
    name = plugin("execution_checker", Levels)
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True, "sm.execution_checker": name})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        out = tlpsim.zeros(32, np.int32)
        rec = tlpsim.RawModule(STRAIGHT).get_function("straight")((1,), (32,), (out,))
    st = rec.stats
    key = f"execution_checker.{name}"
    issues = [(pc, t) for pc, t in Levels.log if pc not in ("start", "end")]
    end = dict((k, t) for k, t in Levels.log if k in ("start", "end"))["end"]
    area = sum(pc * (nxt - t) for (pc, t), (_, nxt) in zip(issues, issues[1:] + [(0, end)]))
    assert st.plugins[key]["issued"] == 10 and st.plugins[key]["pc_peak"] == 9
    assert st.plugins[key]["pc_mean"] == pytest.approx(area / end)
    assert st.plugin_aggs == {key: {"pc_peak": "max", "pc_mean": "mean"}}
    assert st.peak_resident_ctas == 1 and st.peak_resident_warps == 1
    assert st.per_sm[0]["peak_resident_ctas"] == 1
    m = run_metrics({"stats": [st.to_dict()]})
    assert m[f"plugin.{key}.pc_peak"] == 9
