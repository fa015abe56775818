"""Harness for instruction-semantics tests: run straight-line PTX on one CTA with
given register contents, without the SIMT engine."""

from __future__ import annotations

import numpy as np
import pytest

from tlpsim.frontend.ptx_parser import parse_ptx
from tlpsim.functional.layout import build_layout
from tlpsim.functional.memory import DeviceMemory
from tlpsim.functional.operands import OperandCompiler
from tlpsim.functional.semantics import load_all
from tlpsim.functional.state import ChunkState, Geometry

HEADER = ".version 9.5\n.target sm_80\n.address_size 64\n"


class Straight:
    """Result of `exec_ptx`: final state plus typed register access."""

    def __init__(self, state: ChunkState, fn, memory: DeviceMemory, addresses: list) -> None:
        self.state = state
        self.fn = fn
        self.memory = memory
        self.addresses = addresses  # what each memory instruction returned

    def reg(self, name: str, dtype=None) -> np.ndarray:
        arr = self.state.regs[name]
        return arr.view(dtype) if dtype is not None else arr


def exec_ptx(body: str, regs: dict | None = None, *, decls: str = "", n_threads: int = 32, idx=None,
             shared_bytes: int = 256, local_bytes: int = 64, memory: DeviceMemory | None = None,
             params: str = "", kernel_params: bytes = b"", module_decls: str = "", block=None) -> Straight:
    """Run `body` (instructions, one per line) for threads `idx` (default: all).

    `decls` declares registers (e.g. ".reg .b32 %r<8>; .reg .f32 %f<8>; .reg .pred %p<4>;").
    `regs` maps a register name to an array (or scalar) written raw into its storage
    before execution (values are cast to the register's storage after a view of the
    same width, so float32 arrays can be given for .f32 registers)."""
    load_all()
    text = (HEADER + module_decls + f"\n.visible .entry k({params})\n{{\n" + decls + "\n" + body + "\nret;\n}\n")
    module = parse_ptx(text, "<test>")
    fn = module.kernels["k"]
    memory = memory or DeviceMemory()
    gaddr = {}
    for v in module.variables.values():
        if v.space in ("global", "const"):
            gaddr[v.name] = memory.alloc(max(v.size, 1), v.name)
            if v.init:
                memory.write(gaddr[v.name], v.init)
    layout = build_layout(module, fn, gaddr)
    oc = OperandCompiler(fn, layout, "<test>")
    block = block or (n_threads, 1, 1)
    geom = Geometry((1, 1, 1), block)
    st = ChunkState(geom, 0, 1, fn.reg_types, memory,
                    np.frombuffer(kernel_params.ljust(max(layout.kparam_bytes, 16), b"\0"), dtype=np.uint8).copy(),
                    max(shared_bytes, layout.shared_static_bytes), max(local_bytes, layout.local_bytes),
                    max(layout.param_frame_bytes, 16))
    for name, val in (regs or {}).items():
        store = st.regs[name]
        arr = np.asarray(val)
        if arr.dtype.itemsize == store.dtype.itemsize and arr.dtype != store.dtype and store.dtype.kind != "b":
            arr = arr.view(store.dtype)
        store[...] = np.broadcast_to(arr, store.shape)[: store.size] if arr.size in (1, store.size) else arr
    semantics = load_all()
    ex_idx = np.arange(n_threads, dtype=np.int64) if idx is None else np.asarray(idx, dtype=np.int64)
    addresses = []
    for ins in fn.instructions:
        if ins.base == "ret":
            break
        build = semantics.get(ins.base)
        if build is None:
            raise AssertionError(f"no semantic for {ins.opcode}")
        run = build(ins, oc)
        lanes = ex_idx
        if ins.guard is not None:
            g = oc.reader(ins.guard, "pred")(st, ex_idx)
            lanes = ex_idx[np.broadcast_to(g, ex_idx.shape)]
        out = run(st, lanes)
        if ins.opclass in ("mem", "atomic"):
            addresses.append(out)
    return Straight(st, fn, memory, addresses)


@pytest.fixture
def run_ptx():
    return exec_ptx
