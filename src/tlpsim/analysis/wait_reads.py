"""Wait reads: loads and atomics whose value decides whether a loop containing them
is left — the polls of a spin-wait (`while (flag[0] == 0) {}`, `while
(atomicCAS(lock, 0, 1) != 0) {}`, a grid barrier's wait).

Such a loop can only end when memory changes, so if another CTA made the change,
the reader depends on that CTA having run. A read whose value only picks a path
(`if (level[u] < 0) ...` inside a loop that ends by its own counter) is not a wait:
with another value the program still progresses, only differently.

A loop's exit decisions are the conditional branches its exit edges are control
dependent on (within the loop); the wait reads are the loads/atomics in the loop
whose results reach those branches' predicates through the loop's data flow —
unless the decision also depends on a value the loop changes by itself (a cycle of
registers: a counter, so the loop ends without memory changing, like a bounded
spin or a loop to a re-read bound), or the read is a compare-and-swap retried with
the value read before (an optimistic update: it ends when nobody else writes).
"""

from __future__ import annotations

from tlpsim.analysis.kernel_cfg import kernel_cfg
from tlpsim.frontend.ir import Address, Function, Reg, Vec

__all__ = ["wait_reads"]

_READS = ("ld", "ldu", "atom")


def _regs(ops) -> set[str]:
    out: set[str] = set()
    for op in ops:
        if isinstance(op, Reg):
            out.add(op.name)
        elif isinstance(op, Vec):
            out |= _regs(op.elems)
        elif isinstance(op, Address) and isinstance(op.base, Reg):
            out.add(op.base.name)
    return out


def wait_reads(fn: Function) -> frozenset[int]:
    """Instruction indices of the wait reads of a (flattened) function, cached on it."""
    cached = fn.analyses.get("wait_reads")
    if cached is not None:
        return cached
    cfg = kernel_cfg(fn)
    pdom = cfg.post_dominators()
    found: set[int] = set()
    for loop in cfg.loops().values():
        blocks = [fn.blocks[b] for b in sorted(loop.body)]
        instrs = [ins for blk in blocks for ins in fn.instructions[blk.start: blk.end]]
        if not any(ins.base in _READS for ins in instrs):
            continue
        # branches deciding an exit: those an exit edge's source is control dependent on
        deciders: set[int] = set()
        for src, _ in loop.exits:
            for b in loop.body:
                if any(src in pdom.get(s, ()) for s in cfg.successors(b)) and (src == b or src not in pdom.get(b, ())):
                    deciders.add(b)
        wanted: set[str] = set()
        for b in deciders:
            last = fn.instructions[fn.blocks[b].end - 1]
            if last.base in ("bra", "brx") and (last.guard is not None or last.base == "brx"):
                wanted |= {last.guard.name} if last.guard is not None else _regs(last.srcs)
        if not wanted:
            continue
        # backward data flow inside the loop, stopping at reads (iterated: values carried
        # round the loop); `feeds` maps each register defined by other instructions to its sources
        reads: set[int] = set()
        feeds: dict[str, set[str]] = {}
        changed = True
        while changed:
            changed = False
            for ins in instrs:
                defs = _regs(ins.dsts) & wanted
                if not defs:
                    continue
                uses = set() if ins.base in _READS else _regs(ins.srcs)
                if ins.guard is not None:
                    uses.add(ins.guard.name)
                if ins.base in _READS and ins.index not in reads and not _retry(ins, instrs):
                    reads.add(ins.index)
                    changed = True
                for d in defs:
                    if not uses <= feeds.setdefault(d, set()):
                        feeds[d] |= uses
                if not uses <= wanted:
                    wanted |= uses
                    changed = True
        # a decision that also changes without memory (a counter, an accumulator: a cycle
        # among the registers feeding it) can end the loop by itself: not a wait
        if reads and not _has_cycle(feeds):
            found |= reads
    result = frozenset(found)
    fn.analyses["wait_reads"] = result
    return result


def _retry(ins, instrs: list) -> bool:
    """A compare-and-swap whose expected value the loop derives from a read (the value
    seen before): an optimistic update retried until memory stays put, which needs no
    other CTA. (A lock's `atomicCAS(lock, 0, 1)` expects a constant: a wait.)"""
    if ins.base != "atom" or "cas" not in ins.mods or len(ins.srcs) < 2:
        return False
    todo, seen = list(_regs(ins.srcs[1:2])), set()
    while todo:
        r = todo.pop()
        if r in seen:
            continue
        seen.add(r)
        for d in instrs:
            if r in _regs(d.dsts):
                if d.base in _READS:
                    return True
                todo.extend(_regs(d.srcs))
    return False


def _has_cycle(feeds: dict[str, set[str]]) -> bool:
    """Whether the register dependence graph has a cycle (iterative DFS)."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for root in feeds:
        if state.get(root):
            continue
        stack = [(root, iter(feeds.get(root, ())))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return True
            elif not state.get(nxt) and nxt in feeds:
                state[nxt] = 1
                stack.append((nxt, iter(feeds[nxt])))
    return False
