"""The SM pipeline as GPGPU-Sim models it: opcode latency classes, the stages between
issue and writeback, result buses, the instruction cache, the L1's miss path and
DRAM column accesses — each with an exact, hand-derived expectation."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register, unregister
from tlpsim.timing.builder import latency_tables
from tlpsim.timing.static import DP, SFU, SP, StaticKernel

MIX = r'''
extern "C" __global__ void mix(float* f, double* d, int* i, float a, double b, int c) {
    int t = threadIdx.x;
    float x = f[t] + a;          // add.f32: fp ADD
    x = x / a;                   // div.rn.f32: fp DIV on the SFU
    x = sqrtf(x);                // sqrt: SFU
    double y = d[t] + b;         // add.f64: dp ADD on the DP pipe
    int k = i[t] * c;            // mul.lo.s32: int MUL
    k = k ^ c;                   // xor: latency 1
    f[t] = x; d[t] = y; i[t] = k;
}'''

CHAIN = r'''
extern "C" __global__ void chain(const float* in, float* out, float a, float b) {
    float x = in[threadIdx.x];
    #pragma unroll
    for (int k = 0; k < 8; ++k) x = fmaf(x, a, b);
    out[threadIdx.x] = x;
}'''


def _static(src, name, overrides=None):
    from tlpsim.analysis.analyzed import analyze

    cfg = load_config("gtx480", overrides or {})
    k = tlpsim.RawKernel(src, name)
    ak = analyze(k.program.module, k.kernel)
    return StaticKernel(ak.fn, latency_tables(cfg), analyzed=ak), ak


def test_opcode_latency_classes_follow_gpgpusim():
    sk, ak = _static(MIX, "mix")
    by_op = {}
    for ins, si in zip(ak.fn.instructions, sk.instrs):
        by_op.setdefault((ins.base, ins.type), (si.unit, si.latency, si.initiation))
    assert by_op[("add", "f32")] == (SP, 4, 1)
    assert by_op[("div", "f32")][:3] == (SFU, 39, 4)
    assert by_op[("add", "f64")] == (DP, 8, 8)
    assert by_op[("mul", "s32")] == (SP, 4, 2)
    assert by_op[("xor", "b32")] == (SP, 1, 1)
    sqrt = [v for (b, _), v in by_op.items() if b == "sqrt"]
    assert sqrt == [(SFU, 8, 8)]
    movs = [v for (b, _), v in by_op.items() if b in ("mov", "cvta", "setp")]
    assert movs and all(v == (SP, 1, 1) for v in movs)


def test_result_delay_is_latency_plus_the_stages():
    cfg = load_config("gtx480")
    pl = cfg.sm.pipelines
    sk, ak = _static(CHAIN, "chain")
    fma = next(si for ins, si in zip(ak.fn.instructions, sk.instrs) if ins.base == "fma")
    assert fma.result_delay == pl.dispatch_delay + 5 + pl.writeback_delay


@pytest.fixture
def probe():
    names = []

    def make(watch_op):
        log = []

        class Probe(ExecutionChecker):
            events = frozenset({"instr_issued"})

            def watches(self, instr):
                return instr.op == watch_op

            def on_instr_issued(self, warp, instr, mask, now):
                log.append(now)

        name = f"t_{uuid.uuid4().hex[:8]}"
        register("execution_checker", name)(Probe)
        names.append(name)
        return name, log

    yield make
    for n in names:
        unregister("execution_checker", n)


def test_dependent_instructions_issue_latency_plus_six_apart(probe):
    """GPGPU-Sim: issue -> collector (1) -> read (1) -> dispatch register (1) -> the unit's
    latency -> result port -> writeback (2): a dependent fma issues 5 + 6 cycles later."""
    name, log = probe("fma")
    cfg = load_config("gtx480", {"gpu.n_sms": 1, "sm.execution_checker": name, "l1i.perfect": True})
    with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
        tlpsim.RawKernel(CHAIN, "chain")((1,), (32,), (tlpsim.asarray(np.ones(32, np.float32)),
                                                       tlpsim.zeros(32, np.float32), np.float32(1), np.float32(0)))
    pl = cfg.sm.pipelines
    gap = 5 + pl.collector_delay + 1 + pl.dispatch_delay + pl.writeback_delay + 1
    assert gap == 11 and np.diff(log).tolist() == [gap] * 7


def test_result_buses_limit_writebacks_per_cycle():
    from tlpsim.timing.events import SMEvents
    from tlpsim.timing.issue import IssueStage
    from tlpsim.timing.units import FunctionalUnits

    st = IssueStage(2, [None, None], FunctionalUnits({"sp": 2}, {}, 2), None, None, SMEvents(), wb_width=2)
    assert [st._result_bus(20, 10) for _ in range(5)] == [20, 20, 21, 21, 22]


def test_cold_instruction_cache_misses_cost_l2_round_trips():
    def run(perfect):
        cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": perfect})
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
            k = tlpsim.RawKernel(CHAIN, "chain")
            args = (tlpsim.asarray(np.ones(32, np.float32)), tlpsim.zeros(32, np.float32), np.float32(1),
                    np.float32(0))
            first, second = k((1,), (32,), args), k((1,), (32,), args)
        reqs = lambda r: sum(s["ifetch_requests"] for s in r.stats.per_sm)
        return first, second, reqs

    f, s, reqs = run(False)
    pf, ps, _ = run(True)
    n_lines = -(-len(f.device._timing._static[next(iter(f.device._timing._static))].instrs) * 8 // 128)
    assert 1 <= reqs(f) <= n_lines + 1      # each line of the kernel's code missed once
    assert reqs(s) == 0                     # the second launch finds its code cached
    assert f.stats.cycles > pf.stats.cycles + 100 and s.stats.cycles == ps.stats.cycles


def test_l1_accesses_look_up_the_tags_after_the_l1_pipeline():
    """GPGPU-Sim's l1_latency_queue: an access enters the L1's pipeline (one a cycle), its
    tag lookup is at the end (a miss then takes the miss queue, which drains one request a
    cycle into the interconnect); a full pipeline or miss queue refuses."""
    from tlpsim.timing.cache import MSHR, CacheArray
    from tlpsim.timing.cache_port import CachePort
    from tlpsim.timing.ldst import LdstParams, LdstUnit, _Instr
    from tlpsim.timing.mem_types import READ
    from tlpsim.timing.queues import TimedQueue

    l1d = CachePort("l1d", CacheArray(16384, 4, 128), MSHR(64, 8), 35)
    l1c = CachePort("l1c", CacheArray(8192, 2, 64), MSHR(2, 32), 1)
    out = TimedQueue("out", 8)
    u = LdstUnit(0, LdstParams(l1_pipeline=35, l1_miss_queue=2), l1d, l1c, out, TimedQueue("in", 8), lambda a: 0)
    u._period = 1
    ins = _Instr(None, 1, [], READ, l1d, None)
    assert u._access(ins, 0x1000, 0xF, 10) and u.l1pipe.head_due() == 45 and ins.outstanding == 1
    assert len(l1d.mshr) == 0                                   # nothing looked up yet
    assert u._lookup(ins, 0x1000, 0xF, 45) and len(l1d.mshr) == 1 and u.missq.head_due() == 46
    assert u._drain_misses(46) and len(out) == 1 and len(u.missq) == 0
    for k in range(34):
        assert u._access(ins, 0x2000 + 128 * k, 0x1, 11)
    assert len(u.l1pipe) == 35 and not u._access(ins, 0x9000, 0x1, 12)   # the pipeline is full
    u.missq.append(0, None)
    u.missq.append(0, None)
    assert not u._lookup(ins, 0x2000, 0x1, 46)                 # miss queue full: the lookup waits


def test_a_refused_l1_read_retried_unchanged_is_refused_again_for_the_same_reason():
    """A lookup refused for want of an MSHR is refused again, counting the same reason,
    until a fill (or any change of the tags/MSHRs, or of the miss queue) lets it be
    looked up anew; handlers see every refusal."""
    from tlpsim.timing.cache import MSHR, CacheArray
    from tlpsim.timing.cache_port import FAIL_MSHR, CachePort
    from tlpsim.timing.ldst import LdstParams, LdstUnit, _Instr
    from tlpsim.timing.mem_types import READ
    from tlpsim.timing.queues import TimedQueue

    l1d = CachePort("l1d", CacheArray(16384, 4, 128), MSHR(1, 8), 35)
    l1c = CachePort("l1c", CacheArray(8192, 2, 64), MSHR(2, 32), 1)
    u = LdstUnit(0, LdstParams(l1_pipeline=0, l1_miss_queue=8), l1d, l1c, TimedQueue("out", 8),
                 TimedQueue("in", 8), lambda a: 0)
    u._period = 1
    seen = []
    u.l1d_handlers.append(lambda view, line, outcome, evicted, now: seen.append((line, outcome, now)))
    warp = SimpleNamespace(view="w0")
    a, b = _Instr(warp, 1, [], READ, l1d, None), _Instr(warp, 1, [], READ, l1d, None)
    assert u._lookup(a, 0x1000, 0xF, 10)                       # takes the only MSHR
    for now in (11, 12, 13):
        assert not u._lookup(b, 0x2000, 0xF, now)              # no MSHR: refused, 3 times
    assert u._refused is b and u._refused_why == FAIL_MSHR
    assert l1d.stats.res_fail_mshr == 3 and l1d.stats.accesses == 1
    assert [o for _, o, _ in seen] == ["miss", "fail", "fail", "fail"]
    assert l1d.fill(0x1000, 0xF, 14) == [a]                     # the fill frees the MSHR
    assert u._lookup(b, 0x2000, 0xF, 15) and l1d.stats.res_fail_mshr == 3 and len(l1d.mshr) == 1
    while len(u.missq) < 8:                                    # a full miss queue
        u.missq.append(99, None)
    c = _Instr(warp, 1, [], READ, l1d, None)
    assert not u._lookup(c, 0x3000, 0xF, 16)                   # MSHR full again (b holds it)
    l1d.fill(0x2000, 0xF, 17)
    assert not u._lookup(c, 0x3000, 0xF, 18)                   # now the queue refuses it
    assert l1d.stats.res_fail_mshr == 4 and l1d.stats.res_fail_queue == 1
    u.missq.popleft()                                          # a slot frees: looked up anew
    assert u._lookup(c, 0x3000, 0xF, 19) and l1d.stats.res_fail_queue == 1


def test_memory_latency_is_counted_per_sector_from_l2_acceptance_to_the_reply():
    """GPGPU-Sim's averagemflatency: a data reply or store acknowledgement counts the
    core cycles since its L2 slice accepted it, once per 32-byte sector; a request
    that never reached an L2 slice is not counted."""
    from tlpsim.timing.cache import MSHR, CacheArray
    from tlpsim.timing.cache_port import CachePort
    from tlpsim.timing.ldst import LdstParams, LdstUnit, _Instr
    from tlpsim.timing.mem_types import READ, MemRequest
    from tlpsim.timing.queues import TimedQueue

    period = 7
    l1d = CachePort("l1d", CacheArray(16384, 4, 128), MSHR(8, 8), 35)
    l1c = CachePort("l1c", CacheArray(8192, 2, 64), MSHR(2, 32), 1)
    u = LdstUnit(0, LdstParams(), l1d, l1c, TimedQueue("out", 8), TimedQueue("in", 8), lambda a: 0)
    u._period = period
    ins = _Instr(None, 1, [], READ, None, None, callback=lambda cycle: None)
    ins.outstanding = 2
    line = MemRequest(READ, 0x1000, 0xF, 0, token=ins)
    line.t_l2 = 100 * period
    u._reply(line, 340)                                  # 240 cycles x 4 sectors
    sector = MemRequest(READ, 0x2000, 0x2, 0, token=ins)
    sector.t_l2 = 300 * period
    u._reply(sector, 410)                                # 110 cycles x 1 sector
    st = u.stats
    assert (st.mem_latency_sector_cycles, st.mem_latency_sectors) == (4 * 240 + 110, 5)
    never = MemRequest(READ, 0x4000, 0xF, 0, token=None)   # no t_l2: not from an L2 slice
    u._reply(never, 500)
    assert (st.mem_latency_sector_cycles, st.mem_latency_sectors) == (4 * 240 + 110, 5)


def test_dram_reads_take_a_burst_per_sector():
    from tlpsim.timing.dram import _bursts_table

    per_atom, per_sector = _bursts_table(64), _bursts_table(64, per_sector=True)
    assert per_atom[0xF] == 2 and per_atom[0x1] == 1 and per_atom[0x3] == 1
    assert per_sector[0xF] == 4 and per_sector[0x1] == 1 and per_sector[0x5] == 2


def test_bypass_global_skips_the_l1_for_global_loads():
    def l1(bypass):
        cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1d.bypass_global": bypass})
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False):
            rec = tlpsim.RawKernel(CHAIN, "chain")((1,), (32,), (tlpsim.asarray(np.ones(32, np.float32)),
                                                                tlpsim.zeros(32, np.float32), np.float32(1),
                                                                np.float32(0)))
        return sum(s["l1d_accesses"] for s in rec.stats.per_sm), sum(s["mem_requests"] for s in rec.stats.per_sm)

    assert l1(False)[0] == 1 and l1(True)[0] == 0 and l1(True)[1] >= 1


SCATTER = r'''
extern "C" __global__ void scatter(float* out, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[(i * stride) & ((1 << 20) - 1)] = (float)i;      // every lane its own line
}'''


def test_uncoalesced_stores_stream_out_through_the_miss_queue_in_both_modes():
    """A store of 32 lines fills the L1 miss queue: the unit stalls, the queue keeps
    draining one request a cycle, and skip-ahead agrees with dense ticking."""
    from dataclasses import asdict

    out = []
    for dense in (False, True):
        cfg = load_config("gtx480", {"gpu.n_sms": 1, "l1i.perfect": True})
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=dense):
            rec = tlpsim.RawKernel(SCATTER, "scatter")((8,), (256,), (tlpsim.zeros(1 << 20, np.float32),
                                                                      np.int32(33)))
        d = asdict(rec.stats)
        d.pop("wall_seconds")
        out.append(d)
    assert out[0] == out[1]
    st = out[0]
    stores = 8 * 256  # one write request per lane (plus the parameters' constant-cache miss)
    assert sum(s["mem_requests"] for s in st["per_sm"]) == stores + 1
    assert st["cycles"] >= stores          # one request a cycle leaves the miss queue
    assert st["cycles"] < 2 * stores       # ... and it never waits for acknowledgments to do so
