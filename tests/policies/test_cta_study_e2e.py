"""The CTA-scheduling study's plug-ins in the simulator, on hand-made kernels and a
2-SM GPU: an observer plug-in (an execution checker at each SM) checks each
mechanism's effect exactly through the same port events."""

from __future__ import annotations


import numpy as np

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.cta.lazy import eq1

# each thread reads a float, does a dependent chain, writes it: CTAs of 64 threads (2 warps)
CHAIN = r'''
extern "C" __global__ void chain(const float* in, float* out, int n) {
    int i = (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
    float x = in[i];
    for (int k = 0; k < 24; ++k) x = fmaf(x, 1.0f, 0.5f);
    if (i < n) out[i] = x;
}'''

# a 2D grid of 16x4 CTAs over a row-major matrix: CTA (2p, y) and (2p+1, y) read the two
# 64-byte halves of the same 128-byte lines
ROWS = r'''
extern "C" __global__ void rows(const float* in, float* out, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * w + x] = 2.0f * in[y * w + x];
}'''


def _cfg(**over):
    return load_config("tesla_m2050", {"gpu.n_sms": 2, "l1i.perfect": True, **over})


def _chain(cfg, ctas=24, block=(64, 1), grid=None):
    n = ctas * block[0] * block[1]
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(CHAIN, "chain")
        out = tlpsim.zeros(n, np.float32)
        rec = k(grid or (ctas,), block, (tlpsim.asarray(np.ones(n, np.float32)), out, np.int32(n)))
        assert np.allclose(out.get(), 13.0)
    return rec


def _rows(cfg, gx=8, gy=6):
    w, h = 16 * gx, 4 * gy
    a = np.arange(w * h, dtype=np.float32)
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(ROWS, "rows")
        out = tlpsim.zeros(w * h, np.float32)
        rec = k((gx, gy), (16, 4), (tlpsim.asarray(a), out, np.int32(w)))
        assert np.array_equal(out.get(), 2 * a)
    return rec


class Observer(ExecutionChecker):
    """Records admissions and retirements with what the SM held at each."""

    events = frozenset({"cta_admitted", "cta_retired"})
    log: list = []

    def on_cta_admitted(self, cta, now):
        p = self.port
        type(self).log.append(("admit", now, cta.sm, cta.index, p.resident_of(cta.kid), p.cta_limit(cta.kid),
                               sorted({c.kid for c in p.resident_ctas()})))

    def on_cta_retired(self, cta, now):
        others = [c.insts for c in self.port.resident_ctas() if c.kid == cta.kid]
        type(self).log.append(("retire", now, cta.sm, cta.index, cta.insts, others))


def test_lcs_limits_each_sm_to_eq1_of_its_first_retirement(plugin):
    Observer.log = []
    obs = plugin("execution_checker", Observer)
    rec = _chain(_cfg(**{"sm.execution_checker": obs, "gpu.cta_scheduler": "lcs"}))
    expected = {}
    for ev in Observer.log:
        if ev[0] == "retire" and ev[2] not in expected:
            expected[ev[2]] = eq1([ev[4]] + ev[5])   # the observer runs before LCS: the same state
        if ev[0] == "admit" and ev[2] in expected:
            assert ev[5] == expected[ev[2]] and ev[4] <= expected[ev[2]]   # lazy: never above T_new
    assert sorted(expected) == [0, 1]
    c = rec.stats.plugins["cta_scheduler.lcs"]
    assert c["decisions"] == 2 and c["t_new_sum"] == sum(expected.values())


def test_bcs_places_consecutive_ctas_on_one_sm_and_halves_the_l1_misses(plugin):
    Observer.log = []
    obs = plugin("execution_checker", Observer)
    rec = _rows(_cfg(**{"sm.execution_checker": obs, "gpu.cta_scheduler": "bcs"}))
    where = {ev[3]: ev[2] for ev in Observer.log if ev[0] == "admit"}
    assert len(where) == 48 and all(where[2 * p] == where[2 * p + 1] for p in range(24))
    rr = _rows(_cfg())
    miss = lambda r: sum(s["l1d_misses"] for s in r.stats.per_sm)
    # 24 rows x 128 floats = 96 lines, each read by two CTAs: on one SM it misses once;
    # round robin puts a pair's CTAs on different SMs, unless retirements reorder dispatch
    assert miss(rec) == 96 and miss(rr) > 150
    assert rec.stats.plugins["cta_scheduler.bcs"]["blocks"] == 24


def test_bcs_dispatches_a_pair_only_when_a_whole_pair_retired(plugin):
    Observer.log = []
    obs = plugin("execution_checker", Observer)
    _rows(_cfg(**{"sm.execution_checker": obs, "gpu.cta_scheduler": "bcs", "gpu.max_ctas_per_sm": 4}))
    open_pairs: dict[int, dict[int, int]] = {0: {}, 1: {}}   # sm -> pair -> CTAs not retired
    for ev in Observer.log:
        kind, _, sm, index = ev[:4]
        pairs = open_pairs[sm]
        if kind == "admit":
            pairs[index // 2] = pairs.get(index // 2, 0) + 1
            assert len(pairs) <= 2                               # 4 CTAs: two pair slots
        else:
            pairs[index // 2] -= 1
            if not pairs[index // 2]:
                del pairs[index // 2]


class GroupObserver(ExecutionChecker):
    """Records, at each admission, the CTA's dispatch group on its SM and the CTAs resident."""

    events = frozenset({"cta_admitted"})
    log: list = []

    def on_cta_admitted(self, cta, now):
        g = self.port.dispatch_group(cta.kid, cta.index)
        type(self).log.append((cta.sm, cta.index, g.ctas if g else None, self.port.resident_of(cta.kid)))


def test_bcs_fills_the_odd_slot_and_declares_each_block_to_its_sm(plugin):
    GroupObserver.log = []
    obs = plugin("execution_checker", GroupObserver)
    rec = _rows(_cfg(**{"sm.execution_checker": obs, "gpu.cta_scheduler": "bcs", "gpu.max_ctas_per_sm": 3}))
    log = GroupObserver.log
    assert len(log) == 48 and all(g is not None and i in g for _, i, g, _ in log)
    assert all(len(g) in (1, 2) and list(g) == list(range(g[0], g[0] + len(g))) for _, _, g, _ in log)
    assert max(n for *_, n in log) == 3                          # the odd third slot is used
    assert any(len(g) == 1 for _, _, g, _ in log)                # by single CTAs
    assert rec.device._timing.gpu.dispatch_groups == {}          # the launch's groups went with it


class IssueLog(ExecutionChecker):
    events = frozenset({"instr_issued"})
    log: list = []

    def on_instr_issued(self, warp, instr, mask, now):
        if warp.sm == 0 and warp.sched == 0:
            type(self).log.append((now, warp.cta_index, warp.gwarp % 2))


def _alternation(log) -> float:
    """Of consecutive issues from one BCS pair, the share that switch CTA."""
    same = [(a, b) for a, b in zip(log, log[1:]) if a[1] // 2 == b[1] // 2]
    return sum(1 for a, b in same if a[1] != b[1]) / len(same)


def test_sca_interleaves_the_same_warp_of_the_two_ctas_of_a_pair(plugin):
    IssueLog.log = []
    log = plugin("execution_checker", IssueLog)
    _rows(_cfg(**{"sm.execution_checker": log, "gpu.cta_scheduler": "bcs", "sm.warp_scheduler": "sca"}), 4, 2)
    sca = IssueLog.log
    # scheduler 0 of SM 0 holds warp 0 of each CTA of its pairs: SCA alternates between them
    # (while the instruction buffers fill, a warp whose partner has nothing yet issues alone)
    assert {w for *_, w in sca} == {0} and _alternation(sca) > 0.85
    IssueLog.log = []
    _rows(_cfg(**{"sm.execution_checker": log, "gpu.cta_scheduler": "bcs"}), 4, 2)
    # GTO stays on a warp while it can; a warp issues at most one fetch group (2 instructions)
    # every 3 cycles (timing/fetch.py), so it switches about once per group: 0.5 at best
    assert _alternation(IssueLog.log) < 0.7


REUSE = r'''
extern "C" __global__ void reuse(const float* in, float* out) {
    // every warp sweeps its own 2 KiB (16 lines, as many as its victim tags) four times:
    // the SM's 32 warps (64 KiB) overflow its 32 KiB L1
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    float s = 0.0f;
    int z = 0;  // 0, but only known at run time: the loads cannot be hoisted out of the r loop
    for (int r = 0; r < 4; ++r)
        for (int k = 0; k < 16; ++k) { float v = in[w * 512 + k * 32 + lane + z]; s += v; z = (int)(v * 0.0f); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}'''


def _reuse(cfg):
    n_warps = 2 * 4 * 8
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(REUSE, "reuse")
        out = tlpsim.zeros(n_warps * 32, np.float32)
        rec = k((8,), (256,), (tlpsim.asarray(np.ones(n_warps * 512, np.float32)), out))
        assert np.allclose(out.get(), 64.0)
    return rec


def test_ccws_detects_lost_locality_throttles_loads_and_keeps_lines_in_the_l1():
    ccws = _reuse(_cfg(**{"sm.warp_scheduler": "ccws"}))
    c = ccws.stats.plugins["warp_scheduler.ccws"]
    assert c["vta_hits"] > 0 and c["load_blocks"] > 0
    gto = _reuse(_cfg())
    misses = lambda r: sum(s["l1d_misses"] for s in r.stats.per_sm)
    assert misses(gto) == 4 * 64 * 16          # under GTO every warp's lines are gone before it returns
    assert misses(ccws) < 0.7 * misses(gto)


def test_tlv_and_dyncta_run_to_completion_and_dyncta_samples_every_window():
    rec = _chain(_cfg(**{"sm.warp_scheduler": "tlv"}), ctas=48)
    assert rec.stats.warp_insts == rec.warp_instructions
    cfg = _cfg(**{"gpu.cta_scheduler": {"impl": "dyncta", "window_cycles": 200}})
    rec = _chain(cfg, ctas=48)
    c = rec.stats.plugins["cta_scheduler.dyncta"]
    assert c["samples"] == 2 * (rec.stats.cycles // 200)   # one per SM per full window
    assert c["n_sum"] >= c["samples"]


def _pair_of_kernels(cfg):
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        k = tlpsim.RawKernel(CHAIN, "chain")
        outs = []
        for _ in range(2):
            with tlpsim.Stream():
                n = 16 * 64
                out = tlpsim.zeros(n, np.float32)
                k((16,), (64,), (tlpsim.asarray(np.ones(n, np.float32)), out, np.int32(n)))
                outs.append(out)
    for o in outs:
        assert np.allclose(o.get(), 13.0)


def test_mcke_shares_sms_between_kernels_and_cke_does_not(plugin):
    Observer.log = []
    obs = plugin("execution_checker", Observer)
    _pair_of_kernels(_cfg(**{"sm.execution_checker": obs, "gpu.cta_scheduler": {"impl": "mcke",
                                                                                 "limits": {"chain": 3}}}))
    admits = [ev for ev in Observer.log if ev[0] == "admit"]
    assert any(len(ev[6]) == 2 for ev in admits)                   # both kernels resident on one SM
    assert all(ev[4] <= 3 for ev in admits)                        # each kernel under its limit
    Observer.log = []
    _pair_of_kernels(_cfg(**{"sm.execution_checker": obs, "gpu.cta_scheduler": "cke"}))
    assert all(len(ev[6]) == 1 for ev in Observer.log if ev[0] == "admit")
