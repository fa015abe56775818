"""Basic-block construction for a parsed function (leaders, successors, predecessors)."""

from __future__ import annotations

from tlpsim.errors import PTXSyntaxError
from tlpsim.frontend.ir import BasicBlock, Function, Symbol


def branch_targets(fn: Function, instr_index: int) -> tuple[int, ...]:
    """Instruction indices a branch at `instr_index` may jump to (not the fall-through)."""
    ins = fn.instructions[instr_index]
    if ins.base == "bra":
        return (fn.labels[ins.srcs[0].name],)
    if ins.base == "brx":
        table = ins.srcs[-1]
        if not isinstance(table, Symbol) or table.name not in fn.branch_tables:
            raise PTXSyntaxError("brx.idx needs a .branchtargets label", "<ptx>", ins.line)
        return tuple(fn.labels[t] for t in fn.branch_tables[table.name])
    return ()


def build_blocks(fn: Function) -> None:
    """Split `fn.instructions` into basic blocks and link them; sets `Instruction.block`."""
    instrs = fn.instructions
    n = len(instrs)
    leaders = {0}
    for idx in fn.labels.values():
        if idx < n:
            leaders.add(idx)
    for ins in instrs:
        if ins.is_terminator and ins.index + 1 < n:
            leaders.add(ins.index + 1)
    starts = sorted(leaders)
    labels_at: dict[int, list[str]] = {}
    for label, idx in fn.labels.items():
        labels_at.setdefault(idx, []).append(label)
    blocks = []
    block_of_start = {}
    for b, start in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else n
        blocks.append(BasicBlock(b, start, end, tuple(labels_at.get(start, ()))))
        block_of_start[start] = b
        for k in range(start, end):
            instrs[k].block = b
    preds: list[list[int]] = [[] for _ in blocks]
    for blk in blocks:
        last = instrs[blk.end - 1]
        succs: list[int] = []
        if last.base in ("bra", "brx"):
            succs.extend(block_of_start[t] for t in branch_targets(fn, last.index))
            if last.guard is not None and blk.end < n:
                succs.append(blk.index + 1)
        elif last.base in ("ret", "exit", "trap"):
            if last.guard is not None and blk.end < n:
                succs.append(blk.index + 1)
        elif blk.end < n:
            succs.append(blk.index + 1)
        uniq = tuple(dict.fromkeys(succs))
        blk.succs = uniq
        for s in uniq:
            preds[s].append(blk.index)
    for blk in blocks:
        blk.preds = tuple(preds[blk.index])
    fn.blocks = blocks
