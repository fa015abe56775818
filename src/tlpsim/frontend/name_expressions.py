"""Name expressions, as NVRTC's (and CuPy's `RawModule(name_expressions=...)`):
`"scale<float, 3>"` names a template kernel instantiation, and its lowered
(mangled) name is what the PTX calls it.

nvcc has no name-expression API, so the same effect is had in the source: for each
expression a `__device__` pointer is initialised with the kernel's address, which
makes nvcc instantiate the template and write the mangled name into the pointer's
PTX initialiser, where it is read back exactly (no demangling guesswork)."""

from __future__ import annotations

from collections.abc import Sequence

from tlpsim.errors import KernelNotFound, TlpsimError

PREFIX = "__tlpsim_name_expr_"


def check_expressions(exprs) -> tuple[str, ...]:
    if isinstance(exprs, str):
        exprs = (exprs,)
    out = tuple(exprs or ())
    for e in out:
        if not isinstance(e, str) or not e.strip() or any(c in e for c in ";{}\n"):
            raise TlpsimError(f"name expression {e!r} is not a kernel name (e.g. 'my_kernel<float, 4>')")
    return out


def add_name_expressions(code: str, exprs: Sequence[str]) -> str:
    """`code` with one instantiating pointer per expression appended."""
    lines = [code, "", "// tlpsim: name expressions (instantiate and name these kernels)"]
    lines += [f"__device__ void* {PREFIX}{k} = (void*)&{e};" for k, e in enumerate(exprs)]
    return "\n".join(lines) + "\n"


def lowered_names(module, exprs: Sequence[str]) -> dict[str, str]:
    """{expression: mangled kernel name} read from the pointers' initialisers."""
    out = {}
    for k, e in enumerate(exprs):
        var = module.variables.get(f"{PREFIX}{k}")
        if var is None or not var.relocs:
            raise KernelNotFound(f"name expression {e!r} did not name a kernel of the module")
        out[e] = var.relocs[0][1]
    return out


def is_template_name(name: str) -> bool:
    """A kernel name with template arguments (looked up as a name expression)."""
    return "<" in name and name.rstrip().endswith(">")


__all__ = ["add_name_expressions", "check_expressions", "is_template_name", "lowered_names"]
