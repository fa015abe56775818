"""A kernel prepared for functional execution: flattened (calls inlined), laid out,
and every static instruction compiled to an executable closure."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tlpsim.analysis.analyzed import analyze
from tlpsim.analysis.kernel_cfg import EXIT, reconvergence_points
from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.blocks import branch_targets
from tlpsim.frontend.ir import Function, Imm, Instruction, Module, Special
from tlpsim.functional.layout import Layout, build_layout
from tlpsim.functional.unmodelled import unmodelled_feature
from tlpsim.functional.operands import OperandCompiler
from tlpsim.functional.semantics import load_all

# how the engine treats each static instruction
NORMAL, BRANCH, BRX, EXIT_OP, BARRIER, NOP, TRAP = range(7)


@dataclass
class BarrierOp:
    """Decoded `bar`/`barrier`: which barrier, how many threads, and whether the warp waits."""

    barrier_id: object   # reader returning the id
    count: object | None  # reader returning the thread count, or None for all threads
    wait: bool
    reduce: str | None = None  # popc / and / or for bar.red
    pred: object | None = None
    dst: object | None = None


class CompiledKernel:
    """Per-instruction closures plus the control-flow facts the engine needs."""

    def __init__(self, module: Module, kernel: Function, global_addr: dict[str, int], poison: bool = False,
                 scheduled: bool = False) -> None:
        self.module = module
        self.source = kernel
        # the flattened kernel with its analyses (the timing model reads its physical registers);
        # scheduled: its blocks in the order an assembler issues them (gpu.block_schedule)
        self.analyzed = analyze(module, kernel, scheduled)
        fn = self.fn = self.analyzed.fn
        self.layout: Layout = build_layout(module, fn, global_addr)
        oc = self.oc = OperandCompiler(fn, self.layout, module.filename)
        semantics = load_all()
        self.kinds = np.zeros(len(fn.instructions), dtype=np.int8)
        self.runs: list = []
        self.guards: list = []
        self.targets: list[tuple[int, ...]] = []
        self.reconv = reconvergence_points(fn)
        self.back_edges: dict[int, int] = {}  # loop branch pc -> its target (<= pc)
        # reads the driver's %envreg registers: a cooperative-groups grid (grid.sync() traps unless cooperative)
        self.reads_envreg = any(isinstance(o, Special) and o.name in ("envreg1", "envreg2")
                                for ins in fn.instructions for o in ins.srcs)
        # device printf/assert have effects outside device memory: never replay such a launch from a cache
        self.has_syscalls = any(ins.base == "call" for ins in fn.instructions)
        for ins in fn.instructions:
            kind, run = self._compile(ins, oc, semantics)
            self.kinds[ins.index] = kind
            self.runs.append(run)
            self.guards.append(oc.reader(ins.guard, "pred") if ins.guard is not None else None)
            self.targets.append(branch_targets(fn, ins.index) if ins.base in ("bra", "brx") else ())
            if ins.base == "bra" and self.targets[-1] and self.targets[-1][0] <= ins.index:
                self.back_edges[ins.index] = self.targets[-1][0]
        self.poison = None
        if poison:
            from tlpsim.functional.poison import PoisonPlan

            self.poison = PoisonPlan(module, kernel, scheduled)

    @property
    def name(self) -> str:
        return self.fn.name

    @property
    def access_kinds(self) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
        """Global-memory access kind, size and atomic destination per instruction
        (functional.xcta), computed once."""
        kinds = self.__dict__.get("_access_kinds")
        if kinds is None:
            from tlpsim.functional.xcta import access_kinds

            kinds = self.__dict__["_access_kinds"] = access_kinds(self)
        return kinds

    @property
    def display_name(self) -> str:
        """The kernel's source-level name (`ns::k` for a mangled `_ZN2ns1kEv`), for messages."""
        from tlpsim.frontend.names import qualified_name

        return qualified_name(self.source.name)

    def reconvergence(self, pc: int) -> int:
        return self.reconv.get(pc, EXIT)

    def _compile(self, ins: Instruction, oc: OperandCompiler, semantics: dict):
        base = ins.base
        feature = unmodelled_feature(ins)
        if feature is not None:
            raise UnsupportedPTX(f"instruction '{ins.opcode}' (kernel {self.display_name}): {feature} by tlpsim's "
                                 "functional and timing models", self.module.filename, ins.line)
        if base == "bra":
            return BRANCH, None
        if base == "brx":
            return BRX, oc.reader(ins.srcs[0], "u32")
        if base in ("ret", "exit"):
            return EXIT_OP, None
        if base == "trap":
            return TRAP, None
        if base in ("bar", "barrier"):
            if "warp" in ins.mods:  # bar.warp.sync: lanes of a warp run in lockstep here
                return NOP, None
            return BARRIER, self._barrier(ins, oc)
        if base in ("membar", "fence", "nanosleep", "pmevent", "brkpt", "griddepcontrol") and base not in semantics:
            return NOP, None
        if ins.opclass == "tex" and base != "tex":
            raise UnsupportedPTX(f"texture/surface instruction '{ins.opcode}' is not supported: tlpsim samples "
                                 f"textures with tex.1d/tex.2d only (kernel {self.display_name}); no gathers (tld4), "
                                 "queries (txq) or surfaces", self.module.filename, ins.line)
        build = semantics.get(base)
        if build is None:
            raise UnsupportedPTX(f"instruction '{ins.opcode}' is not supported by the functional model "
                                 f"(kernel {self.display_name})", self.module.filename, ins.line)
        try:
            return NORMAL, build(ins, oc)
        except UnsupportedPTX as exc:
            if not exc.line:
                raise UnsupportedPTX(str(exc).split(": ", 1)[-1], self.module.filename, ins.line) from None
            raise

    def _barrier(self, ins: Instruction, oc: OperandCompiler) -> BarrierOp:
        mods = ins.mods
        srcs = ins.srcs
        wait = not ("arrive" in mods)
        red = next((m for m in ("popc", "and", "or") if m in mods), None) if "red" in mods else None
        if red is not None:
            # bar.red.op.type d, a{, b}, {!}c
            ids = srcs[:-1]
            pred = oc.reader(srcs[-1], "pred")
            dst = oc.writer(ins.dsts[0], "u32" if red == "popc" else "pred")
        else:
            ids, pred, dst = srcs, None, None
        if not ids:
            ids = (Imm(0),)
        bid = oc.reader(ids[0], "u32")
        count = oc.reader(ids[1], "u32") if len(ids) > 1 else None
        return BarrierOp(bid, count, wait, red, pred, dst)
