"""SCA (Lee et al. HPCA'14 §4.2), TLV (Narasiman et al. MICRO'11) and CCWS (Rogers
et al. MICRO'12) on hand-made warp views: exact choices, cycle by cycle."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from fakes import FakeSMPort, cta, warp

from tlpsim.policies.warp.ccws import CacheConsciousWavefront, CCWSParams, VictimTags
from tlpsim.policies.warp.sca import SequentialCTAAware
from tlpsim.policies.warp.tlv import FetchGroupTwoLevel, TLVParams
from tlpsim.timing.static import K_ALU, K_MEM


# ---------------------------------------------------------------- SCA

def _pair_warps():
    """CTAs 0 and 1 (a BCS pair), 3 warps each, slots 0-2 and 3-5, all on scheduler 0."""
    ws = [warp(slot=c * 3 + i, age=c * 3 + i, cta_index=c, gwarp=c * 3 + i) for c in (0, 1) for i in range(3)]
    return ws


def _sca(ws, blocks=((0, 1),)):
    """SCA on SM 0 whose CTA scheduler dispatched `blocks` (CTA indices) as groups."""
    port = FakeSMPort(0)
    for gid, ctas in enumerate(blocks, 1):
        port.group(0, gid, ctas)
    s = SequentialCTAAware(None, n_slots=8, index=0, port=port)
    for c in sorted({w.cta_index for w in ws}):
        s.on_cta_admitted(cta(0, c, 0, n_warps=3), 0)
    for w in ws:
        s.on_warp_started(w, 0)
    return s, port


def _issue(s, ready, now):
    w = s.choose(ready, now)
    s.on_issue(w, now, False)
    return w.slot


def test_sca_alternates_between_the_pairs_warps_while_both_are_ready():
    ws = _pair_warps()
    s, _ = _sca(ws)
    assert [_issue(s, ws, t) for t in range(4)] == [0, 3, 0, 3]    # warp 0 of CTA 0, warp 0 of CTA 1, ...


def test_sca_moves_to_the_next_group_of_the_pair_when_one_warp_stalls():
    ws = _pair_warps()
    s, port = _sca(ws)
    assert _issue(s, ws, 0) == 0
    port.blocked[3] = "memory"                  # warp 0 of CTA 1 waits on a load: group (pair, warp 0) stalls
    no3 = [w for w in ws if w.slot != 3]
    assert _issue(s, no3, 1) == 1               # next group: warp 1 of both CTAs
    assert _issue(s, no3, 2) == 4
    only = [ws[0]]                              # only one warp of the pair can issue at all
    assert _issue(s, only, 3) == 0


def test_sca_stays_greedy_on_its_group_while_a_warp_merely_cannot_issue_this_cycle():
    ws = _pair_warps()
    s, port = _sca(ws)
    assert _issue(s, ws, 0) == 0
    no3 = [w for w in ws if w.slot != 3]
    port.blocked[3] = "scoreboard"              # a short dependence: not a stall, the group keeps priority
    assert [_issue(s, no3, t) for t in (1, 2)] == [0, 0]
    assert _issue(s, ws, 3) == 3                # ready again: alternation resumes
    no03 = [w for w in ws if w.slot not in (0, 3)]
    port.blocked[0] = "fetch"                   # neither can issue: the next group of the pair
    assert _issue(s, no03, 4) == 1
    g0 = s.group_of[0]
    for why, stalled in (("barrier", True), ("memory", True), ("scoreboard", False), ("fetch", False)):
        port.blocked[3] = why                   # long-latency waits stall the group, short ones do not
        assert s._stalled(g0, [ws[0]]) is stalled


def test_sca_pairs_the_ctas_bcs_dispatched_together_not_by_index():
    # CTA 0 came alone (an odd slot, or T_new = 1), CTAs 1 and 2 as a block: pairing by
    # index // 2 would group CTA 0 with 1 and leave 2 alone
    ws = [warp(slot=c * 3 + i, age=c * 3 + i, cta_index=c, gwarp=c * 3 + i) for c in (0, 1, 2) for i in range(3)]
    s, _ = _sca(ws, blocks=((0,), (1, 2)))
    assert s.group_of[3] == s.group_of[6] != s.group_of[0]
    no_cta0 = [w for w in ws if w.cta_index != 0]
    assert [_issue(s, no_cta0, t) for t in range(4)] == [3, 6, 3, 6]
    s2, _ = _sca(ws, blocks=())                 # nothing declared (BCS off): every CTA is its own block
    assert len({s2.group_of[k] for k in (0, 3, 6)}) == 3 and _issue(s2, no_cta0, 0) == 3
    assert _issue(s2, no_cta0, 1) == 3          # greedy: a group of one warp


def test_sca_falls_back_to_the_oldest_pair():
    ws = _pair_warps() + [warp(slot=6, age=6, cta_index=2, gwarp=6), warp(slot=7, age=7, cta_index=3, gwarp=9)]
    s, _ = _sca(ws, blocks=((0, 1), (2, 3)))
    assert _issue(s, [ws[6], ws[7]], 0) == 6     # block (CTAs 2, 3), group of warp 0 of CTA 2
    s.on_finish(6)
    assert s.group_of.get(6) is None and _issue(s, [ws[7]], 1) == 7


def test_sca_ignores_other_schedulers_warps():
    s = SequentialCTAAware(None, n_slots=8, index=1, port=FakeSMPort(0))
    s.on_warp_started(warp(slot=0, age=0, sched=0), 0)
    assert s.members == {}


# ---------------------------------------------------------------- TLV

def test_tlv_stays_on_a_fetch_group_until_all_its_warps_stall():
    t = FetchGroupTwoLevel(TLVParams(group_size=2), n_slots=6, n_schedulers=1)
    ws = [warp(slot=k, age=k) for k in range(6)]        # groups {0,1} {2,3} {4,5}
    assert [t.fetch_group(k) for k in range(6)] == [0, 0, 1, 1, 2, 2]
    picks = []
    for now, ready in enumerate([ws, ws, ws[1:], ws[2:], ws[3:], [ws[0], ws[4]]]):
        w = t.choose(ready, now)
        t.on_issue(w, now, False)
        picks.append(w.slot)
    # round robin in group 0 (0, 1, 1), group 0 stalled -> group 1 (2, 3), then group 2 (4)
    assert picks == [0, 1, 1, 2, 3, 4]
    w = t.choose([ws[0], ws[2]], 9)                     # group 2 stalled: next group round robin is 0
    assert w.slot == 0
    assert [v.slot for v in t.order([ws[5], ws[2], ws[0]], 10)][0] == 0


def test_tlv_groups_a_units_own_slots():
    t = FetchGroupTwoLevel(TLVParams(group_size=2), n_slots=8, n_schedulers=2)
    # scheduler units own alternate slots: unit-local slots 0,1 -> group 0; 2,3 -> group 1
    assert [t.fetch_group(s) for s in (0, 2, 4, 6, 1, 3, 5, 7)] == [0, 0, 1, 1, 0, 0, 1, 1]
    with pytest.raises(ValueError):
        TLVParams(group_size=0)


# ---------------------------------------------------------------- CCWS

def test_victim_tags_are_set_associative_lru_and_a_hit_removes_the_tag():
    v = VictimTags(entries=4, assoc=2, line_bytes=128)   # 2 sets
    for line in (0, 256, 512):                           # all set 0: the first is evicted
        v.insert(line)
    assert v.sets == [[256, 512], []]
    v.insert(128)
    assert v.sets[1] == [128]
    assert v.probe(256) and not v.probe(256) and not v.probe(0)


def _ccws(n_warps=2, **params):
    instrs = [SimpleNamespace(kind=K_MEM, long_wait=True), SimpleNamespace(kind=K_ALU, long_wait=False)]
    port = FakeSMPort(0)
    port.kernels[0] = SimpleNamespace(static=SimpleNamespace(instrs=instrs))
    c = CacheConsciousWavefront(CCWSParams(**params), n_slots=8, index=0, port=port)
    ws = [warp(slot=k, age=k) for k in range(n_warps)]
    for w in ws:
        c.on_warp_started(w, 0)
    return c, port, ws


def test_ccws_detects_lost_locality_and_raises_the_score_by_eq1():
    c, port, (a, b) = _ccws()
    for t in range(10):
        c.on_issue(a, t, False)                          # 10 instructions issued
    c.on_l1d_access(a, 0x1000, "miss", -1, 10)           # A allocates line 0x1000
    c.on_l1d_access(b, 0x2000, "miss", 0x1000, 11)       # B's miss evicts it: into A's VTA
    c.on_l1d_access(b, 0x3000, "hit", -1, 12)
    assert c.counts.vta_hits == 0
    c.on_l1d_access(a, 0x1000, "miss", 0x2000, 20)       # A misses on it again: lost locality
    assert c.counts.vta_hits == 1
    # score += (1 VTA hit / 10 instructions) x K 8 x cutoff (2 warps x 100) = 160
    assert c.current_score(0, 20) == pytest.approx(260.0)
    assert c.current_score(0, 80) == pytest.approx(200.0)     # decays 1 point per cycle
    assert c.current_score(0, 500) == 100.0
    assert c.vta[1].sets[0x2000 // 128 % 2] == [0x2000]        # B's evicted line went to B's VTA


def test_ccws_keeps_low_score_warps_from_issuing_loads_only():
    c, port, (a, b) = _ccws()
    c.score[0] = (300.0, 0)                              # A lost locality: 300 vs cutoff 200
    c.hot_until = 200
    assert c.allowed(0) == {0}                           # B starts at 300 >= 200 in the stack
    port.pcs = {0: 1, 1: 1}                              # both at an ALU op: B may issue
    assert c.choose([b], 0) is b and c.counts.load_blocks == 0
    c.on_issue(b, 0, False)
    port.pcs = {0: 1, 1: 0}                              # then A at an ALU op, B at a load
    assert c.choose([a, b], 1) is a and c.counts.load_blocks == 1
    assert list(c.order([b], 1)) == []                   # B's load may not issue
    assert c.allowed(150) == {0, 1}                      # A decayed to 150: 150 < 200, B fits
    assert c.allowed(200) is None                        # all back at the base: no throttling


def test_ccws_forgets_finished_warps_and_other_units_lines():
    c, port, (a, b) = _ccws()
    c.on_l1d_access(a, 0x1000, "miss", -1, 1)
    c.on_finish(0)
    c.on_l1d_access(b, 0x2000, "miss", 0x1000, 2)        # the owner finished: no VTA to fill
    assert 0 not in c.vta and c.owner == {0x2000: (1, 1)}
    other = warp(slot=5, age=5, sched=1)
    c.on_l1d_access(other, 0x3000, "miss", -1, 3)        # another unit's warp: not tracked here
    assert 0x3000 not in c.owner
