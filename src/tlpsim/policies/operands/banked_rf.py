"""Baseline register file: single-ported banks behind operand-collector units
(GPGPU-Sim style). An issued instruction waits `sm.pipelines.collector_delay` cycles in
its class's ID_OC register (`sm.pipelines.<class>.width` entries a cycle), then takes
a collector unit of its pipeline class; its source registers are read from their
banks, one read per bank per cycle, so two sources in one bank serialise (a bank
conflict); the collector is released when its operands are read. Bank of a register: (warp slot + register)
mod banks, as GPGPU-Sim maps it. With `sm.rf_bank_writes_block_reads` a result's write takes
one of its bank's read ports in its cycle, ahead of operand reads (GPGPU-Sim's one port per bank).

The per-issue arithmetic is `tlpsim.timing.regbanks.RegisterBanks` (compiled with
the timing core); this plug-in declares the parameters and delegates to it. A
subclass that overrides a method gets its override: only this exact class binds
the compiled methods directly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tlpsim.policies.operands.base import OperandStorage
from tlpsim.policies.registry import register
from tlpsim.timing.regbanks import RegisterBanks


@register("operand_storage", "baseline")
class BankedRegisterFile(OperandStorage):
    stationarity = "stationary"
    @dataclass(frozen=True)
    class Params:
        banks: int | None = None           # default: sm.rf_banks
        collectors_sp: int | None = None   # collector units for SP/INT/DP instructions (sm.operand_collector.units)
        collectors_sfu: int | None = None
        collectors_mem: int | None = None

    def __init__(self, params: Any = None, n_warp_slots: int = 48, **context: Any) -> None:
        super().__init__(params if params is not None else self.Params(), n_warp_slots, **context)
        p = self.params
        cfg = self.config
        s = cfg.sm if cfg is not None else None
        oc = s.operand_collector.units if s is not None else None
        # the SM config supplies banks and collector counts; parameters given to the plug-in override them
        banks = p.banks if p.banks is not None else (s.rf_banks if s is not None else 16)
        # generic-only collectors (sm.operand_collector.specialized = false): one pool of
        # `gen` units every pipeline class draws from
        shared = s is not None and not s.operand_collector.specialized
        if shared:
            sp = sfu = mem = dp = oc.gen
        else:
            sp = p.collectors_sp if p.collectors_sp is not None else (oc.sp + oc.gen if oc is not None else 6)
            sfu = p.collectors_sfu if p.collectors_sfu is not None else ((oc.sfu or oc.sp) if oc is not None else 8)
            mem = p.collectors_mem if p.collectors_mem is not None else ((oc.mem or 1) if oc is not None else 2)
            dp = (oc.dp or sp) if oc is not None and p.collectors_sp is None else sp
        self.resolved = {"banks": banks, "collectors_sp": sp, "collectors_sfu": sfu, "collectors_mem": mem,
                         "collectors_dp": dp}
        self.banks = RegisterBanks(
            banks, {"sp": sp, "dp": dp, "sfu": sfu, "ldst": mem}, self.stats,
            read_ports=s.rf_bank_read_ports if s is not None else 1,
            write_ports=s.rf_bank_write_ports if s is not None else 1,
            use_warp_id=s.rf_bank_use_warp_id if s is not None else True,
            n_schedulers=s.n_schedulers if s is not None else 1,
            sub_core=s.sub_core_model if s is not None else False, shared_collectors=shared,
            read_delay=s.pipelines.collector_delay if s is not None else 0,
            # the ID_OC pipeline registers' widths: instructions of a class entering per cycle
            issue_widths=({"sp": s.pipelines.sp.width, "sfu": s.pipelines.sfu.width, "dp": s.pipelines.dp.width,
                           "ldst": s.pipelines.ldst.width} if s is not None else None),
            writes_block_reads=s.rf_bank_writes_block_reads if s is not None else False)
        # the writeback tells the banks of each write when it is scheduled (a subclass: through book_write)
        self.books_writes = self.banks.writes_block_reads
        self.compiled_banks: RegisterBanks | None = None
        if type(self) is BankedRegisterFile:
            # the SM's calls go straight to the compiled methods (no Python frame per
            # issue); a subclass keeps its overrides and is called as a plug-in
            self.compiled_banks = self.banks
            self.next_event = self.banks.next_event  # type: ignore[method-assign]

    def try_read(self, warp: Any, instr: Any, now: int) -> int | None:
        unit = "ldst" if instr.kind == 1 else instr.unit  # memory instructions take a memory collector
        return self.banks.try_read(warp.slot, warp.sched, unit, instr.src_regs, now)

    def write(self, warp: Any, instr: Any, now: int) -> int:
        return self.banks.write(warp.slot, warp.sched, instr.dst_regs, now)

    def book_write(self, warp: Any, instr: Any, cycle: int) -> None:
        self.banks.book_write(warp.slot, warp.sched, instr.dst_regs, cycle)

    def next_event(self, now: int) -> int | None:
        return self.banks.next_event(now)

    def reserve_ports(self, now: int, cycles: int) -> int:
        return self.banks.reserve_ports(now, cycles)
