"""One entry point from user input to a parsed program: a `.cu` file, a `.ptx` file,
or CUDA/PTX source text becomes a `Program` (parsed module + ptxas resources)."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from tlpsim.errors import KernelNotFound, TlpsimError
from tlpsim.frontend.ir import Function, Module
from tlpsim.frontend.nvcc import (
    CompileResult,
    compile_cuda_file,
    compile_cuda_source,
    ptx_resources_for_file,
    ptx_text_resources,
)
from tlpsim.frontend.ptx_parser import parse_ptx
from tlpsim.frontend.resources import ResourceUsage, ptxas_resources
from tlpsim.frontend.toolchains import DEFAULT_TOOLCHAIN


@dataclass
class Program:
    """A parsed PTX module with the resource usage ptxas reported for its functions."""

    module: Module
    resources: dict[str, ResourceUsage] = field(default_factory=dict)
    compile_result: CompileResult | None = None

    @property
    def kernels(self) -> dict[str, Function]:
        return self.module.kernels

    def kernel(self, name: str) -> Function:
        return self.module.get_kernel(name)

    def kernel_resources(self, name: str) -> ResourceUsage | None:
        return self.resources.get(self.kernel(name).name)

    def compile_record(self) -> dict:
        """How the PTX was made, for launch records: the toolchain, its arch, register
        cap and flags, or the PTX's own target when PTX was given."""
        cr = self.compile_result
        if cr is None:
            return {"arch": self.module.arch, "maxrregcount": None, "nvcc": None}
        return {"arch": cr.arch, "maxrregcount": cr.maxrregcount, "nvcc": cr.flags, "toolchain": cr.toolchain}


def _is_ptx_text(text: str) -> bool:
    head = "\n".join(line for line in text.lstrip().splitlines()[:40] if not line.lstrip().startswith("//"))
    return ".version" in head and ".target" in head


def load_program(
    source: str | os.PathLike[str],
    *,
    arch: str = "sm_80",
    maxrregcount: int | None = None,
    options: Sequence[str] = (),
    resources: bool = True,
    include_dirs: Sequence[str] = (),
    defines: dict | None = None,
    std: str | None = None,
    name: str | None = None,
    toolchain: str = DEFAULT_TOOLCHAIN,
) -> Program:
    """Compile (if CUDA) and parse `source`: a path to a `.cu`/`.ptx` file, or text.

    `options` are nvcc's (or NVRTC's) spellings; `-I`, `-D`, `--std` and
    `-maxrregcount` among them are tracked like the keywords (frontend.options).
    `name` names source text in messages; `toolchain` compiles CUDA with "cuda13"
    (nvcc 13.5) or "cuda11" (NVRTC 11.8; frontend.toolchains). PTX input gets its
    resources from ptxas for its own target when a bundled ptxas supports it (13.5:
    sm_75+, 11.8: sm_35 ... sm_72); otherwise `resources` is empty and callers may
    supply overrides."""
    from tlpsim.frontend.options import split_options

    co = split_options(options, include_dirs=include_dirs, defines=defines, std=std, maxrregcount=maxrregcount)
    maxrregcount, cc = co.maxrregcount, dict(options=co.rest, include_dirs=co.include_dirs, defines=co.defines,
                                             std=co.std, toolchain=toolchain)
    path: Path | None = None
    if isinstance(source, os.PathLike):
        path = Path(source)
    elif "\n" not in source and len(source) < 4096 and source.strip().endswith((".cu", ".ptx", ".cuh")):
        path = Path(source.strip())
    if path is not None:
        from tlpsim.source_files import check_source_file

        check_source_file(path)  # missing, binary or (PTX) non-UTF-8: an error naming the file
        if path.suffix == ".ptx":
            module = parse_ptx(path.read_text(), str(path))
            res: dict[str, ResourceUsage] = {}
            if resources:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = ptx_resources_for_file(path, maxrregcount=maxrregcount)
            return Program(module, res)
        result = compile_cuda_file(path, arch=arch, maxrregcount=maxrregcount, **cc)
        return Program(parse_ptx(result.ptx, str(path) + ".ptx"), result.resources, result)
    text = str(source)
    if _is_ptx_text(text):
        module = parse_ptx(text, "<ptx>")
        res: dict[str, ResourceUsage] = {}
        if resources and _ptxas_can(module):
            res = ptxas_resources(text, module.arch, maxrregcount)
        elif resources and module.arch:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a target no bundled ptxas knows: no resources, as documented
                res = ptx_text_resources(text, "<ptx>", maxrregcount=maxrregcount)
        return Program(module, res)
    result = compile_cuda_source(text, arch=arch, maxrregcount=maxrregcount, **cc,
                                 **({"name": name} if name else {}))
    return Program(parse_ptx(result.ptx, f"{name}.ptx" if name else "<cuda>.ptx"), result.resources, result)


def _ptxas_can(module: Module) -> bool:
    arch = module.arch or ""
    try:
        return int(arch[3:].rstrip("af")) >= 75
    except ValueError:
        return False


__all__ = ["Program", "load_program", "KernelNotFound"]
