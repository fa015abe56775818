"""DRAM channel: exact command timing against the constructor's parameters (in the
style of Ramulator's `assert_gap(..., timings["nRCD"])`), FR-FCFS vs FCFS order,
bus turnaround, streaming bandwidth, address decoding, and dense == sparse."""

from __future__ import annotations

import random

import pytest

from tlpsim.timing.dram import (
    GTX480_TIMING_OPT,
    AddressMap,
    DramChannel,
    normalise_timing,
    parse_timing_opt,
)
from tlpsim.timing.engine import ClockDomain, Component, Engine
from tlpsim.timing.mem_types import MemRequest
from tlpsim.timing.queues import TimedQueue

DOM = ClockDomain("dram", 1082)  # ~924 MHz
GTX480 = {k: v for k, v in parse_timing_opt(GTX480_TIMING_OPT).items() if k.startswith("t")}
NO_BANK_GROUPS = dict(GTX480, tCCDL=0, tRTPL=0)
GEOM = dict(n_banks=16, n_bank_groups=4, row_bytes=4096, bus_width_bytes=4, burst_length=8, data_rate=4,
            chips_per_channel=2)   # GTX480: atom = 8 x 4 x 2 = 64 B, tBurst = 8 / 4 = 2
C0 = 1  # a request pushed at cycle 0 is visible (and ACTs) at cycle 1: TimedQueue delay 1


def addr(bank: int, row: int, col: int = 0) -> int:
    """Byte address for the default single-channel map: [chunk 8 b | bank 4 b | col-hi 4 b | row]."""
    return (row << 16) | ((col >> 8) << 12) | (bank << 8) | (col & 0xFF)


def rd(a: int, tok, mask: int = 0x1) -> MemRequest:
    return MemRequest("read", a, mask, 0, token=tok)


def wr(a: int, tok, mask: int = 0x1) -> MemRequest:
    return MemRequest("write", a, mask, 0, token=tok)


class Feeder(Component):
    """Mock L2 slice: pushes (cycle, request) items at their cycle, waiting while the queue is full."""

    def __init__(self, domain, queue: TimedQueue, items) -> None:
        super().__init__(domain)
        self.q, self.items, self.i = queue, sorted(items, key=lambda x: x[0]), 0
        queue.producer = self

    def busy(self) -> bool:
        return self.i < len(self.items)

    def tick(self, cycle: int) -> bool:
        pushed = False
        while self.i < len(self.items) and self.items[self.i][0] <= cycle:
            if not self.q.can_push():
                return pushed
            self.q.push(self.items[self.i][1], self.domain.time_of(cycle))
            self.i += 1
            pushed = True
        if self.i < len(self.items):
            self.wake_at(self.items[self.i][0])
        return pushed


class Sink(Component):
    """Mock L2 slice reply side: pops at most one reply every `every` cycles."""

    def __init__(self, domain, queue: TimedQueue, every: int = 1) -> None:
        super().__init__(domain)
        self.q, self.every, self.next_ok, self.got = queue, every, 0, []
        queue.consumer = self

    def busy(self) -> bool:
        return len(self.q) > 0

    def tick(self, cycle: int) -> bool:
        if not self.q.ready(self.domain.time_of(cycle)):
            return False
        if cycle < self.next_ok:
            self.wake_at(self.next_ok)
            return False
        self.got.append((cycle, self.q.pop().token))
        self.next_ok = cycle + self.every
        return True


def run(items, *, timing=GTX480, scheduler="frfcfs", dense=False, in_cap=64, out_cap=64, queue_size=64,
        every=1, geom=None, reverse=False, **kw):
    """Feeder -> in_queue -> DramChannel -> out_queue -> Sink; returns (channel, {token: done cycle}, sink)."""
    items = [(0, r) if isinstance(r, MemRequest) else r for r in items]
    iq, oq = TimedQueue("l2_to_dram", in_cap), TimedQueue("dram_to_l2", out_cap)
    done = {}
    sink = Sink(DOM, oq, every)
    ch = DramChannel(DOM, 0, **(geom or GEOM), timing=timing, scheduler=scheduler, queue_size=queue_size,
                     in_queue=iq, out_queue=oq, on_complete=lambda r, c: done.__setitem__(r.token, c), **kw)
    eng = Engine(dense=dense)
    comps = [Feeder(DOM, iq, items), ch, sink]
    for c in reversed(comps) if reverse else comps:  # tick order must not matter
        eng.add(c)
    eng.run()
    return ch, done, sink


T = GTX480
TB = GEOM["burst_length"] // GEOM["data_rate"]  # data-bus cycles per column burst
T_RCDWR = T["tRCD"] - (T["tWL"] + 1)
T_RTW = T["tCL"] + TB + 2 - T["tWL"]
T_WTR = T["tWL"] + TB + T["tCDLR"]
SAME_BANK_GAP = max(T["tCCD"], T["tCCDL"], TB)


def test_lone_read_is_act_rcd_cl_burst():
    ch, done, sink = run([rd(addr(3, 7), "a")])
    assert done["a"] == C0 + T["tRCD"] + T["tCL"] + TB
    assert sink.got == [(done["a"] + 1, "a")]  # the reply crosses out_queue (delay 1)
    s = ch.stats
    assert (s.activates, s.read_bursts, s.precharges, s.reads, s.writes) == (1, 1, 0, 1, 0)
    assert (s.row_misses, s.row_hits, s.row_conflicts) == (1, 0, 0)
    assert (s.bytes, s.useful_bytes, s.busy_bus_cycles) == (64, 32, TB)
    assert s.bank_activates[3] == 1 and s.read_latency_sum == done["a"] - C0


def test_full_line_read_takes_two_atoms_in_one_bank():
    ch, done, _ = run([rd(addr(0, 0), "a", mask=0xF)])
    assert done["a"] == C0 + T["tRCD"] + SAME_BANK_GAP + T["tCL"] + TB
    assert ch.stats.read_bursts == 2 and ch.stats.bytes == 128


def test_sector_pairs_share_an_atom():
    ch, _, _ = run([rd(addr(0, 0), "a", mask=0b0011), rd(addr(1, 0), "b", mask=0b0110)])
    assert ch.stats.read_bursts == 1 + 2  # sectors 1,2 straddle the two 64-byte atoms


@pytest.mark.parametrize("timing,gap", [(GTX480, SAME_BANK_GAP), (NO_BANK_GROUPS, GTX480["tCCD"]),
                                        (dict(NO_BANK_GROUPS, tCCD=5), 5)])
def test_row_hit_is_ccd_spaced(timing, gap):
    ch, done, _ = run([rd(addr(2, 9), "a"), rd(addr(2, 9, col=512), "b")], timing=timing)
    assert done["a"] == C0 + timing["tRCD"] + timing["tCL"] + TB
    assert done["b"] - done["a"] == gap
    assert (ch.stats.row_hits, ch.stats.activates) == (1, 1)


def test_row_conflict_waits_ras_rp_rcd():
    ch, done, _ = run([rd(addr(5, 1), "a"), rd(addr(5, 2), "b")])
    rd0 = C0 + T["tRCD"]
    pre = max(C0 + T["tRAS"], rd0 + TB, rd0 + T["tRTPL"])
    act1 = max(pre + T["tRP"], C0 + T["tRC"])
    assert done["a"] == rd0 + T["tCL"] + TB
    assert done["b"] == act1 + T["tRCD"] + T["tCL"] + TB
    s = ch.stats
    assert (s.activates, s.precharges, s.row_misses, s.row_conflicts) == (2, 1, 1, 1)
    assert s.bank_precharges[5] == 1


@pytest.mark.parametrize("trrd", [GTX480["tRRD"], 9])
def test_trrd_between_activates_to_different_banks(trrd):
    timing = dict(GTX480, tRRD=trrd)
    ch, done, _ = run([rd(addr(0, 0), "a"), rd(addr(1, 0), "b")], timing=timing)
    assert done["a"] == C0 + T["tRCD"] + T["tCL"] + TB
    assert done["b"] - done["a"] == trrd
    assert ch.stats.activates == 2


def _hit_vs_miss(scheduler):
    return run([rd(addr(4, 0), "A"), rd(addr(4, 1), "B"), rd(addr(4, 0, col=256), "C")], scheduler=scheduler)


def test_frfcfs_serves_younger_row_hit_before_older_miss():
    ch, done, sink = _hit_vs_miss("frfcfs")
    assert [t for _, t in sink.got] == ["A", "C", "B"]
    assert done["C"] - done["A"] == SAME_BANK_GAP
    assert (ch.stats.row_hits, ch.stats.row_conflicts) == (1, 1)


def test_fcfs_serves_strictly_in_order():
    ch, done, sink = _hit_vs_miss("fcfs")
    assert [t for _, t in sink.got] == ["A", "B", "C"]
    assert done["A"] < done["B"] < done["C"]
    assert (ch.stats.row_hits, ch.stats.row_conflicts, ch.stats.precharges) == (0, 2, 2)


def test_write_then_read_turnaround():
    ch, done, sink = run([wr(addr(0, 0), "w"), rd(addr(0, 0, col=64), "r")])
    wr_cmd = C0 + T_RCDWR
    rd_cmd = max(C0 + T["tRCD"], wr_cmd + T_WTR, wr_cmd + T["tCCDL"])
    assert done["w"] == wr_cmd + T["tWL"] + TB
    assert done["r"] == rd_cmd + T["tCL"] + TB
    assert [t for _, t in sink.got] == ["r"]  # writes complete silently
    assert (ch.stats.writes, ch.stats.write_bursts, ch.stats.reads) == (1, 1, 1)


def test_read_then_write_turnaround():
    _, done, _ = run([rd(addr(0, 0), "r"), wr(addr(0, 0, col=64), "w")])
    rd_cmd = C0 + T["tRCD"]
    wr_cmd = max(C0 + T_RCDWR, rd_cmd + T_RTW, rd_cmd + T["tCCDL"])
    assert done["r"] == rd_cmd + T["tCL"] + TB
    assert done["w"] == wr_cmd + T["tWL"] + TB


def test_write_recovery_before_precharge():
    _, done, _ = run([wr(addr(6, 0), "w"), rd(addr(6, 1), "r")])
    wr_cmd = C0 + T_RCDWR
    pre = max(C0 + T["tRAS"], wr_cmd + T["tWL"] + TB + T["tWR"])
    act = max(pre + T["tRP"], C0 + T["tRC"])
    assert done["r"] == act + T["tRCD"] + T["tCL"] + TB


@pytest.mark.parametrize("kind", ["read", "write"])
def test_streaming_row_hits_reach_bus_peak(kind):
    n = 2048
    reqs = [MemRequest(kind, i * 128, 0xF, 0, token=i) for i in range(n)]
    ch, done, _ = run(reqs, in_cap=16)
    s = ch.stats
    assert s.bytes == n * 128 and s.busy_bus_cycles == n * 2 * TB
    span = done[n - 1] - (min(done.values()) - TB)  # first data beat .. last data beat
    assert s.busy_bus_cycles / span > 0.97
    assert s.row_hits / n > 0.95


def test_return_queue_backpressure_blocks_reads_without_losing_any():
    iq, oq = TimedQueue("in", 8), TimedQueue("out", 2)
    eng = Engine()
    ch = eng.add(DramChannel(DOM, 0, **GEOM, timing=GTX480, scheduler="frfcfs", queue_size=8,
                             in_queue=iq, out_queue=oq, return_queue_size=2))
    for b in range(6):
        iq.push(rd(addr(b, 0), b), 0)
    # nobody drains out_queue: 2 replies in it, 2 finished reads wait in the channel's
    # return buffer (return_queue_size=2), and the last 2 reads are not issued
    eng.run()
    s = ch.stats
    assert (len(oq), s.read_bursts, s.reads, ch.busy()) == (2, 4, 4, True) and s.reply_stall_cycles > 0
    assert [oq.pop().token, oq.pop().token] == [0, 1]  # popping a full queue wakes the channel
    eng.run()
    assert (len(oq), s.read_bursts, s.reads) == (2, 6, 6)
    assert [oq.pop().token, oq.pop().token] == [2, 3]
    eng.run()
    assert [oq.pop().token, oq.pop().token] == [4, 5] and not ch.busy()


def _random_traffic(seed: int, n: int = 300):
    rng = random.Random(seed)
    items, t = [], 0
    for i in range(n):
        t += rng.choice([0, 0, 0, 1, 2, 40])
        a = addr(rng.randrange(16), rng.randrange(3), rng.randrange(0, 4096, 128))
        kind = "write" if rng.random() < 0.3 else "read"
        items.append((t, MemRequest(kind, a, rng.randrange(1, 16), 0, token=i)))
    return items


@pytest.mark.parametrize("scheduler", ["frfcfs", "fcfs"])
def test_dense_and_sparse_agree(scheduler):
    """Same stats, completion cycles and reply arrivals ticking densely or sparsely, in
    either component order, under back-pressure on both queues."""
    results = []
    for dense, reverse in ((True, False), (False, False), (True, True), (False, True)):
        ch, done, sink = run(_random_traffic(7), scheduler=scheduler, dense=dense, reverse=reverse, in_cap=4,
                             out_cap=2, queue_size=8, every=12)
        results.append((ch.stats.to_dict(), done, sink.got))
    assert all(r == results[0] for r in results[1:])
    stats = results[0][0]
    assert stats["reads"] + stats["writes"] == 300
    assert stats["row_hits"] and stats["row_conflicts"] and stats["reply_stall_cycles"]


# ------------------------------------------------------------------ address mapping

GTX480_MAP = "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS"


def test_gtx480_mapping_six_channels_uses_modulo():
    m = AddressMap.from_gpgpusim(GTX480_MAP, 6)
    assert m.n_banks == 16
    assert m.decode(0x100)[:5] == (1, 0, 0, 0, 0)            # chip = (addr >> 8) % 6
    assert m.decode(0x600)[:5] == (0, 1, 0, 0, 0)            # quotient 1 -> local bit 8 = bank bit 0
    a = (6 * 0x12345 + 4) << 8 | 0xC7                         # local address 0x12345 << 8 | 0xC7
    d = m.decode(a)
    local = 0x12345 << 8 | 0xC7
    assert d.chip == 4
    assert d.bank == ((local >> 8) & 1) | (((local >> 13) & 7) << 1)
    assert d.col == (local & 0xFF) | (((local >> 9) & 0xF) << 8)
    assert d.row == (local >> 16) & 0xFFF and d.burst == 0xC7 & 0x3F
    assert d.as_tuple() == (4, 0b0101, 0x123, 0x2C7, 0x07, 4)


def test_partition_address_drops_channel_and_sub_partition_bits():
    """GPGPU-Sim's partition_address: the chip digit (modulo 6 at bit 8) and the
    sub-partition bit (the lowest bank bit, local bit 8) are removed, so an L2 slice
    indexes its 64 sets with bits that vary inside the slice."""
    m = AddressMap.from_gpgpusim(GTX480_MAP, 6, n_sub_partitions=2)
    a = 63 * 256 + 17                    # addr >> 8 = 63: chip 3, local (10 << 8) | 17, bank bit 0 = 0
    assert m.partition_of(a) == 6 and m.partition_address(a) == (5 << 8) | 17
    lines: dict[int, list[int]] = {}
    for line in range(0, 768 * 1024, 128):   # the L2's capacity: every set of every slice once per way
        lines.setdefault(m.partition_of(line), []).append((m.partition_address(line) >> 7) & 63)
    assert sorted(lines) == list(range(12))
    assert all(sorted(sets) == sorted(list(range(64)) * 8) for sets in lines.values())
    p2 = AddressMap.from_gpgpusim(GTX480_MAP, 8, n_sub_partitions=2)   # power of two: chip bits 8-10
    b = (0x5A << 11) | (5 << 8) | 0x33
    assert p2.partition_of(b) == 5 * 2 + (0x5A & 1)
    assert p2.partition_address(b) == (0x5A >> 1) << 8 | 0x33


def test_power_of_two_channels_insert_chip_bits():
    m = AddressMap.from_gpgpusim(GTX480_MAP, 8, n_sub_partitions=2)
    a = (5 << 8) | (1 << 11) | (3 << 16) | (0xA << 12) | 0x40 | (1 << 19)
    d = m.decode(a)
    # chip bits 8..10; bank bits 8,13,14,15 move to 11,16,17,18; col 9..12 -> 12..15; row 16.. -> 19..
    assert (d.chip, d.bank, d.col, d.row) == (5, 0b0111, 0x40 | (0xA << 8), 1)
    assert d.sub_partition == 5 * 2 + 1


def test_explicit_d_bits_and_errors():
    m = AddressMap.from_gpgpusim("0" * 48 + "RRRR.BBDD.CCCC.CCCC", 4)
    assert m.decode(0b0101_10_11_0000_0001)[:4] == (0b11, 0b10, 0b0101, 1)
    with pytest.raises(ValueError, match="64"):
        AddressMap.from_gpgpusim("RRBB", 1)
    with pytest.raises(ValueError, match="invalid character"):
        AddressMap.from_gpgpusim("X" * 64, 1)
    with pytest.raises(ValueError, match="power of two"):
        AddressMap.from_gpgpusim("0" * 62 + "DD", 3)


def test_interleaved_default_map():
    m = AddressMap.interleaved(6, 16, 4096)
    d = m.decode(7 * 256 + 5)                  # 7th chunk: channel 1, local chunk 1 -> bank 1
    assert (d.chip, d.bank, d.row, d.col) == (1, 1, 0, 5)
    one = AddressMap.interleaved(1, 16, 4096)
    assert one.decode(addr(9, 3, col=0x345))[:4] == (0, 9, 3, 0x345)


def test_channel_with_gtx480_map_serves_its_own_addresses_only():
    iq, oq = TimedQueue("in", 4), TimedQueue("out", 4)
    m = AddressMap.from_gpgpusim(GTX480_MAP, 6)
    ch = DramChannel(DOM, 2, **GEOM, timing=GTX480, scheduler="frfcfs", queue_size=4, in_queue=iq,
                     out_queue=oq, address_map=m)
    eng = Engine()
    eng.add(ch)
    iq.push(rd((6 * 5 + 2) << 8, "mine"), 0)   # channel 2, local 5 << 8: bank 1, row 0
    eng.run()
    assert oq.pop().token == "mine" and ch.stats.bank_activates[1] == 1
    iq.push(rd(3 << 8, "theirs"), eng.now)     # channel 3
    with pytest.raises(ValueError, match="channel 3"):
        eng.run()


# ------------------------------------------------------------------ parameters

def test_gpgpusim_timing_names_and_validation():
    raw = {k[1:]: v for k, v in GTX480.items()}          # CCD=2, RRD=6, ...
    assert normalise_timing(raw) == GTX480
    _, d1, _ = run([rd(addr(0, 0), "a")], timing=raw)
    _, d2, _ = run([rd(addr(0, 0), "a")], timing=GTX480)
    assert d1 == d2
    with pytest.raises(ValueError, match="tWR"):
        normalise_timing({k: v for k, v in GTX480.items() if k != "tWR"})
    with pytest.raises(ValueError, match="tFOO"):
        normalise_timing(dict(GTX480, tFOO=1))
    with pytest.raises(ValueError, match="frfcfs, fcfs"):
        run([], scheduler="fifo")
