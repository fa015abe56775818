"""The sub-core path into the shared-memory pipeline (sm.shared_subcore_issue_cycles,
sm.shared_subcore_cycles_per_conflict): each warp scheduler hands its shared accesses to
the SM's LD/ST unit through its own path, one every 4 cycles on h200 or 2 cycles per
wavefront if more, while the banks serve the whole SM at 1 cycle per wavefront. Timed
by the issue cycles of one CTA's volatile shared loads on one SM."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.errors import ConfigError
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register, unregister

# eight independent loads of word (lane x stride) per warp (`tput`), or eight dependent
# ones whose loaded value is the next address (`chain`)
SOURCE = r'''
#define LD(d) asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(d) : "r"(a))
extern "C" __global__ void tput(unsigned* out, int stride) {
    __shared__ unsigned sm[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) sm[i] = i;
    __syncthreads();
    unsigned a = (unsigned)__cvta_generic_to_shared(sm) + 4u * ((threadIdx.x % 32 * stride) & 1023);
    unsigned d0, d1, d2, d3, d4, d5, d6, d7;
    LD(d0); LD(d1); LD(d2); LD(d3); LD(d4); LD(d5); LD(d6); LD(d7);
    out[threadIdx.x] = d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7;
}
extern "C" __global__ void chain(unsigned* out, int stride) {
    __shared__ unsigned sm[1024];
    unsigned base = (unsigned)__cvta_generic_to_shared(sm);
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) sm[i] = base + 4u * i;
    __syncthreads();
    unsigned a = base + 4u * ((threadIdx.x % 32 * stride) & 1023);
    for (int j = 0; j < 8; ++j) asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(a));
    out[threadIdx.x] = (a - base) / 4u;
}'''

# the h200 model before the sub-core path: one SM-wide unit holding the banks 2 cycles a wavefront
SM_WIDE = {"sm.shared_cycles_per_conflict": 2, "sm.shared_subcore_issue_cycles": 0,
           "sm.shared_subcore_cycles_per_conflict": 0}


@pytest.fixture
def issues():
    """issues(kernel, warps, stride, overrides, dense): {warp slot: [issue cycles of its
    shared loads after the barrier]} for one CTA of `warps` warps on one h200 SM."""
    names = []

    def run(kernel, warps, stride, overrides=None, dense=False):
        log: dict[int, list[int]] = {}

        class Probe(ExecutionChecker):
            events = frozenset({"instr_issued"})

            def watches(self, instr):
                return instr.op in ("ld", "st") and instr.space in ("shared", "global")

            def on_instr_issued(self, warp, instr, mask, now):
                if instr.op == "ld" and instr.space == "shared":
                    log.setdefault(warp.slot, []).append(now)
                elif instr.op == "st" and instr.space == "global":  # the sum of the warp's loads
                    log.setdefault(("st", warp.slot), []).append(now)

        name = f"t_{uuid.uuid4().hex[:8]}"
        register("execution_checker", name)(Probe)
        names.append(name)
        cfg = load_config("h200", {"gpu.n_sms": 1, "sm.execution_checker": name, "l1i.perfect": True,
                                   **(overrides or {})})
        with tlpsim.Device(mode="timing", config=cfg, trace_cache=False, dense=dense) as dev:
            out = tlpsim.zeros(32 * warps, np.uint32)
            tlpsim.RawKernel(SOURCE, kernel)((1,), (32 * warps,), (out, np.int32(stride)))
            got = out.get()
            cycles = dev.launches[-1].stats.cycles
        words = (np.arange(32 * warps) % 32 * stride) & 1023
        assert (got == (8 * words if kernel == "tput" else words)).all()
        log["cycles"] = [cycles]
        return log

    yield run
    for n in names:
        unregister("execution_checker", n)


def gaps(times: list[int]) -> list[int]:
    return [b - a for a, b in zip(times, times[1:])]


def span(log: dict) -> int:
    """Cycles from the CTA's first shared load to its last warp's store of their sum."""
    first = min(min(v) for k, v in log.items() if isinstance(k, int))
    return max(v[0] for k, v in log.items() if isinstance(k, tuple)) - first


def test_one_warp_issues_a_shared_load_every_4_cycles_or_2_per_wavefront(issues):
    sm = load_config("h200").sm
    assert (sm.shared_subcore_issue_cycles, sm.shared_subcore_cycles_per_conflict,
            sm.shared_cycles_per_conflict) == (4, 2, 1)
    # stride s: an s-way bank conflict (32 banks of 4 bytes), s wavefronts
    for stride, gap in ((1, 4), (2, 4), (4, 8), (8, 16), (32, 64)):
        assert gaps(issues("tput", 1, stride)[0]) == [gap] * 7, stride
    # 4 wavefronts: 8 cycles a load through the sub-core path, as through the old SM-wide
    # unit at 2 cycles a wavefront -- one warp ends at the same cycle either way
    assert span(issues("tput", 1, 4)) == span(issues("tput", 1, 4, SM_WIDE))


def test_sub_cores_issue_side_by_side_and_share_the_banks(issues):
    # four warps, one per sub-core: each still one load every 4 cycles, the banks
    # serving the four a wavefront a cycle
    log = issues("tput", 4, 1)
    assert [gaps(log[w]) for w in range(4)] == [[4] * 7] * 4
    # at 4 wavefronts a load the banks bound both: 4 cycles a load for the SM, where the
    # SM-wide unit took 8; the last of the 32 loads starts 31 x 4 cycles sooner
    assert span(issues("tput", 4, 4, SM_WIDE)) - span(issues("tput", 4, 4)) == 31 * 4
    # two warps on one sub-core (warps 0 and 4 on scheduler 0) share its path: together
    # one load every 4 cycles
    log = issues("tput", 8, 1)
    sched0 = sorted(log[0] + log[4])
    assert gaps(sched0) == [4] * 15


def test_a_conflicts_latency_follows_the_slower_stage(issues):
    # a dependent chain: each load issues when the last one's value is back; each extra
    # wavefront adds 2 cycles (the sub-core path's), as with the old SM-wide 2 cycles
    one = gaps(issues("chain", 1, 1)[0])
    assert len(set(one)) == 1
    for stride in (2, 8, 32):
        assert gaps(issues("chain", 1, stride)[0]) == [one[0] + 2 * (stride - 1)] * 7
        assert gaps(issues("chain", 1, stride, SM_WIDE)[0]) == [one[0] + 2 * (stride - 1)] * 7
    assert gaps(issues("chain", 1, 1, SM_WIDE)[0]) == one


def test_skip_ahead_equals_dense_ticking(issues):
    for stride in (1, 8):
        sparse, dense = issues("tput", 8, stride), issues("tput", 8, stride, dense=True)
        assert sparse == dense


def test_config_checks():
    with pytest.raises(ConfigError, match="shared_subcore_issue_cycles.*needs sm.sub_core_model"):
        load_config("gtx480", {"sm.shared_subcore_issue_cycles": 4})
    with pytest.raises(ConfigError, match="shared_subcore_cycles_per_conflict.*does nothing without"):
        load_config("h200", {"sm.shared_subcore_issue_cycles": 0})
    for preset in ("gtx480", "gtx980", "maxwell_gpuduet"):
        sm = load_config(preset).sm
        assert sm.shared_subcore_issue_cycles == sm.shared_subcore_cycles_per_conflict == 0
    assert load_config("h100").sm.shared_subcore_issue_cycles == 4
