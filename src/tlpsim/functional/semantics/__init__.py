"""Instruction semantics of the functional model, one module per instruction family.

A semantic is a *builder* registered for one or more base opcodes:

    @semantic("add", "sub")
    def build_add(ins: Instruction, oc: OperandCompiler) -> ExecFn: ...

It is called once per static instruction and returns `exec(state, idx)`, which
executes the instruction for the thread indices `idx` (int64 array, already
filtered by the SIMT mask and the guard predicate) of a ChunkState. Memory
instructions return the uint64 addresses they accessed (one per lane of `idx`,
in the instruction's state space) so the tracer can record them; others return
None. Builders raise UnsupportedPTX (via `oc.unsupported`) for forms they do
not implement. Control flow (bra, brx, ret, exit, bar) is the engine's; `call`
remains only for the device system calls (syscalls.py).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tlpsim.frontend.ir import Instruction

ExecFn = Callable[[object, np.ndarray], "np.ndarray | None"]
Builder = Callable[[Instruction, object], ExecFn]

SEMANTICS: dict[str, Builder] = {}


def semantic(*bases: str) -> Callable[[Builder], Builder]:
    """Register a builder for the given base opcodes (duplicates are an error)."""

    def register(builder: Builder) -> Builder:
        for base in bases:
            if base in SEMANTICS:
                raise RuntimeError(f"two semantics registered for '{base}'")
            SEMANTICS[base] = builder
        return builder

    return register


def load_all() -> dict[str, Builder]:
    """Import every family module so its builders register themselves."""
    from tlpsim.functional.semantics import (  # noqa: F401
        async_copy, atomics, convert, floating, integer, memory_ops, syscalls, texture, warp,
    )

    return SEMANTICS
