"""In-kernel `%clock` reads, measured in the timing model.

tlpsim executes a launch functionally before the timing model replays it, so the
value a `mov.u32 %r, %clock` returns functionally is not the simulated cycle. In
GPGPU-Sim that register is read when the `mov` issues, so a program's `%clock`
difference is an issue-to-issue interval. `ClockProbe`, an execution-checker
plug-in registered as "validate_clock", records the issue cycle of every
instruction that reads `%clock`/`%clock64` — (launch, warp, pc, cycle) — and
`clock_intervals` turns those records into each warp's timed interval. The probe
issues no port commands, so it changes no timing.

A warp's interval runs from the last read by the opening `%clock` instruction to
the warp's last `%clock` read (the closing one): the programs read `t0` at the top
of every pass and `t1` once after the loop, and report `t1 - t0`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tlpsim.frontend.ir import Special
from tlpsim.policies.checker.base import ExecutionChecker
from tlpsim.policies.registry import register

__all__ = ["CLOCK_REGISTERS", "PROBE_NAME", "ClockProbe", "ClockRead", "clock_intervals", "drain", "reads_clock"]

PROBE_NAME = "validate_clock"
CLOCK_REGISTERS = frozenset({"clock", "clock64"})
# opcodes that can read a special register; each such static instruction is looked
# up once in the kernel's IR, and only those reading %clock are recorded
_SREG_READERS = frozenset({"mov", "cvt"})


@dataclass(frozen=True, slots=True)
class ClockRead:
    kid: int     # launch id in the timing model
    sm: int
    warp: int    # warp index within its launch (gwarp)
    pc: int      # static instruction index
    cycle: int   # core cycle the instruction issued


def reads_clock(ins: Any) -> bool:
    """Whether a PTX instruction (tlpsim.frontend.ir.Instruction) reads %clock or %clock64."""
    return any(isinstance(op, Special) and op.name in CLOCK_REGISTERS for op in ins.srcs)


@register("execution_checker", PROBE_NAME)
class ClockProbe(ExecutionChecker):
    """Records the issue cycle of every %clock read on its SM (see the module doc)."""

    events = frozenset({"instr_issued"})

    def __init__(self, params: Any = None, **context: Any) -> None:
        super().__init__(params, **context)
        self.reads: list[ClockRead] = []
        self._is_clock: dict[tuple[int, int], bool] = {}   # (kid, pc) -> reads %clock

    def watches(self, instr: Any) -> bool:
        return instr.op in _SREG_READERS

    def on_instr_issued(self, warp: Any, instr: Any, active_mask: int, now: int) -> None:
        key = (warp.kid, instr.pc)
        hit = self._is_clock.get(key)
        if hit is None:
            ins = self.port.kernel(warp.kid).static.fn.instructions[instr.pc]
            hit = self._is_clock[key] = reads_clock(ins)
        if hit:
            self.reads.append(ClockRead(warp.kid, warp.sm, warp.gwarp, instr.pc, now))


def drain(device: Any) -> list[ClockRead]:
    """Every probe's records on a timing-mode `tlpsim.Device` since the last drain,
    in issue order (empty when no probe is plugged in)."""
    session = getattr(device, "_timing", None)
    if session is None:
        return []
    out: list[ClockRead] = []
    for sm in session.gpu.sms:
        for _, obj in sm.plugins:
            if isinstance(obj, ClockProbe):
                out.extend(obj.reads)
                obj.reads = []
    out.sort(key=lambda r: (r.cycle, r.sm, r.warp))
    return out


def clock_intervals(reads: Iterable[ClockRead]) -> dict[int, int]:
    """Per warp (gwarp), the cycles from the last read by its opening %clock
    instruction to its closing (last) read; warps without two distinct %clock
    instructions are left out."""
    by_warp: dict[int, list[ClockRead]] = {}
    for r in reads:
        by_warp.setdefault(r.warp, []).append(r)
    out: dict[int, int] = {}
    for w, rs in by_warp.items():
        rs.sort(key=lambda r: r.cycle)
        end = rs[-1]
        start = next((r for r in reversed(rs[:-1]) if r.pc != end.pc), None)
        if start is not None:
            out[w] = end.cycle - start.cycle
    return dict(sorted(out.items()))
