"""Where each variable of a kernel lives: device addresses of module globals and
constants, offsets of shared variables in the CTA's window, of local variables in
the thread's frame, of call-sequence `.param`s in the thread's parameter frame,
and of kernel parameters in the parameter buffer."""

from __future__ import annotations

from dataclasses import dataclass, field

from tlpsim.frontend.ir import Function, Module


@dataclass
class Layout:
    global_addr: dict[str, int] = field(default_factory=dict)   # module .global/.const -> device address
    shared_off: dict[str, int] = field(default_factory=dict)    # .shared -> offset in the CTA window
    shared_static_bytes: int = 0                               # dynamic (extern) shared starts here
    local_off: dict[str, int] = field(default_factory=dict)
    local_bytes: int = 0
    param_off: dict[str, int] = field(default_factory=dict)     # function-scope .param (call sequences)
    param_frame_bytes: int = 0
    kparam_off: dict[str, int] = field(default_factory=dict)    # kernel parameters
    kparam_bytes: int = 0

    def space_of(self, name: str) -> str | None:
        """The state space a symbol names ('kparam' for kernel parameters)."""
        if name in self.kparam_off:
            return "kparam"
        if name in self.param_off:
            return "param"
        if name in self.shared_off:
            return "shared"
        if name in self.local_off:
            return "local"
        if name in self.global_addr:
            return "global"
        return None

    def address_of(self, name: str) -> int:
        for table in (self.kparam_off, self.param_off, self.shared_off, self.local_off, self.global_addr):
            if name in table:
                return table[name]
        raise KeyError(name)


def _place(offset: int, size: int, align: int) -> tuple[int, int]:
    start = -(-offset // max(align, 1)) * max(align, 1)
    return start, start + size


def build_layout(module: Module, kernel: Function, global_addr: dict[str, int]) -> Layout:
    """Lay out `kernel`'s variables; `global_addr` holds the module variables' device addresses."""
    lay = Layout(global_addr=dict(global_addr))
    end = 0
    for p in kernel.params:
        start, end = _place(end, p.size, p.align)
        lay.kparam_off[p.name] = start
    lay.kparam_bytes = end
    shared = [v for v in list(module.variables.values()) + list(kernel.variables.values()) if v.space == "shared"]
    end = 0
    for v in shared:
        if not v.extern:
            start, end = _place(end, v.size, v.align)
            lay.shared_off[v.name] = start
    dyn_align = max([v.align for v in shared if v.extern] + [16])
    lay.shared_static_bytes = -(-end // dyn_align) * dyn_align if any(v.extern for v in shared) else end
    for v in shared:
        if v.extern:  # every extern shared array aliases the dynamic area
            lay.shared_off[v.name] = lay.shared_static_bytes
    end = 0
    for v in kernel.variables.values():
        if v.space == "local":
            start, end = _place(end, v.size, v.align)
            lay.local_off[v.name] = start
    lay.local_bytes = end
    end = 0
    for v in kernel.variables.values():
        if v.space == "param":
            start, end = _place(end, v.size, v.align)
            lay.param_off[v.name] = start
    # callee parameters of inlined calls are also frame slots (see frontend.inline)
    lay.param_frame_bytes = end
    return lay
