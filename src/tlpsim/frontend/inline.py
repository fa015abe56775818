"""Flatten a kernel by inlining every device-function call.

The functional model, the analyses and the timing model all work on the flattened
kernel, as the hardware runs ptxas's (mostly inlined) code: a call becomes the
callee's body with registers, labels and variables renamed apart, the callee's
parameters bound to the caller's call-sequence `.param` variables, and `ret`
turned into a branch to the instruction after the call. Calls of the device
runtime's `vprintf` and `__assertfail` stay calls (the functional model runs them).
"""

from __future__ import annotations

import dataclasses

from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.blocks import build_blocks
from tlpsim.frontend.ir import Address, Function, Instruction, Module, Reg, RegDecl, Symbol, Vec

# external device-runtime functions a flattened kernel keeps as calls (functional/semantics/syscalls.py)
SYSCALLS = ("vprintf", "__assertfail")


def flatten_kernel(module: Module, kernel: Function) -> Function:
    """Return `kernel` with all calls inlined (the kernel itself if it has none);
    cached on the kernel."""
    cached = kernel.analyses.get("flattened")
    if cached is not None:
        return cached
    if not any(ins.base == "call" for ins in kernel.instructions):
        kernel.analyses["flattened"] = kernel
        return kernel
    flat = Function(name=kernel.name, is_entry=kernel.is_entry, params=list(kernel.params),
                    ret_params=list(kernel.ret_params), reg_decls=list(kernel.reg_decls),
                    variables=dict(kernel.variables), branch_tables=dict(kernel.branch_tables),
                    directives=dict(kernel.directives), pragmas=list(kernel.pragmas), visible=kernel.visible,
                    line=kernel.line, reg_types=dict(kernel.reg_types))
    _Inliner(module, flat).expand(kernel, "", {}, [kernel.name])
    build_blocks(flat)
    kernel.analyses["flattened"] = flat
    flat.analyses["flattened"] = flat
    return flat


class _Inliner:
    def __init__(self, module: Module, out: Function) -> None:
        self.module = module
        self.out = out
        self.instance = 0

    def expand(self, fn: Function, suffix: str, bind: dict[str, str], stack: list[str]) -> None:
        """Append `fn`'s instructions to the output, renamed with `suffix`;
        `bind` maps fn's parameter names to the caller's argument symbols."""
        out = self.out
        labels_at: dict[int, list[str]] = {}
        for label, idx in fn.labels.items():
            labels_at.setdefault(idx, []).append(label)
        ret_label = f"$Lret{suffix}" if suffix else None
        for ins in fn.instructions:
            for label in labels_at.get(ins.index, ()):
                out.labels[label + suffix] = len(out.instructions)
            if ins.base == "call":
                self._inline_call(fn, ins, suffix, bind, stack)
                continue
            if suffix:
                ins = self._rename(ins, suffix, bind)
                if ins.base == "ret":
                    ins = dataclasses.replace(ins, opcode="bra.uni", base="bra", mods=("uni",),
                                              srcs=(Symbol(ret_label),), index=-1, block=-1)
            else:
                ins = dataclasses.replace(ins, index=-1, block=-1)
            ins.index = len(out.instructions)
            out.instructions.append(ins)
        for label in labels_at.get(len(fn.instructions), ()):
            out.labels[label + suffix] = len(out.instructions)

    def _inline_call(self, caller: Function, call: Instruction, suffix: str, bind: dict[str, str],
                     stack: list[str]) -> None:
        callee = self.module.functions.get(call.callee)
        if callee is not None and callee.is_declaration and callee.name in SYSCALLS:
            # the functional model executes these device-runtime calls itself
            kept = self._rename(call, suffix, bind) if suffix else dataclasses.replace(call, index=-1, block=-1)
            kept.index = len(self.out.instructions)
            self.out.instructions.append(kept)
            return
        if callee is None or callee.is_declaration:
            raise UnsupportedPTX(f"call to '{call.callee}', which has no body in this module (external functions "
                                 f"other than {', '.join(SYSCALLS)} are not simulated)", self.module.filename, call.line)
        if callee.name in stack:
            raise UnsupportedPTX(f"recursive call to '{callee.name}' (through {' -> '.join(stack)}) cannot be inlined",
                                 self.module.filename, call.line)
        if call.guard is not None:
            raise UnsupportedPTX("predicated calls are not supported", self.module.filename, call.line)
        self.instance += 1
        inner = f"{suffix}$c{self.instance}"
        args = [self._arg_name(op, suffix, bind, call) for op in call.srcs]
        rets = [self._arg_name(op, suffix, bind, call) for op in call.dsts]
        if len(args) != len(callee.params) or len(rets) != len(callee.ret_params):
            raise UnsupportedPTX(f"call to '{callee.name}' passes {len(args)} argument(s) and {len(rets)} return(s); "
                                 f"it declares {len(callee.params)} and {len(callee.ret_params)}",
                                 self.module.filename, call.line)
        inner_bind = {p.name: a for p, a in zip(callee.params, args)}
        inner_bind.update({p.name: r for p, r in zip(callee.ret_params, rets)})
        out = self.out
        for name, rtype in callee.reg_types.items():
            out.reg_types[name + inner] = rtype
        for decl in callee.reg_decls:
            if decl.count is None:
                out.reg_decls.append(RegDecl(decl.prefix + inner, decl.type, None, decl.vec))
            else:
                out.reg_decls.extend(RegDecl(f"{decl.prefix}{k}{inner}", decl.type, None, decl.vec)
                                     for k in range(decl.count))
        for var in callee.variables.values():
            out.variables[var.name + inner] = dataclasses.replace(var, name=var.name + inner)
        for table, targets in callee.branch_tables.items():
            out.branch_tables[table + inner] = tuple(t + inner for t in targets)
        self.expand(callee, inner, inner_bind, stack + [callee.name])
        out.labels[f"$Lret{inner}"] = len(out.instructions)  # the instruction after the call

    def _arg_name(self, op, suffix: str, bind: dict[str, str], call: Instruction) -> str:
        if not isinstance(op, Symbol):
            raise UnsupportedPTX(f"call argument {op} is not a .param variable", self.module.filename, call.line)
        return bind.get(op.name, op.name + suffix)

    def _rename(self, ins: Instruction, suffix: str, bind: dict[str, str]) -> Instruction:
        def ren(op):
            cls = op.__class__
            if cls is Reg:
                return Reg(op.name + suffix, op.neg)
            if cls is Symbol:
                return Symbol(bind.get(op.name, self._global_or(op.name, suffix)), op.offset)
            if cls is Address:
                return Address(ren(op.base) if op.base is not None else None, op.offset)
            if cls is Vec:
                return Vec(tuple(ren(e) for e in op.elems))
            return op

        return dataclasses.replace(
            ins, dsts=tuple(ren(o) for o in ins.dsts), srcs=tuple(ren(o) for o in ins.srcs),
            guard=ren(ins.guard) if ins.guard is not None else None, index=-1, block=-1)

    def _global_or(self, name: str, suffix: str) -> str:
        """Module-scope symbols (globals, constants, functions) keep their names."""
        if name in self.module.variables or name in self.module.functions:
            return name
        return name + suffix
