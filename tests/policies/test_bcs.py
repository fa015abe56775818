"""Block CTA scheduling and LCS+BCS (Lee et al. HPCA'14 §4.2-4.3): pairs of
consecutive CTAs per SM, delayed until a pair retires, the odd slot, applicability
by CTA shape and the dispatch groups declared to the SMs, on hand-made SM states."""

from __future__ import annotations

from fakes import FakeGPUPort, SMState, cta, dispatch, kernel

from tlpsim.config.loader import load_config
from tlpsim.policies.cta.bcs import BCSParams, BlockCTAScheduler, is_2d
from tlpsim.policies.cta.lcs_bcs import LazyBlockCTAScheduler, LCSBCSParams

CFG = load_config("tesla_m2050", {"gpu.n_sms": 2})   # 256-thread CTAs: 6 per SM (threads)
SQ = (16, 16, 1)                                       # a 2D CTA of 256 threads


def _bcs(cls=BlockCTAScheduler, params=None, n_sms=2):
    port = FakeGPUPort(n_sms)
    return cls(params or (BCSParams() if cls is BlockCTAScheduler else LCSBCSParams()), n_sms=n_sms, port=port,
               config=CFG), port


def test_shape_and_block_slots():
    assert is_2d((4, 2, 1)) and is_2d((1, 1, 3)) and not is_2d((64, 1, 1))
    b, _ = _bcs()                                  # odd_slot = "fill": the remainder is one more block
    assert b.block_slots(6) == (2, 3) and b.block_slots(5) == (2, 3)
    assert b.block_slots(3) == (2, 2) and b.block_slots(1) == (1, 1) and b.block_slots(0) == (1, 0)
    idle, _ = _bcs(params=BCSParams(odd_slot="idle"))
    assert idle.block_slots(5) == (2, 2) and idle.block_slots(3) == (2, 1) and idle.block_slots(1) == (1, 1)
    b4, _ = _bcs(params=BCSParams(block_size=4, odd_slot="idle"))
    assert b4.block_slots(6) == (4, 1) and b4.block_slots(3) == (3, 1)
    assert _bcs(params=BCSParams(block_size=4))[0].block_slots(6) == (4, 2)


def test_consecutive_pairs_go_to_one_sm_one_pair_per_visit():
    b, _ = _bcs()
    states = [SMState(0), SMState(1)]
    kv = kernel(n_ctas=20, grid=(4, 5, 1), block=SQ)
    first = dispatch(b, states, [kv])
    assert [(s, i) for s, _, i in first] == [(0, 0), (0, 1), (1, 2), (1, 3)]
    more = dispatch(b, states, [kv]) + dispatch(b, states, [kv]) + dispatch(b, states, [kv])
    assert [(s, i) for s, _, i in more] == [(0, 4), (0, 5), (1, 6), (1, 7), (0, 8), (0, 9), (1, 10), (1, 11)]
    assert states[0].by_kernel == {0: 6} and b.counts.blocks == 6


def test_dispatch_is_delayed_until_a_whole_pair_retired():
    b, _ = _bcs()
    states = [SMState(0), SMState(1)]
    kv = kernel(n_ctas=20, grid=(4, 5, 1), block=SQ)
    for _ in range(3):
        dispatch(b, states, [kv])
    # CTA 0 retires on SM 0: its partner 1 still runs, so SM 0 gets nothing
    states[0].by_kernel[0] -= 1
    b.on_cta_done(0, 0, 0, now=100)
    assert dispatch(b, states, [kv]) == []
    # CTA 6 and then 7 retire on SM 1: that pair is done, SM 1 takes CTAs 12 and 13
    for i in (6, 7):
        states[1].by_kernel[0] -= 1
        b.on_cta_done(1, 0, i, now=200)
    assert [(s, i) for s, _, i in dispatch(b, states, [kv])] == [(1, 12), (1, 13)]
    # CTAs 4 (not 1) retire on SM 0: two free slots but no whole pair: still delayed
    states[0].by_kernel[0] -= 1
    b.on_cta_done(0, 0, 4, now=300)
    assert dispatch(b, states, [kv]) == []
    states[0].by_kernel[0] -= 1
    b.on_cta_done(0, 0, 1, now=400)
    assert [(s, i) for s, _, i in dispatch(b, states, [kv])] == [(0, 14), (0, 15)]


def test_kernels_with_one_dimensional_ctas_are_round_robin_whatever_their_grid():
    b, port = _bcs()
    states = [SMState(0), SMState(1)]
    kv = kernel(n_ctas=20, grid=(20, 1, 1))
    assert [(s, i) for s, _, i in dispatch(b, states, [kv])] == [(0, 0), (1, 1)]
    # §4.2 "not applicable to workloads with one-dimensional CTAs": a 2x64 grid of 256x1
    # CTAs (montecarlo, the paper's EIP) is 1D; a 1D grid of 16x16 CTAs is 2D
    states = [SMState(0), SMState(1)]
    assert [(s, i) for s, _, i in dispatch(b, states, [kernel(n_ctas=128, grid=(2, 64, 1),
                                                              block=(256, 1, 1))])] == [(0, 0), (1, 1)]
    states = [SMState(0), SMState(1)]
    assert [(s, i) for s, _, i in dispatch(b, states, [kernel(n_ctas=20, grid=(20, 1, 1), block=SQ)])] == \
        [(0, 0), (0, 1), (1, 2), (1, 3)]
    assert port.groups[0].ctas == (0, 1) and port.groups[1].ctas == (2, 3)   # only blocks are declared
    everywhere, _ = _bcs(params=BCSParams(only_2d=False))
    states = [SMState(0), SMState(1)]
    assert [(s, i) for s, _, i in dispatch(everywhere, states, [kernel(n_ctas=20, grid=(20, 1, 1))])] == \
        [(0, 0), (0, 1), (1, 2), (1, 3)]


def test_the_odd_slot_is_filled_with_a_single_cta_by_default():
    b, port = _bcs()
    states = [SMState(0, limits={0: 3}), SMState(1, limits={0: 3})]
    kv = kernel(n_ctas=20, grid=(4, 5, 1), block=SQ)
    placed = dispatch(b, states, [kv]) + dispatch(b, states, [kv]) + dispatch(b, states, [kv])
    assert [(s, i) for s, _, i in placed] == [(0, 0), (0, 1), (1, 2), (1, 3), (0, 4), (1, 5)]
    assert states[0].by_kernel == {0: 3} and b.counts.blocks == 4
    assert [g.ctas for g in port.groups] == [(0, 1), (2, 3), (4,), (5,)]
    # the single CTA 4 retires: its slot takes a single again (the pair 0-1 still runs)
    states[0].by_kernel[0] -= 1
    b.on_cta_done(0, 0, 4, now=10)
    assert [(s, i) for s, _, i in dispatch(b, states, [kv])] == [(0, 6)]
    # one CTA of the pair retires: delayed, although a slot is free
    states[0].by_kernel[0] -= 1
    b.on_cta_done(0, 0, 0, now=20)
    assert dispatch(b, states, [kv]) == []
    states[0].by_kernel[0] -= 1
    b.on_cta_done(0, 0, 1, now=30)
    assert [(s, i) for s, _, i in dispatch(b, states, [kv])] == [(0, 7), (0, 8)]


def test_odd_slot_idle_leaves_it_empty():
    b, _ = _bcs(params=BCSParams(odd_slot="idle"))
    states = [SMState(0, limits={0: 3}), SMState(1, limits={0: 3})]
    kv = kernel(n_ctas=20, grid=(4, 5, 1), block=SQ)
    placed = dispatch(b, states, [kv]) + dispatch(b, states, [kv])
    assert [(s, i) for s, _, i in placed] == [(0, 0), (0, 1), (1, 2), (1, 3)]


def test_a_bad_odd_slot_is_refused():
    import pytest

    with pytest.raises(ValueError, match="odd_slot must be 'fill' or 'idle'"):
        BCSParams(odd_slot="pair")


def test_a_limit_through_the_port_bounds_the_pairs_and_the_odd_last_cta_goes_alone():
    b, _ = _bcs(params=BCSParams(odd_slot="idle"))
    states = [SMState(0, limits={0: 3}), SMState(1, limits={0: 3})]
    kv = kernel(n_ctas=5, grid=(1, 5, 1), block=SQ)
    placed = dispatch(b, states, [kv]) + dispatch(b, states, [kv])
    assert [(s, i) for s, _, i in placed] == [(0, 0), (0, 1), (1, 2), (1, 3)]   # limit 3: one pair each
    states[0].by_kernel[0] -= 2
    b.on_cta_done(0, 0, 0, now=10)
    b.on_cta_done(0, 0, 1, now=11)
    assert [(s, i) for s, _, i in dispatch(b, states, [kv])] == [(0, 4)]


def test_planned_ctas_the_dispatcher_skipped_leave_their_pair():
    b, port = _bcs()
    states = [SMState(0, cap=1), SMState(1)]       # SM 0 admits one CTA only: the pair is split
    kv = kernel(n_ctas=8, grid=(2, 4, 1), block=SQ)
    placed = dispatch(b, states, [kv])
    assert [(s, i) for s, _, i in placed] == [(0, 0), (1, 1), (1, 2)]
    again = dispatch(b, states, [kv])              # the next round drops the stale plan of CTA 3 ...
    assert b.open[(1, 0)][0] == {2}
    assert [(s, i) for s, _, i in again] == [(1, 3), (1, 4)] and b.planned[(0, 3)][1] == {3, 4}  # ... and replans it
    for s, _, i in placed:
        b.on_cta_admitted(cta(s, i, 0), now=1)
    assert b.counts.split == 1                     # CTA 1 was planned for SM 0
    # the SMs learn it: CTA 3 left its stale block (replanned with 4), CTA 1 left SM 0's
    assert (0, 3) in port.ungrouped and (0, 1) in port.ungrouped
    assert port.sm(0).dispatch_group(0, 1) is None and port.sm(1).dispatch_group(0, 4).ctas == (3, 4)


def test_lcs_bcs_throttles_2d_kernels_to_pairs_under_t_new():
    lb, port = _bcs(LazyBlockCTAScheduler)
    states = [SMState(0), SMState(1)]
    kv = kernel(n_ctas=40, grid=(4, 10, 1), block=SQ)
    for _ in range(3):
        dispatch(lb, states, [kv])
    assert states[0].by_kernel == {0: 6}
    # Eq. 1 on SM 0: 600 + 500 + 300 + 100 + 0 + 0 over 600 -> 2 (CTAs 0..? as resident)
    port.sm(0).ctas = [cta(0, i, n) for i, n in zip((1, 4, 5, 8, 9), (500, 300, 100, 0, 0))]
    lb.on_cta_retired(cta(0, 0, 600), now=50)
    assert port.sm(0).limits == {0: 2}
    states[0].limits = {0: 2}
    states[0].by_kernel[0] -= 1
    lb.on_cta_done(0, 0, 0, now=50)
    for i in (1, 4, 5):
        states[0].by_kernel[0] -= 1
        lb.on_cta_done(0, 0, i, now=60)
    # pairs (0,1) and (4,5) retired; two CTAs (8, 9) remain: limit 2 -> one pair slot, full
    assert [s for s, _, _ in dispatch(lb, states, [kv])] == []
    states[0].by_kernel[0] -= 2
    for i in (8, 9):
        lb.on_cta_done(0, 0, i, now=70)
    assert [(s, i) for s, _, i in dispatch(lb, states, [kv])] == [(0, 12), (0, 13)]
    assert lb.counts.decisions == 1 and lb.counts.t_new_sum == 2
