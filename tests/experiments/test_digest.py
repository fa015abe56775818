"""The lcs_bcs digest reads cache miss rates as GPGPU-Sim prints them."""

from tlpsim.experiments.lcs_bcs.analysis import digest


def _record() -> dict:
    # 10 L1 accesses: 2 hits, 5 pending hits (merged into a line in flight), 3 misses;
    # 8 L2 accesses over two slices: 4 hits, 2 pending hits, 1 miss, 1 sector miss
    sm = {"l1d_accesses": 10, "l1d_hits": 2, "l1d_pending_hits": 5, "l1d_misses": 3}
    slices = [{"accesses": 5, "hits": 3, "pending_hits": 1, "misses": 1, "sector_misses": 0},
              {"accesses": 3, "hits": 1, "pending_hits": 1, "misses": 0, "sector_misses": 1}]
    stats = [{"kernel": "k", "cycles": 100, "ctas_per_sm_limit": 2, "sm_cycles": {}, "per_sm": [sm],
              "components": {"l2_accesses": 8, "l2_hits": 4, "l2_slices": slices}}]
    return {"verified": True, "stats": stats, "launches": [{"grid": [4, 1, 1], "block": [16, 16, 1]}],
            "config": {"gpu": {"n_sms": 1}}}


def test_pending_hits_are_not_misses():
    d = digest(_record())
    assert d.l1_miss_rate == 3 / 10      # not 1 - 2/10: the 5 merges fetched nothing
    assert d.l2_miss_rate == 2 / 8       # MISS and SECTOR_MISS, not the 2 pending hits


def test_no_accesses_is_zero():
    r = _record()
    r["stats"][0]["per_sm"][0].update(l1d_accesses=0, l1d_misses=0)
    r["stats"][0]["components"].update(l2_accesses=0, l2_slices=[])
    d = digest(r)
    assert (d.l1_miss_rate, d.l2_miss_rate) == (0.0, 0.0)
