"""Issue order within basic blocks as an optimising assembler lays it out.

nvcc's PTX keeps each load next to its first use (``ld; ld; fma; ld; ld; fma``);
ptxas's SASS for sm_90 hoists the loads of a block ahead of the arithmetic, so a
warp has many loads in flight before its first use stalls (sgemm_naive's k loop:
32 ``LDG`` then 16 ``FFMA`` in the cubin, against ``ld, ld, fma`` x 16 in the PTX).
A simulator that issues the PTX in order, one warp at a time and in order, exposes
every load's latency in turn.  :func:`block_schedule` is a list scheduler over each
basic block's dependence graph: among the instructions whose predecessors are
placed, it takes the one with the longest latency-weighted path to the block's
end (loads first, as they head the longest paths), ties in program order.

The dependence graph keeps every order a thread can observe:

* registers (predicates and guards included): read after write, write after read,
  write after write;
* the carry flag of ``.cc`` / ``addc`` / ``subc`` / ``madc`` chains (an implicit
  register);
* memory: a store, atomic or reduction stays ordered with every memory access
  it may alias; loads only with those (loads of read-only memory -- ``.nc``,
  ``.const``, ``.param`` -- may pass each other and everything but fences).
  Two accesses cannot alias, as ptxas proves it, when they are in different
  state spaces (``.shared``, ``.global``, ``.local``; a generic address may be in
  any), or when they address the same base register value (no redefinition
  between them) or symbol at constant offsets whose byte ranges do not overlap:
  sgemm_tiled's epilogue ``ld [%rd64]; st [%rd64]; ld [%rd64+64]; ...`` runs as
  four ``LDG`` then four ``STG`` per base in the cubin (nvdisasm 13.5).  Atomics
  and reductions stay ordered with every access;
* fences: barriers, memory fences, warp-synchronous and side-effecting
  instructions (``bar``, ``membar``, ``fence``, ``vote``, ``shfl``, ``call``,
  ``printf``'s ``call``, clock reads, ...) keep their place against every other
  instruction, so ``%clock`` intervals still time what they enclose;
* the block's terminator (``bra``, ``ret``, ``exit``) stays last.

Functional results cannot change: every reordering respects these dependences
within one thread, and warp-level operations do not move.  The result is a
permutation per block; :func:`reschedule` applies it to a function.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from tlpsim.analysis.liveness import regs_in
from tlpsim.frontend.ir import (
    Address,
    BasicBlock,
    Function,
    Instruction,
    Special,
    Symbol,
)
from tlpsim.frontend.opcodes import TERMINATORS

__all__ = ["LATENCY", "ORDER_VERSION", "block_schedule", "is_fence", "reschedule", "schedule_order"]

#: The list order's version: a cached trace of a list-scheduled launch is keyed by it,
#: so a trace recorded in an older order is not replayed (2: memory disambiguation; 3:
#: if-conversion, tlpsim.analysis.ifconvert).
ORDER_VERSION = 3

#: Latency weights of the priority (cycles, order of magnitude only: they rank paths).
LATENCY = {"global_load": 400, "shared_load": 30, "sfu": 20, "other": 4}

_CARRY = "<carry>"
# whole-warp or side-effecting instructions: they keep their place against everything
_FENCE_BASES = frozenset({
    "bar", "barrier", "membar", "fence", "mbarrier", "call", "vote", "shfl", "match", "redux", "activemask",
    "elect", "nanosleep", "pmevent", "brkpt", "trap", "griddepcontrol", "setmaxnreg", "alloca", "stacksave",
    "stackrestore", "cp", "prefetch", "prefetchu", "discard", "applypriority", "multimem", "mma", "wmma",
    "wgmma", "tcgen05", "ldmatrix", "stmatrix", "movmatrix", "tensormap", "clusterlaunchcontrol", "getctarank",
    "mapa", "sust", "sured", "suld", "suq", "tex", "tld4", "txq", "istypeof",
})
_TIMERS = frozenset({"clock", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi"})
_READ_ONLY_SPACES = frozenset({"const", "param"})
_SFU_BASES = frozenset({"sin", "cos", "ex2", "lg2", "rcp", "sqrt", "rsqrt", "tanh"})


def _reads_timer(ins: Instruction) -> bool:
    return any(op.__class__ is Special and op.name in _TIMERS for op in ins.srcs)


def is_fence(ins: Instruction) -> bool:
    """True if `ins` keeps its place against every other instruction of its block."""
    return ins.base in _FENCE_BASES or _reads_timer(ins) or "volatile" in ins.mods


def _is_load(ins: Instruction) -> bool:
    return ins.base in ("ld", "ldu")


def _read_only(ins: Instruction) -> bool:
    return _is_load(ins) and (ins.space in _READ_ONLY_SPACES or "nc" in ins.mods or ins.base == "ldu")


def _writes_memory(ins: Instruction) -> bool:
    return ins.base in ("st", "atom", "red")


_SPACE_CLASS = {"shared": "shared", "shared::cta": "shared", "shared::cluster": "shared", "global": "global",
                "local": "local"}
_TYPE = re.compile(r"^[a-z]+(8|16|32|64|128)(?:x(\d+))?$")  # f32, b64, f16x2, ...

#: A memory access's location as the disambiguation sees it: (space class or None for
#: generic, base key or None, first byte, end byte).
Location = tuple[str | None, tuple | None, int, int]


def _address(ins: Instruction) -> Address | None:
    for op in (*ins.dsts, *ins.srcs):
        if op.__class__ is Address:
            return op  # type: ignore[return-value]
    return None


def _access_bytes(ins: Instruction) -> int:
    """Bytes one thread's access covers (0: unknown)."""
    width = 0
    for t in ins.types:
        m = _TYPE.match(t)
        if m is None:
            return 0
        width = max(width, int(m.group(1)) // 8 * int(m.group(2) or 1))
    return width * max(ins.vec, 1)


def _location(ins: Instruction, version: dict[str, int]) -> Location:
    """Where `ins` accesses memory, for :func:`_may_alias` (`version`: the index of each
    register's last definition in the block so far)."""
    space = _SPACE_CLASS.get(ins.space or "")
    addr = _address(ins)
    size = _access_bytes(ins)
    if addr is None or size == 0 or ins.base != "ld" and ins.base != "st":
        return (space, None, 0, 0)
    base = addr.base
    if base is None:
        key: tuple = ("abs",)
    elif base.__class__ is Symbol:
        key = ("sym", base.name)  # type: ignore[union-attr]
    else:
        key = ("reg", base.name, version.get(base.name, -1))  # type: ignore[union-attr]
    lo = addr.offset + (base.offset if base.__class__ is Symbol else 0)  # type: ignore[union-attr]
    return (space, key, lo, lo + size)


def _may_alias(a: Location, b: Location) -> bool:
    if a[0] is not None and b[0] is not None and a[0] != b[0]:
        return False  # distinct state-space windows
    if a[1] is not None and a[1] == b[1] and (a[3] <= b[2] or b[3] <= a[2]):
        return False  # one base value, disjoint byte ranges
    return True


def _latency(ins: Instruction) -> int:
    if _is_load(ins):
        return LATENCY["shared_load"] if ins.space == "shared" else LATENCY["global_load"]
    if ins.base in _SFU_BASES:
        return LATENCY["sfu"]
    return LATENCY["other"]


def _uses_carry(ins: Instruction) -> bool:
    return "cc" in ins.mods or ins.base in ("addc", "subc", "madc")


def block_schedule(instructions: Sequence[Instruction]) -> list[int]:
    """The order (positions into `instructions`, one basic block) in which to issue them."""
    n = len(instructions)
    if n < 3:
        return list(range(n))
    succs: list[set[int]] = [set() for _ in range(n)]
    n_preds = [0] * n
    last_def: dict[str, int] = {}
    reads_since_def: dict[str, list[int]] = {}
    last_fence = -1
    since_fence: list[int] = []          # every instruction after the last fence
    mem_writes: list[int] = []           # stores/atomics since the last fence
    mem_accesses: list[int] = []         # every memory access (but read-only loads) since the last fence
    where: dict[int, Location] = {}      # their locations

    def edge(a: int, b: int) -> None:
        if a != b and b not in succs[a]:
            succs[a].add(b)
            n_preds[b] += 1

    for i, ins in enumerate(instructions):
        reads: list[str] = []
        if ins.guard is not None:
            reads.append(ins.guard.name)
        for op in ins.srcs:
            regs_in(op, reads)
        defs: list[str] = []
        for op in ins.dsts:
            regs_in(op, reads if op.__class__ is Address else defs)
        if _uses_carry(ins):
            reads.append(_CARRY)
            defs.append(_CARRY)
        for r in reads:
            if r in last_def:
                edge(last_def[r], i)
        for r in defs:
            if r in last_def:
                edge(last_def[r], i)
            for u in reads_since_def.get(r, ()):
                edge(u, i)
        if last_fence >= 0:
            edge(last_fence, i)
        fence = is_fence(ins) or (i == n - 1 and ins.base in TERMINATORS)
        if fence:
            for j in since_fence:
                edge(j, i)
            last_fence, since_fence, mem_writes, mem_accesses = i, [], [], []
        else:
            since_fence.append(i)
            if _writes_memory(ins):
                loc = where[i] = _location(ins, last_def)
                for j in mem_accesses:
                    if ins.base != "st" or instructions[j].base not in ("ld", "st") or _may_alias(where[j], loc):
                        edge(j, i)
                mem_writes.append(i)
                mem_accesses.append(i)
            elif _is_load(ins) and not _read_only(ins):
                loc = where[i] = _location(ins, last_def)
                for j in mem_writes:
                    if instructions[j].base != "st" or _may_alias(where[j], loc):
                        edge(j, i)
                mem_accesses.append(i)
        for r in reads:
            reads_since_def.setdefault(r, []).append(i)
        for r in defs:
            last_def[r] = i
            reads_since_def[r] = []

    height = [0] * n
    for i in range(n - 1, -1, -1):
        lat = _latency(instructions[i])
        height[i] = lat + max((height[s] for s in succs[i]), default=0)
    # list scheduling: the ready instruction heading the longest path, ties in program order
    import heapq

    ready = [(-height[i], i) for i in range(n) if n_preds[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    left = list(n_preds)
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for s in succs[i]:
            left[s] -= 1
            if left[s] == 0:
                heapq.heappush(ready, (-height[s], s))
    if len(order) != n:  # a cycle cannot arise from program-order edges
        raise AssertionError("block_schedule: dependence graph is not acyclic")
    return order


def schedule_order(fn: Function) -> list[int]:
    """Old instruction index per new position, for every block of `fn`."""
    order: list[int] = []
    for bb in fn.blocks:
        ins = fn.instructions[bb.start:bb.end]
        order.extend(bb.start + k for k in block_schedule(ins))
    if len(order) != len(fn.instructions):
        raise AssertionError(f"{fn.name}: blocks do not cover the instructions")
    return order


def reschedule(fn: Function) -> Function:
    """A copy of `fn` whose blocks issue in :func:`schedule_order` (indices renumbered;
    blocks, labels and branch targets keep their positions)."""
    order = schedule_order(fn)
    if order == list(range(len(order))):
        return fn
    new_ins = []
    for pos, old in enumerate(order):
        ins = dataclasses.replace(fn.instructions[old])
        ins.index = pos
        new_ins.append(ins)
    blocks = [BasicBlock(b.index, b.start, b.end, b.labels, b.succs, b.preds) for b in fn.blocks]
    return dataclasses.replace(fn, instructions=new_ins, blocks=blocks, analyses={})
