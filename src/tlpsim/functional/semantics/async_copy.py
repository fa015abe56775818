"""Ampere's asynchronous global-to-shared copies (PTX `cp.async`), as CUB's sm_80
kernels use them (thrust::transform):

    cp.async.cg.shared.global [dst], [src], cp-size{, src-size};
    cp.async.commit_group;  cp.async.wait_group N;  cp.async.wait_all;

The functional model completes each copy when it is issued: the PTX ISA only
promises the data at the matching wait, and reading the destination earlier is
undefined, so an early copy is one valid execution. `src-size` bytes are read
and the rest of the cp-size bytes are zero-filled, as the ISA defines;
commit/wait have nothing left to do. Not implemented: the `.mbarrier` arrive
forms and the bulk (TMA) copies of sm_90. The instruction returns its shared
addresses (the timing model sees a shared-memory store; the global read is not
simulated).
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Address, Imm
from tlpsim.functional.memory import MemoryFault
from tlpsim.functional.semantics import semantic


@semantic("cp")
def build_cp(ins, oc):
    mods = ins.mods
    if "async" not in mods:
        raise oc.unsupported(ins, "a cp form other than cp.async")
    if "commit_group" in mods or "wait_group" in mods or "wait_all" in mods:
        return lambda st, idx: None  # every copy is already complete
    if "bulk" in mods or "mbarrier" in mods or "shared" not in mods or "global" not in mods:
        raise oc.unsupported(ins, "a cp.async form other than cp.async.{ca,cg}.shared.global")
    ops = list(ins.dsts) + list(ins.srcs)
    addrs = [o for o in ops if isinstance(o, Address)]
    rest = [o for o in ops if not isinstance(o, Address)]
    if len(addrs) != 2 or not rest or not isinstance(rest[0], Imm) or rest[0].value not in (4, 8, 16):
        raise oc.unsupported(ins, "operands other than [dst], [src], cp-size (4, 8 or 16){, src-size}")
    if any(m.startswith("L2::cache_hint") for m in mods):
        rest = rest[:-1]  # the cache policy operand: a hint
    size = int(rest[0].value)
    src_size = oc.reader(rest[1], "u32") if len(rest) > 1 else None
    dst_addr = oc.address(addrs[0], "shared")
    src_addr = oc.address(addrs[1], "global")
    span = np.arange(size, dtype=np.int64)

    def exec_cp(st, idx):
        d = dst_addr(st, idx)
        s = src_addr(st, idx)
        n = np.full(len(idx), size, dtype=np.int64) if src_size is None \
            else np.minimum(np.broadcast_to(np.asarray(src_size(st, idx)), (len(idx),)).astype(np.int64), size)
        data = np.zeros((len(idx), size), dtype=np.uint8)
        full = np.flatnonzero(n == size)
        if full.size:
            for sel, buf, offs in _resolve_load(st, s[full], idx[full], size):
                rows = full if sel is None else full[sel]
                data[rows] = buf[offs[:, None] + span]
        for k in range(int(n.max(initial=0)) if (n < size).any() else 0):  # partial copies: byte by byte
            part = np.flatnonzero((n < size) & (n > k))
            for sel, buf, offs in _resolve_load(st, s[part] + np.uint64(k), idx[part], 1):
                rows = part if sel is None else part[sel]
                data[rows, k] = buf[offs]
        for sel, buf, offs in st.resolve("shared", d, idx, size):
            rows = slice(None) if sel is None else sel
            buf[offs[:, None] + span] = data[rows]
        return d

    return exec_cp


def _resolve_load(st, addrs, idx, size):
    try:
        return st.resolve("global", addrs, idx, size)
    except MemoryFault as fault:
        return st.oob_load("global", addrs, idx, size, fault)  # re-raises unless such reads return 0
