"""The device runtime's system calls that kernels reach through `call`: `vprintf`
(device-side printf) and `__assertfail` (a failed `assert`). Every other call is
inlined by the front-end (frontend.inline), which keeps only these.

`vprintf` renders the lanes' output in thread order and writes it to
`sys.stdout` as it executes (the host API's caller decides where that goes;
`tlpsim exec` buffers it until the program synchronises, as CUDA does), then
returns the number of arguments to each lane. `__assertfail` prints CUDA's
message for the first failing lane on `sys.stderr` and stops the launch with a
DeviceAssertion that the engine turns into a KernelError naming the thread.
"""

from __future__ import annotations

import sys

import numpy as np

from tlpsim.frontend.inline import SYSCALLS
from tlpsim.frontend.ir import Instruction, Symbol
from tlpsim.functional.memory import GLOBAL_BASE, MemoryFault
from tlpsim.functional.printf import MAX_ARGS, Conversion, format_value, layout, parse_format
from tlpsim.functional.semantics import semantic

_MAX_STRING = 1 << 16  # a %s or format string longer than this is reported, not read forever


class DeviceAssertion(Exception):
    """A lane executed `__assertfail`; `lane` is its position in the executing lanes."""

    def __init__(self, lane: int, message: str) -> None:
        super().__init__(message)
        self.lane = lane


def _param_offsets(ins: Instruction, oc, n_args: int) -> list[int]:
    if len(ins.srcs) != n_args or not all(isinstance(s, Symbol) for s in ins.srcs):
        raise oc.unsupported(ins, f"a call to {ins.callee} without its {n_args} .param arguments")
    try:
        return [oc.layout.param_off[s.name] + s.offset for s in ins.srcs]
    except KeyError as exc:
        raise oc.unsupported(ins, f"argument {exc} of {ins.callee} that is not a call-sequence .param") from None


def _loader(off: int, dtype):
    def load(st, idx):
        return st.load("param", np.full(len(idx), off, dtype=np.uint64), idx, dtype)
    return load


def read_string(st, address: int, idx: int) -> str:
    """The NUL-terminated string at a generic device address, read by thread `idx`."""
    if address == 0:
        raise MemoryFault(0, 0, "null string pointer", "generic")
    mem = st.memory
    hit = mem.allocation_of(address)
    if hit is not None:  # global memory: slice the allocation directly
        start, size, _ = hit
        raw = mem.data[address - GLOBAL_BASE: start - GLOBAL_BASE + size]
        end = np.flatnonzero(raw[:_MAX_STRING] == 0)
        if end.size == 0:
            raise MemoryFault(0, address, "unterminated string", "global")
        return bytes(raw[: int(end[0])]).decode("utf-8", "replace")
    out = bytearray()  # local or shared memory: byte by byte through the address map
    lane = np.array([idx], dtype=np.int64)
    while len(out) < _MAX_STRING:
        b = int(st.load("generic", np.array([address + len(out)], dtype=np.uint64), lane, np.uint8)[0])
        if b == 0:
            return out.decode("utf-8", "replace")
        out.append(b)
    raise MemoryFault(0, address, "unterminated string", "generic")


@semantic("call")
def build_call(ins: Instruction, oc):
    if ins.callee == "vprintf":
        return _build_vprintf(ins, oc)
    if ins.callee == "__assertfail":
        return _build_assertfail(ins, oc)
    raise oc.unsupported(ins, f"a call to '{ins.callee}', which is neither inlined nor a device system call "
                              f"({', '.join(SYSCALLS)})")


def _build_vprintf(ins: Instruction, oc):
    fmt_off, args_off = _param_offsets(ins, oc, 2)
    load_fmt, load_args = _loader(fmt_off, np.uint64), _loader(args_off, np.uint64)
    ret_off = None
    if ins.dsts:
        if not isinstance(ins.dsts[0], Symbol) or ins.dsts[0].name not in oc.layout.param_off:
            raise oc.unsupported(ins, "a vprintf return value that is not a call-sequence .param")
        ret_off = oc.layout.param_off[ins.dsts[0].name] + ins.dsts[0].offset
    formats: dict[int, list] = {}

    def run(st, idx):
        if idx.size == 0:
            return None
        fmts = load_fmt(st, idx)
        bufs = load_args(st, idx)
        counts = np.zeros(idx.size, dtype=np.int32)
        lines = [""] * idx.size
        for addr in np.unique(fmts).tolist():
            sel = np.flatnonzero(fmts == addr)
            if addr == 0:
                counts[sel] = -1
                continue
            pieces = formats.get(addr)
            if pieces is None:
                try:
                    pieces = formats[addr] = parse_format(read_string(st, addr, int(idx[sel[0]])))
                except MemoryFault as fault:
                    raise MemoryFault(int(sel[0]), fault.address, f"printf format string: {fault.reason}",
                                      fault.space) from None
            _render(st, idx, sel, bufs, pieces, lines)
            counts[sel] = min(sum(1 for p in pieces if isinstance(p, Conversion)), MAX_ARGS)
        sys.stdout.write("".join(lines))
        if ret_off is not None:
            st.store("param", np.full(idx.size, ret_off, dtype=np.uint64), idx, counts)
        return None

    return run


def _render(st, idx, sel, bufs, pieces, lines) -> None:
    """Format `pieces` for the lanes `sel` (positions in idx), reading each argument
    for all of them at once."""
    slots = layout(pieces)
    lanes = idx[sel]
    values = []
    for off, size in slots:
        addrs = bufs[sel] + np.uint64(off)
        try:
            v = st.load("generic", addrs, lanes, np.uint32 if size == 4 else np.uint64)
        except MemoryFault as fault:
            raise MemoryFault(int(sel[fault.lane]), fault.address, f"printf argument buffer: {fault.reason}",
                              fault.space) from None
        values.append(np.broadcast_to(v, lanes.shape).tolist())
    for j, pos in enumerate(sel.tolist()):
        out = []
        k = 0
        for p in pieces:
            if isinstance(p, str):
                out.append(p)
                continue
            width = prec = None
            if p.width == "*":
                width = _signed32(values[k][j])
                k += 1
            if p.prec == "*":
                prec = _signed32(values[k][j])
                k += 1
            raw = values[k][j]
            k += 1
            text = None
            if p.conv == "s" and raw != 0:
                try:
                    text = read_string(st, raw, int(idx[pos]))
                except MemoryFault as fault:
                    raise MemoryFault(pos, fault.address, f"printf %s argument: {fault.reason}", fault.space) from None
            out.append(format_value(p, raw, text, width, prec))
        lines[pos] = "".join(out)


def _signed32(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def _build_assertfail(ins: Instruction, oc):
    msg_off, file_off, line_off, func_off, _ = _param_offsets(ins, oc, 5)
    load_msg, load_file, load_func = (_loader(o, np.uint64) for o in (msg_off, file_off, func_off))
    load_line = _loader(line_off, np.uint32)

    def run(st, idx):
        if idx.size == 0:
            return None
        first = idx[:1]
        t = int(first[0])

        def text(load) -> str:
            try:
                return read_string(st, int(load(st, first)[0]), t)
            except MemoryFault:
                return "?"

        cta = ",".join(str(int(st.sreg[f"ctaid.{c}"][t])) for c in "xyz")
        tid = ",".join(str(int(st.sreg[f"tid.{c}"][t])) for c in "xyz")
        message = (f"{text(load_file)}:{int(load_line(st, first)[0])}: {text(load_func)}: block: [{cta}], "
                   f"thread: [{tid}] Assertion `{text(load_msg)}` failed.")
        sys.stderr.write(message + "\n")
        raise DeviceAssertion(0, f"device-side assertion failed: {message}")

    return run
