"""If-conversion as an optimising assembler does it: a short forward branch over a
straight-line region becomes predication.

nvcc's PTX branches around each ``if`` body (bfs_expand's unrolled edge loop:
``@%p bra $L; <7 instructions: the two stores>; $L: <next edge>``); ptxas for sm_90
guards the body's instructions with the branch's inverted predicate instead (``@!P2
STG ...``), so the four edges of an unrolled iteration form one block and their eight
loads issue before the first store (nvdisasm 13.5 on the cubin). A warp issuing the
PTX's blocks one at a time waits two dependent load latencies per edge instead.

:func:`if_convert` rewrites every region ``@p bra L; I1; ...; Ik; L:`` with
``1 <= k <= MAX_REGION``, where no ``Ii`` is labelled, branches, exits, is guarded,
is a fence of :mod:`tlpsim.analysis.schedule` (barriers, warp-synchronous or volatile
instructions keep their control flow), or writes ``p``, into ``@!p I1; ...; @!p Ik``,
and drops labels no branch names any more, so the blocks around it merge. A lane runs
the same instructions on the same values either way; only whole-warp issue changes (the
predicated-off body still issues). ptxas decides by heuristics of its own (it keeps the
branch of bfs_expand's remainder loop, whose body is the same); the bound on the body
is read from the workloads' cubins (benchmarks/ifconvert_vs_sass.py, ptxas/nvdisasm
13.5, sm_90): of the regions this rule finds with bodies of 1-12 PTX instructions,
ptxas removes the branch of 151 of 180; of those with 13-30, it keeps 36 of 40.
"""

from __future__ import annotations

import dataclasses

from tlpsim.analysis.liveness import regs_in
from tlpsim.analysis.schedule import is_fence
from tlpsim.frontend.blocks import build_blocks
from tlpsim.frontend.ir import Address, Function, Instruction, Reg, Symbol

__all__ = ["MAX_REGION", "if_convert", "regions"]

#: The longest branch-free body (PTX instructions) turned into predication.
MAX_REGION = 12


def _convertible(ins: Instruction, guard: str) -> bool:
    if ins.guard is not None or ins.is_terminator or ins.base == "call" or is_fence(ins):
        return False
    defs: list[str] = []
    for op in ins.dsts:
        if op.__class__ is not Address:  # (a store's address is read)
            regs_in(op, defs)
    return guard not in defs


def regions(fn: Function) -> list[tuple[int, int]]:
    """(branch index, target index) of every region :func:`if_convert` rewrites."""
    labelled = set(fn.labels.values())
    found: list[tuple[int, int]] = []
    for i, ins in enumerate(fn.instructions):
        target = ins.branch_target
        if ins.base != "bra" or ins.guard is None or target is None or target not in fn.labels:
            continue
        end = fn.labels[target]
        if not 1 <= end - i - 1 <= MAX_REGION:
            continue
        body = fn.instructions[i + 1:end]
        if any(k in labelled for k in range(i + 1, end)):
            continue
        if all(_convertible(b, ins.guard.name) for b in body):
            found.append((i, end))
    return found


def if_convert(fn: Function) -> Function:
    """A copy of `fn` with its short if-regions predicated (`fn` itself if it has none)."""
    found = regions(fn)
    if not found:
        return fn
    dropped = {i for i, _ in found}
    guard_of: dict[int, Reg] = {}
    for i, end in found:
        g = fn.instructions[i].guard
        assert g is not None
        for k in range(i + 1, end):
            guard_of[k] = Reg(g.name, not g.neg)
    new_index: dict[int, int] = {}
    out: list[Instruction] = []
    for k, ins in enumerate(fn.instructions):
        new_index[k] = len(out)
        if k in dropped:
            continue
        copy = dataclasses.replace(ins, guard=guard_of.get(k, ins.guard))
        copy.index = len(out)
        out.append(copy)
    new_index[len(fn.instructions)] = len(out)
    named = {i.branch_target for i in out if i.branch_target is not None}
    for targets in fn.branch_tables.values():
        named.update(targets)
    named.update(op.name for i in out if i.base == "brx" for op in i.srcs if op.__class__ is Symbol)
    labels = {name: new_index[k] for name, k in fn.labels.items() if name in named}
    conv = dataclasses.replace(fn, instructions=out, labels=labels, blocks=[], analyses={})
    build_blocks(conv)
    return conv
