"""Compile-time operand access for instruction semantics.

`OperandCompiler` turns an IR operand into a small closure once per static
instruction, so executing an instruction is a handful of NumPy calls:

* `reader(op, type)(state, idx)` -> values of PTX `type` for the lanes `idx`
  (an array, or a NumPy scalar for immediates and uniform values);
* `writer(op, type)(state, idx, values)` stores values of `type` into a register,
  truncating or sign/zero-extending to the register's declared width as PTX does;
* `address(op, space)(state, idx)` -> uint64 addresses in `space`
  (offsets for shared/local/param windows, device addresses for global/const).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.ir import Address, Function, Imm, Instruction, Reg, Sink, Special, Symbol, Vec
from tlpsim.functional.layout import Layout
from tlpsim.functional.memory import LOCAL_WINDOW, SHARED_WINDOW
from tlpsim.functional.state import SIGNED_OF_SIZE, STORAGE, UNSIGNED_OF_SIZE, VALUE, ChunkState

Reader = Callable[[ChunkState, np.ndarray], np.ndarray]
Writer = Callable[[ChunkState, np.ndarray, np.ndarray], None]

_SIGNED = {"s8", "s16", "s32", "s64"}
_FULL_MASK = 0xFFFFFFFFFFFFFFFF
_WINDOW_MASK = 0xFFFFFFFF  # shared/local state-space addresses are 32 bits


def value_dtype(ptx_type: str) -> np.dtype:
    return VALUE[ptx_type]


def immediate(value: int | float, is_float: bool, ptx_type: str) -> np.generic:
    """An immediate as a NumPy scalar of `ptx_type` (integers wrap to the width)."""
    dt = VALUE[ptx_type]
    if dt.kind == "f":
        return dt.type(value)
    if dt.kind == "b":
        return np.bool_(value)
    if is_float:
        value = int(value)
    mask = (1 << (8 * dt.itemsize)) - 1
    return np.array(int(value) & mask, dtype=UNSIGNED_OF_SIZE[dt.itemsize]).view(dt)[()]


class OperandCompiler:
    """Builds operand closures for one (flattened) kernel and its memory layout."""

    def __init__(self, fn: Function, layout: Layout, filename: str = "<ptx>") -> None:
        self.fn = fn
        self.layout = layout
        self.filename = filename

    def unsupported(self, ins: Instruction, what: str) -> UnsupportedPTX:
        return UnsupportedPTX(f"{what} in '{ins.opcode}' (kernel {self.fn.name})", self.filename, ins.line)

    # ------------------------------------------------------------ registers

    def storage(self, name: str) -> np.dtype:
        return STORAGE[self.fn.reg_types[name]]

    def reader(self, op, ptx_type: str) -> Reader:
        dt = VALUE[ptx_type]
        cls = op.__class__
        if cls is Reg:
            return self._reg_reader(op, dt)
        if cls is Imm:
            val = immediate(op.value, op.is_float, ptx_type)
            return lambda st, idx: val
        if cls is Special:
            return self._special_reader(op, dt)
        if cls is Symbol:
            addr = self.symbol_value(op)
            val = immediate(addr, False, ptx_type)
            return lambda st, idx: val
        raise UnsupportedPTX(f"operand {op} cannot be read as .{ptx_type} (kernel {self.fn.name})", self.filename, 0)

    def _reg_reader(self, op: Reg, dt: np.dtype) -> Reader:
        name = op.name
        sd = self.storage(name)
        if dt.kind == "b" or sd.kind == "b":
            if dt.kind == "b" and sd.kind == "b":
                if op.neg:
                    return lambda st, idx: ~st.regs[name][idx]
                return lambda st, idx: st.regs[name][idx]
            if sd.kind == "b":  # a predicate read as an integer (e.g. selp operand forms)
                return lambda st, idx: st.regs[name][idx].astype(dt)
            return lambda st, idx: st.regs[name][idx] != 0
        if sd.itemsize == dt.itemsize:
            if sd == dt:
                return lambda st, idx: st.regs[name][idx]
            return lambda st, idx: st.regs[name][idx].view(dt)
        if sd.itemsize > dt.itemsize:  # wider register: use the low bits
            narrow = UNSIGNED_OF_SIZE[dt.itemsize]
            return lambda st, idx: st.regs[name][idx].astype(narrow).view(dt)
        if dt.kind == "f":
            wide_u = UNSIGNED_OF_SIZE[dt.itemsize]
            return lambda st, idx: st.regs[name][idx].astype(wide_u).view(dt)
        if dt.kind == "i":  # narrower register read by a signed type: sign-extend
            src_s = SIGNED_OF_SIZE[sd.itemsize]
            return lambda st, idx: st.regs[name][idx].view(src_s).astype(dt)
        return lambda st, idx: st.regs[name][idx].astype(dt)

    def _special_reader(self, op: Special, dt: np.dtype) -> Reader:
        key = op.name + ("." + op.component if op.component else "")
        if op.name in ("clock", "clock64", "clock_hi", "globaltimer", "globaltimer_lo", "globaltimer_hi"):
            return lambda st, idx: np.array(st.clock, dtype=np.uint64).astype(dt)[()]
        if key in ("tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z", "laneid", "warpid", "smid",
                   "lanemask_eq", "lanemask_lt", "lanemask_le", "lanemask_gt", "lanemask_ge"):
            return lambda st, idx: st.sreg[key][idx].astype(dt, copy=False)
        if key in ("ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z", "nwarpid", "nsmid", "gridid",
                   "dynamic_smem_size", "total_smem_size"):
            return lambda st, idx: dt.type(st.constants[key])
        if op.name.startswith("envreg"):  # set by the driver (a cooperative launch's grid workspace), else 0
            name = op.name
            return lambda st, idx: dt.type(st.constants.get(name, 0))
        raise UnsupportedPTX(f"special register %{key} is not supported (kernel {self.fn.name})", self.filename, 0)

    def writer(self, op, ptx_type: str) -> Writer:
        cls = op.__class__
        if cls is Sink:
            return lambda st, idx, v: None
        if cls is not Reg:
            raise UnsupportedPTX(f"cannot write to operand {op} (kernel {self.fn.name})", self.filename, 0)
        name = op.name
        sd = self.storage(name)
        dt = VALUE[ptx_type]

        if sd.kind == "b":
            def write_pred(st, idx, v):
                st.regs[name][idx] = v
            return write_pred
        if sd.itemsize == dt.itemsize:
            def write_same(st, idx, v):
                st.regs[name][idx] = np.asarray(v, dtype=dt).view(sd)
            return write_same
        if sd.itemsize < dt.itemsize:  # narrower register keeps the low bits
            def write_trunc(st, idx, v):
                st.regs[name][idx] = np.asarray(v, dtype=dt).view(UNSIGNED_OF_SIZE[dt.itemsize]).astype(sd)
            return write_trunc
        ext_signed = ptx_type in _SIGNED

        def write_ext(st, idx, v):
            arr = np.asarray(v, dtype=dt)
            if ext_signed:
                st.regs[name][idx] = arr.astype(SIGNED_OF_SIZE[sd.itemsize]).view(sd)
            else:
                st.regs[name][idx] = arr.view(UNSIGNED_OF_SIZE[dt.itemsize]).astype(sd)
        return write_ext

    # ------------------------------------------------------------ symbols and addresses

    def symbol_value(self, sym: Symbol) -> int:
        """The value of a symbol used as an operand: its address in its own space."""
        try:
            return self.layout.address_of(sym.name) + sym.offset
        except KeyError:
            raise UnsupportedPTX(f"symbol '{sym.name}' is not a variable of kernel {self.fn.name} "
                                 "(function addresses and textures are not supported)", self.filename, 0) from None

    def symbol_space(self, sym: Symbol) -> str | None:
        return self.layout.space_of(sym.name)

    def address(self, op: Address, ptx_space: str | None) -> Callable[[ChunkState, np.ndarray], np.ndarray]:
        """Addresses of `[base+offset]` for the lanes idx, as uint64.

        Shared and local addresses are 32-bit offsets in their windows and wrap
        modulo 2^32: nvcc -O3 keeps e.g. `tile - 68*tx` in a register that wraps
        below zero and adds a positive offset in the access (Rodinia nw)."""
        off = op.offset
        base = op.base
        bits = _WINDOW_MASK if ptx_space in ("shared", "local") else _FULL_MASK
        if base is None:
            const = np.uint64(off & bits)
            return lambda st, idx: np.full(len(idx), const, dtype=np.uint64)
        if base.__class__ is Symbol:
            space = self.layout.space_of(base.name)
            value = self.symbol_value(base) + off
            if ptx_space in (None, "generic"):
                value = to_generic(space, value)
            const = np.uint64(value & bits)
            return lambda st, idx: np.full(len(idx), const, dtype=np.uint64)
        rd = self._reg_reader(base, STORAGE[self.fn.reg_types[base.name]])
        wide = np.uint64(off & _FULL_MASK)
        if bits == _WINDOW_MASK:
            mask = np.uint64(bits)
            if off == 0 and STORAGE[self.fn.reg_types[base.name]].itemsize <= 4:
                return lambda st, idx: rd(st, idx).astype(np.uint64)
            return lambda st, idx: (rd(st, idx).astype(np.uint64) + wide) & mask
        if off == 0:
            return lambda st, idx: rd(st, idx).astype(np.uint64, copy=False)
        return lambda st, idx: rd(st, idx).astype(np.uint64) + wide

    def space_of_access(self, ins: Instruction) -> str:
        """The state space an ld/st/atom accesses: generic when unqualified; kernel
        parameters ('kparam') versus call-sequence parameters ('param')."""
        space = ins.space or "generic"
        if space == "param":
            addr = next((o for o in ins.srcs + ins.dsts if isinstance(o, Address)), None)
            if addr is not None and isinstance(addr.base, Symbol):
                return "kparam" if self.layout.space_of(addr.base.name) == "kparam" else "param"
            return "kparam" if self.fn.is_entry else "param"
        return space

    def vector(self, op, ptx_type: str, n: int, *, write: bool):
        """Per-element readers or writers of a `{a, b, ...}` operand (or a scalar for n=1)."""
        elems = op.elems if isinstance(op, Vec) else (op,)
        if len(elems) != n:
            raise UnsupportedPTX(f"vector operand {op} has {len(elems)} elements, expected {n}", self.filename, 0)
        return [self.writer(e, ptx_type) if write else self.reader(e, ptx_type) for e in elems]


def to_generic(space: str | None, value: int) -> int:
    """Map an address in a state space to the generic address space."""
    if space == "shared":
        return SHARED_WINDOW + value
    if space == "local":
        return LOCAL_WINDOW + value
    return value


def from_generic(space: str, value: np.ndarray) -> np.ndarray:
    if space == "shared":
        return value - np.uint64(SHARED_WINDOW)
    if space == "local":
        return value - np.uint64(LOCAL_WINDOW)
    return value
