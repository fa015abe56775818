"""CCWS's caches (the load-permission set per cycle, each warp's next-is-a-load) make
the same choices as the plain rule: the rule written out without them, on random
hand-made event sequences, and on a kernel in the simulator."""

from __future__ import annotations

import random
from types import SimpleNamespace

from fakes import FakeSMPort, warp

from tlpsim.policies.warp.ccws import CacheConsciousWavefront, CCWSParams
from tlpsim.timing.static import K_ALU, K_MEM


def plain_allowed(self, now):
    """The stack as the description states it: sort by score, walk to the cutoff."""
    if now >= self.hot_until:
        return None
    cutoff = len(self.score) * self.params.base_score
    stack = sorted(self.score, key=lambda s: (-self.current_score(s, now), self.age_of.get(s, 0)))
    out, below = set(), 0.0
    for s in stack:
        if below >= cutoff:
            break
        out.add(s)
        below += self.current_score(s, now)
    return out


def plain_is_load(self, w):
    si = self.port.kernel(w.kid).static.instrs[self.port.warp_pc(w.slot)]
    return si.kind == K_MEM and si.long_wait


class PlainCCWS(CacheConsciousWavefront):
    allowed = plain_allowed
    _is_load = plain_is_load


def _pair():
    instrs = [SimpleNamespace(kind=K_MEM, long_wait=True), SimpleNamespace(kind=K_ALU, long_wait=False),
              SimpleNamespace(kind=K_MEM, long_wait=False)]
    port = FakeSMPort(0)
    port.kernels[0] = SimpleNamespace(static=SimpleNamespace(instrs=instrs))
    params = CCWSParams(vta_entries=4, vta_assoc=2, k_throttle=20.0)
    return (CacheConsciousWavefront(params, n_slots=16, index=0, port=port),
            PlainCCWS(params, n_slots=16, index=0, port=port), port)


def test_cached_choices_equal_the_plain_rule_on_random_event_sequences():
    for seed in range(20):
        rng = random.Random(seed)
        fast, plain, port = _pair()
        views, next_age = {}, 0
        for now in range(400):
            # warps come and go; a slot is reused by a warp of a new age
            free = [s for s in range(8) if s not in views]
            if free and rng.random() < 0.1:
                slot = rng.choice(free)
                views[slot] = warp(slot=slot, age=next_age)
                next_age += 1
                port.pcs[slot] = rng.randrange(3)
                for c in (fast, plain):
                    c.on_warp_started(views[slot], now)
            if views and rng.random() < 0.03:
                slot = rng.choice(sorted(views))
                del views[slot]
                for c in (fast, plain):
                    c.on_finish(slot)
            # L1D traffic over a few lines, so victim tags hit and scores rise
            for _ in range(rng.randrange(3)):
                if views:
                    w = views[rng.choice(sorted(views))]
                    line, evicted = 128 * rng.randrange(12), 128 * rng.randrange(12) if rng.random() < 0.7 else -1
                    outcome = "miss" if rng.random() < 0.8 else "hit"
                    for c in (fast, plain):
                        c.on_l1d_access(w, line, outcome, evicted, now)
            ready = [views[s] for s in sorted(views) if rng.random() < 0.7]
            assert fast.allowed(now) == plain.allowed(now)
            if rng.random() < 0.3:  # order() as the issue stage asks it after choose() in one cycle
                assert [w.slot for w in fast.order(ready, now)] == [w.slot for w in plain.order(ready, now)]
            a, b = fast.choose(ready, now), plain.choose(ready, now)
            assert (a and a.slot) == (b and b.slot)
            if a is not None:
                for c in (fast, plain):
                    c.on_issue(a, now, False)
                port.pcs[a.slot] = rng.randrange(3)  # a warp's next instruction changes when it issues
        assert fast.counts.load_blocks == plain.counts.load_blocks
        assert fast.counts.vta_hits == plain.counts.vta_hits


def test_the_simulator_gives_the_plain_rules_statistics(monkeypatch):
    from test_cta_study_e2e import _cfg, _reuse
    cfg = _cfg(**{"sm.warp_scheduler": "ccws"})
    fast = _reuse(cfg)
    monkeypatch.setattr(CacheConsciousWavefront, "allowed", plain_allowed)
    monkeypatch.setattr(CacheConsciousWavefront, "_is_load", plain_is_load)
    plain = _reuse(cfg)
    assert fast.stats.plugins["warp_scheduler.ccws"]["load_blocks"] > 0
    a, b = fast.stats.to_dict(), plain.stats.to_dict()
    a.pop("wall_seconds"), b.pop("wall_seconds")
    assert a == b
