"""The control-flow graph of a PTX function and its SIMT reconvergence points.

A branch's reconvergence point is the first instruction of the immediate
post-dominator of the branch's block (Fung et al., IPDOM reconvergence): every path
from the branch passes there, so the SIMT stack can rejoin the diverged lanes.
"""

from __future__ import annotations

from tlpsim.analysis.cfg import CFG
from tlpsim.frontend.ir import Function

EXIT = -1  # reconvergence "at kernel exit": the paths never rejoin


def kernel_cfg(fn: Function) -> CFG[int]:
    """CFG over basic-block indices (entry block 0), cached on the function."""
    cfg = fn.analyses.get("cfg")
    if cfg is None:
        edges = [(b.index, s) for b in fn.blocks for s in b.succs]
        cfg = CFG.from_edges(0, range(len(fn.blocks)), edges)
        fn.analyses["cfg"] = cfg
    return cfg


def reconvergence_points(fn: Function) -> dict[int, int]:
    """Map each branch instruction index to the instruction index where its
    diverged lanes reconverge, or EXIT when they only meet at the exit."""
    rp = fn.analyses.get("reconvergence")
    if rp is None:
        ipdom = kernel_cfg(fn).immediate_post_dominators()
        rp = {}
        for blk in fn.blocks:
            last = fn.instructions[blk.end - 1]
            if last.base in ("bra", "brx"):
                target = ipdom.get(blk.index)
                rp[last.index] = EXIT if target is None else fn.blocks[target].start
        fn.analyses["reconvergence"] = rp
    return rp


def cfg_dot(fn: Function, color: dict[int, str] | None = None) -> str:
    """Graphviz DOT of the function's CFG; each node lists its instructions."""
    def label(b: int) -> str:
        blk = fn.blocks[b]
        head = ",".join(blk.labels) or f"B{b}"
        body = "\n".join(str(fn.instructions[k]) for k in range(blk.start, blk.end))
        return f"{head}\n{body}"

    return kernel_cfg(fn).to_dot(fn.name, label=label, color=(color.get if color else None))
