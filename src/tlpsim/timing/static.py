"""Per-instruction facts the timing model needs, decoded once per kernel: which
pipeline runs it, its latency and initiation interval, the physical registers it
reads and writes, and those as scoreboard bitmasks (so a check is one integer AND).

Registers are the physical 32-bit registers of the analyses' allocator
(`tlpsim.analysis.regalloc`): a 64-bit value is two consecutive registers, and a
register read twice by one instruction is read once (as GPGPU-Sim's collector
units do). Predicates have scoreboard bits after the registers' but are not in
`src_regs`/`dst_regs`: they live outside the register-file banks. A destination no
later instruction reads (dead after it, by GPU-aware liveness) is not written — the
machine code writes such results to the zero register (an atomic whose old value is
unused) — so it takes no register, no scoreboard bit and no write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tlpsim.analysis.regalloc import Allocation, allocate
from tlpsim.frontend.ir import Address, Function, Reg, Vec

# PTX atom operations (the modifier naming the read-modify-write)
_ATOM_OPS: Final = frozenset(("add", "and", "or", "xor", "cas", "exch", "inc", "dec", "min", "max"))

# pipelines (functional-unit classes)
SP: Final = "sp"
SFU: Final = "sfu"
DP: Final = "dp"
LDST: Final = "ldst"
CTRL: Final = "ctrl"
# a pipeline class's index (StaticInstr.unit_id): the issue path's per-class tables are
# lists indexed by it rather than dicts keyed by the name
UNIT_IDS: Final = {SP: 0, SFU: 1, DP: 2, LDST: 3, CTRL: 4}

# control kinds
K_ALU: Final = 0
K_MEM: Final = 1
K_BAR: Final = 2
K_EXIT: Final = 3
K_BRANCH: Final = 4
K_NOP: Final = 5

# GPGPU-Sim's latency-table column per opcode (cuda-sim.cc set_opcode_and_latency): the
# type picks the table (.f32 fp, .f64 dp, anything else int); every opcode not named
# here — mov, setp, selp, cvt, logic, shifts, neg, abs, ... — has latency 1 and
# initiation 1 on the SP pipes
_TABLE_COLUMN = {"add": "add", "addc": "add", "sub": "add", "subc": "add", "max": "max", "min": "max",
                 "mul": "mul", "mad": "mad", "madc": "mad", "fma": "mad", "div": "div", "shfl": "shfl"}
_SFU_OPS = frozenset({"sin", "cos", "ex2", "lg2", "rcp", "sqrt", "rsqrt", "tanh"})


@dataclass(frozen=True)
class LatencyTables:
    """Latency and initiation interval (core cycles) per op class, as GPGPU-Sim's
    ptx_opcode_latency_{int,fp,dp,sfu} / ptx_opcode_initiation_* tables."""

    int_lat: dict
    int_init: dict
    fp_lat: dict
    fp_init: dict
    dp_lat: dict
    dp_init: dict
    sfu_lat: int = 20
    sfu_init: int = 8
    branch_lat: int = 1
    mem_issue_init: int = 1
    simt_passes: int = 1   # warp_size / simt_width: an arithmetic instruction occupies its pipe this many times
    dispatch_delay: int = 0   # operands collected -> the unit's dispatch register (sm.pipelines.dispatch_delay)
    writeback_delay: int = 0  # last pipeline stage -> scoreboard release (sm.pipelines.writeback_delay)
    # shared-memory atomics the compiler emulates with a compare-and-swap loop, "op.type"
    # (sm.shared_atomic_cas_ops)
    shared_cas_ops: frozenset = frozenset()
    @classmethod
    def fermi(cls) -> LatencyTables:
        cols_i = ("add", "max", "mul", "mad", "div", "shfl")
        cols_f = ("add", "max", "mul", "mad", "div")
        return cls(
            int_lat=dict(zip(cols_i, (4, 13, 4, 5, 145, 32))), int_init=dict(zip(cols_i, (1, 2, 2, 1, 8, 4))),
            fp_lat=dict(zip(cols_f, (4, 13, 4, 5, 39))), fp_init=dict(zip(cols_f, (1, 2, 1, 1, 4))),
            dp_lat=dict(zip(cols_f, (8, 19, 8, 8, 330))), dp_init=dict(zip(cols_f, (8, 16, 8, 8, 130))),
        )


@dataclass(frozen=True, slots=True)
class StaticInstr:
    pc: int
    kind: int
    unit: str
    latency: int
    initiation: int
    src_mask: int        # bit per register id read
    dst_mask: int        # bit per register id written (incl. predicates)
    src_regs: tuple[int, ...]  # physical registers read (register-file bank reads)
    dst_regs: tuple[int, ...]  # physical registers written
    space: str | None    # memory instructions: state space
    is_store: bool
    is_atomic: bool
    opclass: str
    long_wait: bool = False  # a global/local/generic load or a barrier: long latency to warp schedulers
    op: str = ""             # the PTX opcode without modifiers ("fma", "ld", "bra"), for plug-in filters
    result_delay: int = 0    # arithmetic: cycles from operands collected to the scoreboard release
    unit_id: int = 0         # UNIT_IDS[unit]
    cas_loop: bool = False   # a shared atomic the compiler emulates with a compare-and-swap loop


class StaticKernel:
    """All StaticInstr of a flattened kernel, with its physical register allocation.

    `analyzed` (an AnalyzedKernel of `fn`) supplies the allocation and liveness; without
    one the allocation is computed here (cached on `fn`)."""

    def __init__(self, fn: Function, tables: LatencyTables, space_of=None, analyzed=None,
                 allocation: Allocation | None = None) -> None:
        self.fn = fn
        self.analyzed = analyzed
        if allocation is None:
            allocation = analyzed.allocation if analyzed is not None else allocate(fn)
        self.allocation = allocation
        self.n_regs = allocation.n_regs      # physical 32-bit registers per thread
        # A compare-and-swap loop (sm.shared_atomic_cas_ops) is one atomic in the trace, but
        # the warp issues nothing past it until its last round: the atomic writes a scoreboard
        # bit after the predicates' (the loop's exit predicate) that every instruction of the
        # kernel reads, so the next one waits for it, as for the loop's branch on the card.
        cas = [self._is_cas_loop(ins, tables, space_of) for ins in fn.instructions]
        self.loop_bit = 1 << (allocation.n_regs + allocation.pred_regs) if any(cas) else 0
        self.instrs: list[StaticInstr] = [self._decode(ins, tables, space_of, c) for ins, c in
                                          zip(fn.instructions, cas)]
        self._live: dict[int, int] = {}
        self.code_addr = 0   # address of its first instruction (8 bytes each), set when the GPU loads it

    def _regs(self, ops, gprs: list[int], preds: list[int], live: frozenset[str] | None = None) -> None:
        """Physical registers (and predicate ids) of the register operands in `ops`;
        with `live`, plain register operands not in it are skipped (dead results)."""
        for op in ops:
            if isinstance(op, Reg):
                if live is None or op.name in live:
                    self._reg(op.name, gprs, preds)
            elif isinstance(op, Vec):
                self._regs(op.elems, gprs, preds, live)
            elif isinstance(op, Address) and isinstance(op.base, Reg):
                self._reg(op.base.name, gprs, preds)

    def _reg(self, name: str, gprs: list[int], preds: list[int]) -> None:
        a = self.allocation
        if name in a.phys:
            for r in a.regs_of(name):
                if r not in gprs:
                    gprs.append(r)
        elif name in a.pred_phys:
            p = a.pred_phys[name]
            if p not in preds:
                preds.append(p)

    def _liveness(self):
        if self.analyzed is not None:
            return self.analyzed.liveness
        from tlpsim.analysis.liveness import liveness

        return liveness(self.fn, gpu_aware=True)

    def _live_out(self, pc: int) -> frozenset[str]:
        return self._liveness().live_out(pc)

    def live_regs(self, pc: int) -> int:
        """32-bit registers per thread live before instruction `pc` for any lane of a
        warp about to issue it (GPU-aware liveness; 0 past the end)."""
        n = self._live.get(pc)
        if n is None:
            if pc < 0 or pc >= len(self.instrs):
                n = 0
            else:
                from tlpsim.analysis.liveness import register_units

                live = self._liveness()
                units = register_units(self.fn)
                n = sum(units.get(r, 1) for r in live.warp_live_in(pc, rf_only=True))
            self._live[pc] = n
        return n

    @staticmethod
    def _alu_timing(base: str, typ: str | None, t: LatencyTables) -> tuple[str, int, int]:
        """Pipeline, latency and initiation of an arithmetic opcode, as GPGPU-Sim assigns them."""
        col = _TABLE_COLUMN.get(base)
        if col is None:
            return SP, 1, 1
        if col == "shfl":
            return SP, t.int_lat["shfl"], t.int_init["shfl"]
        if typ == "f32":
            lat, init, unit = t.fp_lat[col], t.fp_init[col], SP
        elif typ == "f64":
            lat, init, unit = t.dp_lat[col], t.dp_init[col], DP
        else:
            lat, init, unit = t.int_lat[col], t.int_init[col], SP
        return (SFU if col == "div" else unit), lat, init

    @staticmethod
    def _is_cas_loop(ins, t: LatencyTables, space_of) -> bool:
        """Whether `ins` is a shared-memory atomic whose operation the compiler emulates
        with a compare-and-swap loop on this target (only a statically shared one: a
        generic atomic that resolves to shared memory is timed as a native one)."""
        if not t.shared_cas_ops or ins.opclass != "atomic" or ins.base not in ("atom", "red"):
            return False
        space = space_of(ins) if space_of is not None else (ins.space or "generic")
        if space != "shared":
            return False
        ops = [m for m in ins.mods if m in _ATOM_OPS]
        return bool(ops) and f"{ops[0]}.{ins.type}" in t.shared_cas_ops

    def _decode(self, ins, t: LatencyTables, space_of, cas_loop: bool = False) -> StaticInstr:
        base = ins.base
        srcs: list[int] = []
        src_preds: list[int] = []
        self._regs(ins.srcs, srcs, src_preds)
        if ins.guard is not None:
            self._reg(ins.guard.name, srcs, src_preds)
        dsts: list[int] = []
        dst_preds: list[int] = []
        stores = base in ("st", "red", "sust")
        self._regs(ins.dsts, dsts, dst_preds, None if stores else self._live_out(ins.index))
        # an address operand in the destination position (st) is a read
        if stores:
            for r in dsts:
                if r not in srcs:
                    srcs.append(r)
            src_preds += [p for p in dst_preds if p not in src_preds]
            dsts, dst_preds = [], []
        kind = K_ALU
        unit = SP
        lat, init = 1, 1
        oc = ins.opclass
        space = None
        if oc in ("mem", "atomic"):
            kind, unit, lat, init = K_MEM, LDST, 1, t.mem_issue_init
            space = space_of(ins) if space_of is not None else (ins.space or "generic")
        elif base == "tex":  # texture fetches: global loads through L1 (docs/exec.md)
            kind, unit, lat, init = K_MEM, LDST, 1, t.mem_issue_init
            space = "global"
        elif base in ("bar", "barrier") and "warp" not in ins.mods:
            kind, unit, lat, init = K_BAR, CTRL, 1, 1
        elif base in ("ret", "exit", "trap"):
            kind, unit, lat, init = K_EXIT, CTRL, 1, 1
        elif base in ("bra", "brx", "call"):
            kind, unit, lat, init = K_BRANCH, SP, t.branch_lat, 1
        elif base in ("membar", "fence", "nanosleep", "pmevent", "brkpt") or (base == "bar" and "warp" in ins.mods):
            kind, unit, lat, init = K_NOP, SP, 1, 1
        elif base in _SFU_OPS:
            unit, lat, init = SFU, t.sfu_lat, t.sfu_init
        else:
            unit, lat, init = self._alu_timing(base, ins.type, t)
        if kind == K_ALU and t.simt_passes > 1:  # narrower SIMT lanes: the warp takes several passes
            init *= t.simt_passes
            lat += t.simt_passes - 1
        # into the unit, through it (its initiation interval in the dispatch register, then
        # latency - initiation stages), and the result's way back to the scoreboard
        result_delay = t.dispatch_delay + lat + t.writeback_delay
        npr = self.n_regs
        src_mask = 0
        for r in srcs:
            src_mask |= 1 << r
        for p in src_preds:
            src_mask |= 1 << (npr + p)
        dst_mask = 0
        for r in dsts:
            dst_mask |= 1 << r
        for p in dst_preds:
            dst_mask |= 1 << (npr + p)
        src_mask |= self.loop_bit
        if cas_loop:
            dst_mask |= self.loop_bit
        is_store = base in ("st", "red", "sust")
        return StaticInstr(ins.index, kind, unit, lat, init, src_mask, dst_mask, tuple(srcs), tuple(dsts), space,
                           is_store, oc == "atomic" or base == "red", oc,
                           (kind == K_MEM and not is_store and space in ("global", "local", "generic"))
                           or kind == K_BAR, base, result_delay, UNIT_IDS[unit], cas_loop)
