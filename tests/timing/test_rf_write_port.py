"""GPGPU-Sim's register banks have one port: in a cycle a bank does a write or a read,
and the write goes first (opndcoll_rfu_t::writeback allocates the bank before
allocate_reads grants reads the banks left). sm.rf_bank_writes_block_reads models it:
a write is booked when it is scheduled and the operand reads booked from then on skip
the cycles their bank's writes fill. Exact cycles on the banks alone (GTX480's 16
banks, ID_OC register: the first read 2 cycles after issue), then the writeback's
booking end to end."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
from tlpsim.config.loader import load_config
from tlpsim.policies.operands.banked_rf import BankedRegisterFile
from tlpsim.policies.registry import register, unregister
from tlpsim.timing.regbanks import RegisterBanks
from tlpsim.timing.static import UNIT_IDS

SP = UNIT_IDS["sp"]


def _banks(**kw) -> RegisterBanks:
    args = dict(n_banks=16, collectors={"sp": 6, "sfu": 8, "dp": 6, "ldst": 2}, read_delay=1, n_schedulers=2,
                issue_widths={"sp": 2, "sfu": 1, "dp": 0, "ldst": 1}, writes_block_reads=True)
    args.update(kw)
    return RegisterBanks(**args)


def test_a_write_takes_its_bank_for_the_cycle_and_the_read_waits_one():
    b = _banks()
    b.book_write(0, 0, (5,), 2)                       # warp slot 0: register 5 is in bank 5
    # issued at 0: collector at 1, reads from 2; bank 5 is written at 2, so the read is at 3
    assert b.try_read_id(0, 0, SP, (5,), 0) == 4
    assert b.stats.bank_conflict_cycles == 1
    assert b.try_read_id(0, 0, SP, (6,), 0) == 3      # another bank reads at 2
    assert b.stats.bank_conflict_cycles == 1


def test_without_the_rule_the_write_has_a_port_of_its_own():
    b = _banks(writes_block_reads=False)
    b.book_write(0, 0, (5,), 2)                       # (nothing to book: the write port is separate)
    assert b.write_booked == {}
    assert b.try_read_id(0, 0, SP, (5,), 0) == 3
    assert b.write(0, 0, (5,), 2) == 2
    assert b.stats.bank_conflict_cycles == 0


def test_the_warp_slot_shifts_the_bank_and_each_source_skips_only_its_own():
    b = _banks()
    b.book_write(3, 0, (2, 9), 2)                     # slot 3: banks 5 and 12
    # sources 2 (bank 2), 5 (bank 5): bank 5 waits for the write, bank 2 does not
    assert b.try_read_id(0, 0, SP, (2, 5), 0) == 4
    assert b.stats.bank_conflict_cycles == 1
    # consecutive writes to bank 12 at 5 and 6: a read due at 5 goes at 7
    b.book_write(3, 0, (9,), 5)
    b.book_write(3, 0, (9,), 6)
    assert b.try_read_id(0, 0, SP, (12,), 3) == 8
    assert b.stats.bank_conflict_cycles == 3


def test_reads_queued_on_a_bank_step_over_its_write():
    b = _banks()
    b.book_write(0, 0, (5,), 3)
    # two sources in bank 5 (5 and 21): read at 2, the write takes 3, the second read 4
    assert b.try_read_id(0, 0, SP, (5, 21), 0) == 5
    assert b.stats.bank_conflict_cycles == 2          # the second source waited 2 cycles


def test_with_two_read_ports_a_write_takes_one():
    """gpgpu_reg_file_port_throughput 2: the collector steps twice a cycle and a write
    holds its bank only in the first, so one read still gets through beside it."""
    b = _banks(read_ports=2, write_ports=2)
    b.book_write(0, 0, (5,), 2)
    assert b.try_read_id(0, 0, SP, (5,), 0) == 3      # the port the write leaves
    assert b.try_read_id(1, 1, SP, (4,), 0) == 4      # slot 1, register 4: bank 5 again, next cycle
    assert b.stats.bank_conflict_cycles == 1
    free = _banks(read_ports=2, write_ports=2, writes_block_reads=False)
    assert free.try_read_id(0, 0, SP, (5,), 0) == 3
    assert free.try_read_id(1, 1, SP, (4,), 0) == 3


def test_a_write_booked_after_a_read_took_the_cycle_leaves_that_read():
    b = _banks()
    assert b.try_read_id(0, 0, SP, (5,), 0) == 3      # bank 5 read at 2
    b.book_write(0, 0, (5,), 2)                       # booked later for the same cycle: the read stays
    assert b.try_read_id(0, 0, SP, (5,), 1) == 4      # the next read of bank 5 is at 3 as before
    assert b.stats.bank_conflict_cycles == 0


def test_the_write_forgets_its_booking():
    b = _banks()
    b.book_write(0, 0, (5,), 7)
    b.book_write(1, 0, (5,), 7)                       # bank 6 in the same cycle: one entry, two bits
    assert b.write_booked == {7: (1 << 5) | (1 << 6)}
    assert b.write(0, 0, (5,), 7) == 7
    assert b.write_booked == {}
    assert b.write(1, 0, (5,), 7) == 7


# ---------------------------------------------------------------- end to end

FMA_CHAIN = r'''
extern "C" __global__ void chain(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = x[i], b = a * 0.5f, c = a + 1.0f;
    for (int k = 0; k < n; ++k) { a = a * 0.5f + b; b = b * 0.25f + c; c = c * 0.125f + a; }
    y[i] = a + b + c;
}'''

ON = {"sm.rf_bank_writes_block_reads": True}
_booked: list[tuple[int, int, int]] = []   # (warp slot, pc, cycle) told ahead
_written: list[tuple[int, int, int, int]] = []  # (warp slot, pc, cycle, told at) from write


class BookingBanks(BankedRegisterFile):
    """The baseline banks through the plug-in path, recording what it is told."""

    def book_write(self, warp, instr, cycle):
        _booked.append((warp.slot, instr.pc, cycle))
        super().book_write(warp, instr, cycle)

    def write(self, warp, instr, now):
        _written.append((warp.slot, instr.pc, now))
        return super().write(warp, instr, now)


@pytest.fixture(autouse=True, scope="module")
def _booking_banks():
    # registered only while this module runs: the contract suite checks every registered plug-in
    register("operand_storage", "test_booking_banks")(BookingBanks)
    yield
    unregister("operand_storage", "test_booking_banks")


def _run(overrides: dict, dense: bool = False) -> tuple[int, int]:
    cfg = load_config("gtx480", dict({"gpu.n_sms": 1}, **overrides))
    with tlpsim.Device(mode="timing", config=cfg, dense=dense):
        x = tlpsim.asarray(np.arange(256, dtype=np.float32) / 256)
        y = tlpsim.zeros(256, np.float32)
        st = tlpsim.RawKernel(FMA_CHAIN, "chain")((4,), (64,), (x, y, np.int32(6))).stats
        a = np.arange(256, dtype=np.float32) / 256
        b, c = a * np.float32(0.5), a + np.float32(1)
        for _ in range(6):
            a = a * np.float32(0.5) + b
            b = b * np.float32(0.25) + c
            c = c * np.float32(0.125) + a
        np.testing.assert_allclose(y.get(), a + b + c, rtol=1e-5)
    return st.cycles, sum(s["rf_bank_conflicts"] for s in st.per_sm)


def test_the_writeback_books_every_write_before_its_cycle_and_both_paths_agree():
    _booked.clear()
    _written.clear()
    on = _run(ON)
    plugin = _run(dict(ON, **{"sm.operand_storage": "test_booking_banks"}))
    assert plugin == on                               # the plug-in path books as the compiled one does
    assert _written and sorted(_booked) == sorted(_written)
    off = _run({})                                    # gtx480's own: the rule is off
    assert on[1] > off[1] and on[0] >= off[0]         # reads waited for writes
    assert _run(ON, dense=True) == on                 # skip-ahead == dense ticking


def test_a_plug_in_told_of_no_writes_when_the_rule_is_off():
    _booked.clear()
    _written.clear()
    _run({"sm.operand_storage": "test_booking_banks"})
    assert _written and not _booked


@pytest.mark.parametrize("preset", ["gtx480", "tesla_m2050", "fermi_dmr", "fermi_rfv", "gtx980", "maxwell_gpuduet",
                                    "expars_maxwell", "h200", "h100"])
def test_every_preset_keeps_the_separate_write_port(preset):
    # GPGPU-Sim's rule, measured on gtx480, worsened the visible set (docs/validation.md, issue 29)
    assert load_config(preset).sm.rf_bank_writes_block_reads is False
