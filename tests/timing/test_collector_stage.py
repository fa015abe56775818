"""The ID_OC pipeline register in front of the operand collectors (GPGPU-Sim's issue ->
ID_OC -> collector unit -> OC_EX): an issued instruction takes its collector a cycle
after issue, so a collector released in that cycle serves it, and each class's ID_OC
register takes at most its width of instructions a cycle. With GTX480's 2 memory
collectors a memory instruction issues every cycle (before: one held its collector
from issue, 2 every 3 cycles). Exact cycles, on the banks alone."""

from __future__ import annotations

from tlpsim.config.loader import load_config
from tlpsim.timing.builder import ldst_queue_entries
from tlpsim.timing.regbanks import RegisterBanks
from tlpsim.timing.static import UNIT_IDS

MEM = UNIT_IDS["ldst"]
SP_ID = UNIT_IDS["sp"]


def _banks(**kw) -> RegisterBanks:
    args = dict(n_banks=16, collectors={"sp": 6, "sfu": 8, "dp": 6, "ldst": 2}, read_delay=1, n_schedulers=2,
                issue_widths={"sp": 2, "sfu": 1, "dp": 0, "ldst": 1})
    args.update(kw)
    return RegisterBanks(**args)


def test_two_memory_collectors_take_a_memory_instruction_every_cycle():
    b = _banks()
    # one address register each, in different banks: issue at t, collector from t+1,
    # read at t+2, released (dispatched) at t+3, when the instruction issued at t+2 takes it
    starts = [b.try_read_id(slot=0, sched=0, unit_id=MEM, src_regs=(t,), now=t) for t in range(8)]
    assert starts == [t + 3 for t in range(8)]
    assert b.stats.collector_full == 0


def test_without_the_id_oc_stage_two_collectors_allow_two_every_three_cycles():
    b = _banks(read_delay=0)   # the collector is taken at issue: read at t+1, released at t+2
    assert b.try_read_id(0, 0, MEM, (0,), 0) == 2
    assert b.try_read_id(0, 0, MEM, (1,), 1) == 3
    assert b.try_read_id(0, 0, MEM, (2,), 2) == 4    # the first one's collector is free at 2
    b = _banks(read_delay=0, collectors={"sp": 6, "sfu": 8, "dp": 6, "ldst": 2})
    b.first_read = 2                                  # the old timing: taken at issue, read 2 cycles later
    assert b.try_read_id(0, 0, MEM, (0,), 0) == 3
    assert b.try_read_id(0, 0, MEM, (1,), 1) == 4
    assert b.try_read_id(0, 0, MEM, (2,), 2) is None  # both collectors held until 3 and 4
    assert b.stats.collector_full == 1
    assert b.try_read_id(0, 0, MEM, (2,), 3) == 6


def test_a_bank_conflict_holds_the_collector_and_refuses_the_next_issue():
    b = _banks()
    # two sources in one bank (registers 0 and 16): read at 2 and 3, released at 4
    assert b.try_read_id(0, 0, MEM, (0, 16), 0) == 4
    assert b.try_read_id(0, 0, MEM, (1,), 1) == 4      # collector from 2, read at 3
    assert b.try_read_id(0, 0, MEM, (2,), 2) is None   # no collector free at 3
    assert b.try_read_id(0, 0, MEM, (2,), 3) == 6      # one is free at 4
    assert b.stats.collector_full == 1


def test_the_id_oc_register_takes_its_width_of_instructions_a_cycle():
    b = _banks()
    assert b.try_read_id(0, 0, MEM, (0,), 10) == 13
    assert b.try_read_id(1, 1, MEM, (5,), 10) is None  # the other scheduler: ID_OC_MEM (width 1) is taken
    assert b.try_read_id(1, 1, MEM, (5,), 11) == 14
    # the SP register is 2 wide: two SP instructions enter in one cycle, a third does not
    assert b.try_read_id(0, 0, SP_ID, (0,), 20) == 23
    assert b.try_read_id(1, 1, SP_ID, (3,), 20) == 23
    assert b.try_read_id(2, 0, SP_ID, (7,), 20) is None
    assert b.stats.collector_full == 2
    # width 0: no limit
    dp = UNIT_IDS["dp"]
    assert [b.try_read_id(s, 0, dp, (), 30) for s in range(3)] == [32, 32, 32]


def test_a_sleeping_sm_wakes_when_an_issue_can_take_a_released_collector():
    b = _banks()
    assert b.try_read_id(0, 0, MEM, (0,), 0) == 3
    assert b.try_read_id(0, 0, MEM, (1,), 1) == 4
    # the collectors are released at 3 and 4; an issue one cycle earlier takes them
    assert b.next_event(1) == 2
    assert b.next_event(2) == 3
    assert b.next_event(3) is None


def test_can_issue_and_read_judge_the_collector_at_the_id_oc_exit():
    b = _banks()
    assert b.read(0, 0, "ldst", (0,), 0) == 3
    assert b.read(0, 0, "ldst", (1,), 1) == 4
    assert b.can_issue(0, 0, "ldst", (2,), 2)          # the first collector is free at 3
    assert not b.can_issue(0, 0, "ldst", (2,), 1)      # none at 2 (and ID_OC_MEM taken at 1)


def test_the_ldst_queue_holds_id_oc_the_memory_collectors_and_oc_ex():
    s = load_config("gtx480").sm
    assert ldst_queue_entries(s) == 1 + 2 + 1
    s2 = load_config("gtx480", {"sm.operand_collector.units.mem": 3, "sm.pipelines.ldst.width": 2}).sm
    assert ldst_queue_entries(s2) == 2 + 3 + 2
