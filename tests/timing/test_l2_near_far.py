"""Near/far L2 halves (l2.far_latency): one slice in half 1 against mock SMs 0 (half 0,
far) and 1 (half 1, near). Timing terms as in test_l2.py: a near hit is seen L + 2
cycles after the push, a miss L + D + 5; a request from the other half waits F more.
"""

import pytest

from tlpsim.config import list_presets, load_config
from tlpsim.errors import ConfigError
from tlpsim.timing.l2 import L2Slice
from tlpsim.timing.mem_types import ATOMIC, READ, WRITE, MemRequest
from tlpsim.timing.queues import TimedQueue

from test_l2 import DOM, LINE, build, engine_mode, run, warm  # noqa: F401 (engine_mode: sparse and dense)

L, D, F = 10, 20, 7
FAR_SM, NEAR_SM = 0, 1


def rq(kind, line, sm, tok, mask=0b0001):
    return MemRequest(kind, line * LINE, mask, src_sm=sm, token=tok)


def split(schedule, **kw):
    return build(schedule, hit_latency=L, dram_delay=D, side=1, sm_sides=[0, 1], far_latency=F, **kw)


def test_near_and_far_hit_latencies():
    eng, sm, l2, dram = split([(0, rq(READ, 0, NEAR_SM, "near")), (100, rq(READ, 1, FAR_SM, "far"))])
    warm(l2, 0)
    warm(l2, 1)
    run(eng)
    assert sm.latency("near") == L + 2
    assert sm.latency("far") == L + F + 2
    assert (l2.far_requests, l2.replica_hits, l2.stats.cache.hits) == (1, 0, 2)
    assert dram.log == []


def test_far_miss_pays_the_crossing_and_dram():
    eng, sm, l2, dram = split([(0, rq(READ, 3, FAR_SM, "a", 0b0110))])
    run(eng)
    assert dram.log == [(L + F + 2, READ, 3 * LINE, 0b0110)]
    assert sm.latency("a") == L + F + D + 5
    assert l2.replica_lines() == 1


def test_far_read_leaves_a_copy_that_later_reads_hit_near():
    sched = [(0, rq(READ, 0, FAR_SM, "first")), (100, rq(READ, 0, FAR_SM, "again")),
             (200, rq(READ, 0, FAR_SM, "other_sector", 0b0010))]
    eng, sm, l2, _ = split(sched)
    warm(l2, 0)
    run(eng)
    assert sm.latency("first") == L + F + 2
    assert sm.latency("again") == L + 2                 # the copy in its own half
    assert sm.latency("other_sector") == L + F + 2      # the copy holds sector 0 only
    assert (l2.far_requests, l2.replica_hits) == (2, 1)
    assert l2.stats.cache.hits == 2                     # the copy's hit does not read this slice's array
    assert l2.stats.reads == 3


def test_copy_made_by_a_far_miss_serves_the_next_read():
    eng, sm, l2, dram = split([(0, rq(READ, 5, FAR_SM, "miss")), (100, rq(READ, 5, FAR_SM, "copy"))])
    run(eng)
    assert sm.latency("miss") == L + F + D + 5
    assert sm.latency("copy") == L + 2
    assert len(dram.log) == 1


@pytest.mark.parametrize("kind,who", [(WRITE, NEAR_SM), (WRITE, FAR_SM), (ATOMIC, NEAR_SM)])
def test_write_or_atomic_drops_the_copy(kind, who):
    sched = [(0, rq(READ, 0, FAR_SM, "r1")), (100, rq(kind, 0, who, "w")), (200, rq(READ, 0, FAR_SM, "r2"))]
    eng, sm, l2, _ = split(sched)
    warm(l2, 0)
    run(eng)
    assert sm.latency("w") == L + (F if who == FAR_SM else 0) + 2
    assert sm.latency("r2") == L + F + 2                 # the home copy again, across
    assert l2.replica_hits == 0


def test_near_request_is_not_held_behind_a_far_one():
    eng, sm, l2, _ = split([(0, rq(READ, 0, FAR_SM, "far")), (1, rq(READ, 1, NEAR_SM, "near"))])
    warm(l2, 0)
    warm(l2, 1)
    run(eng)
    assert sm.latency("near") == L + 2
    assert sm.latency("far") == L + F + 2
    assert sm.got["near"] < sm.got["far"]


def test_host_fill_drops_the_copy():
    eng, sm, l2, _ = split([(0, rq(READ, 0, FAR_SM, "r1"))])
    warm(l2, 0)
    run(eng)
    assert l2.replica_lines() == 1
    l2.host_fill(0)
    assert l2.replica_lines() == 0


def test_copies_are_bounded_by_the_slice_size():
    sched = [(20 * i, rq(READ, i, FAR_SM, i)) for i in range(12)]      # 12 lines, slice of 8
    eng, sm, l2, _ = split(sched, size_bytes=8 * LINE, assoc=8)
    run(eng)
    assert l2.replica_lines() == 8


def test_uniform_slice_ignores_sides():
    eng, sm, l2, _ = build([(0, rq(READ, 0, FAR_SM, "a"))], hit_latency=L, dram_delay=D)
    warm(l2, 0)
    run(eng)
    assert sm.latency("a") == L + 2
    assert (l2.far_requests, l2.replica_lines()) == (0, 0)


def test_slice_needs_its_half_and_the_sms_halves():
    q = [TimedQueue(str(k), 8) for k in range(4)]
    with pytest.raises(ValueError, match="far_latency needs"):
        L2Slice(DOM, 0, size_bytes=8 * LINE, assoc=2, from_icnt=q[0], to_icnt=q[1], to_dram=q[2], from_dram=q[3],
                far_latency=5)
    with pytest.raises(ValueError, match="far_latency must be >= 0"):
        L2Slice(DOM, 0, size_bytes=8 * LINE, assoc=2, from_icnt=q[0], to_icnt=q[1], to_dram=q[2], from_dram=q[3],
                side=0, sm_sides=[0], far_latency=-1)


# -- configuration -------------------------------------------------------------------------

def test_config_needs_an_even_channel_count():
    with pytest.raises(ConfigError, match=r"l2\.far_latency \(50\).*even dram\.n_partitions \(not 5\)"):
        load_config("gtx480", overrides=["l2.far_latency=50", "dram.n_partitions=5"])


def test_only_the_hopper_presets_split_the_l2():
    split_presets = {name for name in list_presets() if load_config(name).l2.far_latency}
    assert split_presets == {"h100", "h200"}
    h200 = load_config("h200")
    assert (h200.l2.hit_latency, h200.l2.far_latency) == (221, 196)


@pytest.mark.parametrize("name", ["gtx480", "h200"])
def test_memory_system_wiring(name):
    from tlpsim.session import build_gpu

    cfg = load_config(name)
    gpu = build_gpu(cfg)
    mem = gpu.mem
    counters = mem.counters()
    if cfg.l2.far_latency:
        n = mem.n_parts
        assert [s.side for s in mem.slices] == [0 if 2 * (k // mem.per_part) < n else 1
                                                for k in range(len(mem.slices))]
        assert all(s._sm_sides == [k % 2 for k in range(cfg.gpu.n_sms)] for s in mem.slices)
        assert (counters["l2_far_requests"], counters["l2_replica_hits"]) == (0, 0)
    else:
        # other presets: uniform slices and the same counters as before the mechanism
        assert all(s.far_latency == 0 and s.side == -1 for s in mem.slices)
        assert "l2_far_requests" not in counters and "l2_replica_hits" not in counters


def test_one_sm_sits_in_half_zero():
    # a one-SM h200 (the usual way to study one SM) keeps the split: half the channels are far from it
    from tlpsim.session import build_gpu

    cfg = load_config("h200", {"gpu.n_sms": 1})
    mem = build_gpu(cfg).mem
    assert all(s._sm_sides == [0] for s in mem.slices)
    assert sorted({s.side for s in mem.slices}) == [0, 1]
