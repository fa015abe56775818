"""DYNCTA (Kayiran et al. PACT'13): the per-period rule and CTA pausing through
warp holds, on hand-made windows and CTA views."""

from __future__ import annotations

from fakes import FakeGPUPort, cta, warp

from tlpsim.config.loader import load_config
from tlpsim.policies.cta.dyncta import DynCTA, DynCTAParams, next_n
from tlpsim.timing.views import KernelInfo, SMWindow, WindowCounters

P = DynCTAParams()


def test_the_rule_of_one_period():
    assert next_n(3, c_idle=16, c_mem=1000, t_max=6, p=P) == 4      # idle wins over memory
    assert next_n(3, c_idle=0, c_mem=127, t_max=6, p=P) == 4        # memory lightly loaded
    assert next_n(3, c_idle=0, c_mem=128, t_max=6, p=P) == 3        # between the thresholds
    assert next_n(3, c_idle=0, c_mem=384, t_max=6, p=P) == 3
    assert next_n(3, c_idle=0, c_mem=385, t_max=6, p=P) == 2        # congested
    assert next_n(6, 100, 0, t_max=6, p=P) == 6 and next_n(1, 0, 2000, t_max=6, p=P) == 1


def _window(idle: int, mem: int, n_sms: int = 1, some_mem: int | None = None) -> WindowCounters:
    """A period with `idle` IDLE cycles and `mem` cycles where all warps waited on memory
    (C_mem); `some_mem` MEM_STALL cycles (some warp waiting, default: the same)."""
    some = mem if some_mem is None else some_mem
    sms = [SMWindow(k, {"active": 2048 - idle - some, "idle": idle, "mem_stall": some, "core_stall": 0}, 0, 0, 0, 0,
                    {}, 0, 0, 0, 0, 0, 0, 0, mem_wait_cycles=mem) for k in range(n_sms)]
    return WindowCounters(0, 2047, sms, 0, 0, 0, 0, 0, {})


def test_the_parameters_are_kayirans():
    assert (P.window_cycles, P.t_idle, P.t_mem_low, P.t_mem_high) == (2048, 16, 128, 384)


def test_c_mem_counts_cycles_all_warps_wait_on_memory_not_some():
    # a streaming kernel: 1500 cycles in which some warp waited on a load and nothing
    # issued, but only 100 in which all of them did: memory is not congested, n grows
    port = FakeGPUPort(1)
    d = DynCTA(DynCTAParams(), n_sms=1, port=port, config=load_config("tesla_m2050", {"gpu.n_sms": 1}))
    d.on_kernel_start(KernelInfo(0, "k", 0, (64, 1, 1), (256, 1, 1), 64, 8, 16, 0, None), now=0)
    assert d.n == [3]
    d.on_window(_window(idle=0, mem=100, some_mem=1500), now=2047)
    assert d.n == [4] and d.counts.increments == 1
    d.on_window(_window(idle=0, mem=300, some_mem=1500), now=4095)     # between the thresholds: kept
    assert d.n == [4]
    d.on_window(_window(idle=0, mem=400, some_mem=400), now=6143)      # all waited > t_mem_high: down
    assert d.n == [3] and d.counts.decrements == 1


def test_starts_at_half_pauses_the_newest_cta_and_resumes_it():
    port = FakeGPUPort(1)
    d = DynCTA(DynCTAParams(), n_sms=1, port=port, config=load_config("tesla_m2050", {"gpu.n_sms": 1}))
    d.on_kernel_start(KernelInfo(0, "k", 0, (64, 1, 1), (256, 1, 1), 64, 8, 16, 0, None), now=0)
    assert port.sm(0).limits == {0: 3}            # T_max = 6 (threads) -> 3
    ctas = [cta(0, i, 0, admitted=10 * i, warps=[warp(2 * i, 2 * i), warp(2 * i + 1, 2 * i + 1)]) for i in range(3)]
    port.sm(0).ctas = ctas
    d.on_window(_window(idle=0, mem=500), now=2047)   # congested: n = 2, CTA 2 (newest) paused
    assert d.n == [2] and port.sm(0).held == {4, 5} and port.sm(0).limits[0] == 2
    d.on_window(_window(idle=0, mem=500), now=4095)   # n = 1: CTA 1 paused too
    assert port.sm(0).held == {2, 3, 4, 5}
    # CTA 0 retires: one running CTA is wanted, the most recently paused (CTA 1) resumes
    port.sm(0).ctas = ctas[1:]
    d.on_cta_retired(ctas[0], now=5000)
    assert port.sm(0).held == {4, 5}
    d.on_window(_window(idle=20, mem=0), now=6143)    # idle: n = 2, CTA 2 resumes
    assert port.sm(0).held == set() and d.n == [2]
    assert d.counts.as_dict() == {"increments": 1, "decrements": 2, "pauses": 2, "resumes": 2, "n_sum": 5,
                                  "samples": 3}
