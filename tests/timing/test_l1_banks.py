"""L1D banks (l1d.banks; GPGPU-Sim's gpgpu_l1_banks with sector interleaving, as its
Volta model has it): up to `banks` accesses of one memory instruction enter the L1's
latency pipeline a cycle, while no two need the same bank, and as many tag lookups
leave it. A sectored L1's banks interleave by 32-byte sector, so a line's sectors are
in different banks; a line-filled L1's by line. One bank is the old one-a-cycle L1."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tlpsim.config.loader import load_config
from tlpsim.timing.cache_port import CachePort
from tlpsim.timing.ldst import LdstUnit, _Instr
from tlpsim.timing.mem_types import READ

def unit(banks: int = 4, sectored: bool = True) -> tuple[LdstUnit, CachePort]:
    """The LD/ST unit of a one-SM h200 (its L1D: 4 sets, a 28-cycle pipeline) with `banks`."""
    from tlpsim.session import build_gpu

    cfg = load_config("h200", {"gpu.n_sms": 1, "l1d.banks": banks, "l1d.sectored": sectored})
    u = build_gpu(cfg).sms[0].ldst
    return u, u.l1d


PIPE = load_config("h200").l1d.hit_latency


def entered(u: LdstUnit, l1d: CachePort, accesses: list[tuple[int, int]], cycles: int) -> list[int]:
    """The cycle each access of one load entered the pipeline, ticking from cycle 10."""
    u.cur = _Instr(SimpleNamespace(inflight=0, view="w"), 1, list(accesses), READ, l1d, None)
    u.cur.ready = 10
    seen: list[int] = []
    for now in range(10, 10 + cycles):
        before = len(u.l1pipe)
        u.tick(now)
        seen += [now] * (len(u.l1pipe) - before)
    return seen


def lines(n: int, sector: int | None = None) -> list[tuple[int, int]]:
    """n accesses to lines of different sets, one sector each (the k-th's sector k mod 4, or `sector`)."""
    return [(k * 128, 1 << (k % 4 if sector is None else sector)) for k in range(n)]


def test_four_banks_take_four_single_sector_accesses_a_cycle():
    u, l1d = unit(4)
    assert entered(u, l1d, lines(8), 3) == [10, 10, 10, 10, 11, 11, 11, 11]
    u, l1d = unit(banks=1)
    assert entered(u, l1d, lines(8), 9) == list(range(10, 18))          # one bank: one a cycle


def test_a_bank_conflict_ends_the_cycles_accesses():
    u, l1d = unit(4)
    # sectors 0, 1, 1, 2: the third needs bank 1 again, so it and what follows wait a cycle
    acc = [(0, 0b0001), (128, 0b0010), (256, 0b0010), (384, 0b0100)]
    assert entered(u, l1d, acc, 3) == [10, 10, 11, 11]
    u, l1d = unit(4)
    assert entered(u, l1d, lines(4, sector=0), 5) == [10, 11, 12, 13]   # all in bank 0


def test_a_whole_line_takes_every_bank():
    u, l1d = unit(4)
    acc = [(0, 0xF), (128, 0b0001), (256, 0xF)]
    assert entered(u, l1d, acc, 4) == [10, 11, 12]


def test_a_line_filled_l1_interleaves_by_line():
    u, l1d = unit(banks=2, sectored=False)
    acc = [(0, 0xF), (128, 0xF), (256, 0xF), (512, 0xF)]                 # banks 0, 1, 0, 0
    assert entered(u, l1d, acc, 4) == [10, 10, 11, 12]


def test_the_lookups_leave_the_pipeline_as_they_entered():
    u, l1d = unit(4)
    entered(u, l1d, lines(8), PIPE + 1)                 # cycles 10 .. 10 + PIPE
    assert l1d.stats.misses == 4 and len(u.l1pipe) == 4  # the first four looked up at 10 + PIPE
    u.tick(11 + PIPE)
    assert l1d.stats.misses == 8 and len(u.l1pipe) == 0
    queued = [r.addr for _, r in u.missq.entries()]
    assert queued == [k * 128 for k in range(8)][8 - len(queued):]   # in order, one a cycle to the crossbar


@pytest.mark.parametrize("preset, banks", [("gtx480", 1), ("gtx980", 2), ("h200", 4)])
def test_presets_wire_their_banks(preset, banks):
    from tlpsim.session import build_gpu

    cfg = load_config(preset, {"gpu.n_sms": 1})
    assert cfg.l1d.banks == banks and build_gpu(cfg).sms[0].ldst.p.l1_banks == banks
