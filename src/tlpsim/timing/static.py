"""Per-instruction facts the timing model needs, decoded once per kernel: which
pipeline runs it, its latency and initiation interval, and the registers it reads
and writes as bitmasks (so a scoreboard check is one integer AND)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tlpsim.frontend.ir import Address, Function, Reg, Vec

# pipelines (functional-unit classes)
SP: Final = "sp"
SFU: Final = "sfu"
DP: Final = "dp"
LDST: Final = "ldst"
CTRL: Final = "ctrl"

# control kinds
K_ALU: Final = 0
K_MEM: Final = 1
K_BAR: Final = 2
K_EXIT: Final = 3
K_BRANCH: Final = 4
K_NOP: Final = 5

_INT_CLASS = {  # GPGPU-Sim latency-table column for integer ops
    "add": "add", "sub": "add", "addc": "add", "subc": "add", "and": "add", "or": "add", "xor": "add",
    "not": "add", "cnot": "add", "shl": "add", "shr": "add", "mov": "add", "selp": "add", "setp": "add",
    "set": "add", "cvt": "add", "cvta": "add", "neg": "add", "abs": "add", "bfe": "add", "bfi": "add",
    "prmt": "add", "lop3": "add", "shf": "add", "slct": "add", "popc": "add", "clz": "add", "brev": "add",
    "bfind": "add", "fns": "add", "bmsk": "add", "szext": "add", "copysign": "add", "testp": "add",
    "min": "max", "max": "max", "mul": "mul", "mul24": "mul", "mad": "mad", "mad24": "mad", "madc": "mad",
    "sad": "mad", "dp4a": "mad", "dp2a": "mad", "div": "div", "rem": "div",
    "shfl": "shfl", "vote": "add", "match": "shfl", "redux": "shfl", "activemask": "add", "elect": "add",
}
_FP_CLASS = {"add": "add", "sub": "add", "min": "max", "max": "max", "mul": "mul", "mad": "mad", "fma": "mad",
             "div": "div", "neg": "add", "abs": "add", "cvt": "add", "setp": "add", "set": "add", "selp": "add",
             "testp": "add", "copysign": "add", "slct": "add", "mov": "add"}
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

    @classmethod
    def fermi(cls) -> "LatencyTables":
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
    src_regs: tuple[int, ...]  # register ids read (for bank conflicts)
    dst_regs: tuple[int, ...]
    space: str | None    # memory instructions: state space
    is_store: bool
    is_atomic: bool
    opclass: str
    long_wait: bool = False  # a global/local/generic load or a barrier: long latency to warp schedulers


class StaticKernel:
    """All StaticInstr of a flattened kernel, plus register numbering."""

    def __init__(self, fn: Function, tables: LatencyTables, space_of=None) -> None:
        self.fn = fn
        names = sorted(fn.reg_types)
        self.reg_id = {n: k for k, n in enumerate(names)}
        self.instrs: list[StaticInstr] = [self._decode(ins, tables, space_of) for ins in fn.instructions]

    def _regs(self, ops) -> list[int]:
        out = []
        for op in ops:
            if isinstance(op, Reg):
                out.append(self.reg_id[op.name])
            elif isinstance(op, Vec):
                out.extend(self._regs(op.elems))
            elif isinstance(op, Address) and isinstance(op.base, Reg):
                out.append(self.reg_id[op.base.name])
        return out

    def _decode(self, ins, t: LatencyTables, space_of) -> StaticInstr:
        base = ins.base
        srcs = self._regs(ins.srcs)
        if ins.guard is not None:
            srcs.append(self.reg_id[ins.guard.name])
        dsts = self._regs(ins.dsts)
        # an address operand in the destination position (st) is a read
        if base in ("st", "red", "sust"):
            srcs += dsts
            dsts = []
        kind = K_ALU
        unit = SP
        lat, init = t.int_lat["add"], t.int_init["add"]
        oc = ins.opclass
        space = None
        if oc in ("mem", "atomic"):
            kind, unit, lat, init = K_MEM, LDST, 1, t.mem_issue_init
            space = space_of(ins) if space_of is not None else (ins.space or "generic")
        elif base in ("bar", "barrier") and "warp" not in ins.mods:
            kind, unit, lat, init = K_BAR, CTRL, 1, 1
        elif base in ("ret", "exit", "trap"):
            kind, unit, lat, init = K_EXIT, CTRL, 1, 1
        elif base in ("bra", "brx", "call"):
            kind, unit, lat, init = K_BRANCH, SP, t.branch_lat, 1
        elif base in ("membar", "fence", "nanosleep", "pmevent", "brkpt") or (base == "bar" and "warp" in ins.mods):
            kind, unit, lat, init = K_NOP, SP, 1, 1
        elif oc == "fp64":
            col = _FP_CLASS.get(base, "add")
            unit, lat, init = DP, t.dp_lat[col], t.dp_init[col]
        elif oc == "sfu" or base in _SFU_OPS:
            unit, lat, init = SFU, t.sfu_lat, t.sfu_init
        elif oc == "fp32":
            col = _FP_CLASS.get(base, "add")
            lat, init = t.fp_lat[col], t.fp_init[col]
        else:
            col = _INT_CLASS.get(base, "add")
            lat, init = t.int_lat[col], t.int_init[col]
        src_mask = 0
        for r in srcs:
            src_mask |= 1 << r
        dst_mask = 0
        for r in dsts:
            dst_mask |= 1 << r
        is_store = base in ("st", "red", "sust")
        return StaticInstr(ins.index, kind, unit, lat, init, src_mask, dst_mask, tuple(srcs), tuple(dsts), space,
                           is_store, oc == "atomic" or base == "red", oc,
                           (kind == K_MEM and not is_store and space in ("global", "local", "generic"))
                           or kind == K_BAR)
