"""`RawModule` and `RawKernel`: CUDA source (or PTX) compiled for the simulated GPU,
with CuPy's behaviour — compiled on first use (a launch, `get_function`,
`get_global` or `compile()`) for the target of the device current at construction; `name_expressions`
resolved at construction; CuPy's exceptions (`CompileException` with the compiler's
log, `CUDADriverError` for a missing file or symbol, `TypeError`/`ValueError` for
misuse); `kern.attributes` with CUDA's keys; pickled as source and options."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from tlpsim.cuda_errors import (
    ArgumentTypeError,
    ArgumentValueError,
    CompileException,
    CUDADriverError,
    JitifyException,
    SymbolNotFound,
)
from tlpsim.errors import ArgumentError, ArgumentWarning, CompileError, KernelNotFound, TlpsimError
from tlpsim.frontend.loader import Program, load_program
from tlpsim.frontend.name_expressions import add_name_expressions, check_expressions, is_template_name, lowered_names
from tlpsim.functional.launch_args import DEFAULT_SHARED_PER_BLOCK, LaunchArgumentError, check_max_dynamic
from tlpsim.device_array import ndarray
from tlpsim.host import Device, LaunchRecord, Stream

#: files a driver would load as machine code (SASS), which tlpsim cannot execute
_BINARY_SUFFIXES = (".cubin", ".fatbin", ".hsaco", ".o")
_CUCOMPLEX_INCLUDE = re.compile(r"^\s*#\s*include\s*<\s*cuComplex\.h\s*>", re.MULTILINE)
_CUPY_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"]cupy/", re.MULTILINE)
_PTX_VERSION = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.MULTILINE)


def translate_cucomplex(code: str) -> str:
    """CuPy's `translate_cucomplex=True`: `#include <cuComplex.h>` becomes CuPy's
    bridge header, which maps cuComplex's types and functions onto `complex<T>`
    (so they match the memory of complex64/complex128 arrays)."""
    return _CUCOMPLEX_INCLUDE.sub("#include <cupy/complex.cuh>\n#include <cupy/cuComplex_bridge.h>", code)


def _jitify_warning(jitify) -> None:
    if jitify is None:
        return
    if jitify:
        warnings.warn("jitify=True is deprecated: tlpsim compiles without Jitify (the compiler finds headers "
                      "itself); a failure raises JitifyException", DeprecationWarning, stacklevel=3)
    else:
        warnings.warn("The jitify argument is deprecated. Avoid passing jitify=False (the default)",
                      DeprecationWarning, stacklevel=3)


class RawModule:
    """CUDA source (`code=`) or a `.cu`/`.ptx` file (`path=`), compiled on first use;
    kernels are fetched with get_function().

    `options` are passed to the compiler as CuPy passes them to NVRTC (`-I`, `-D`,
    `--std`, `-maxrregcount` are understood; see frontend.options). `name_expressions`
    (e.g. ["scale<float, 3>"]) instantiate template kernels and let `get_function`
    find them by that expression; they are compiled at construction, as in CuPy.
    `backend` ("nvrtc", CuPy's default, or "nvcc") is recorded; the compiler is the
    device's toolchain (docs/toolchains.md). With `enable_cooperative_groups`,
    launches are cooperative (grid.sync() works; all CTAs are executed together).
    `translate_cucomplex` maps cuComplex.h onto CuPy's complex type (needs CuPy's
    headers: `tlpsim cupy --fetch-sources`). A module pickles as its source and
    options and is recompiled (from the PTX cache) where it is unpickled."""

    def __init__(self, code: str | None = None, *, path: str | None = None, options: Sequence[str] = (),
                 backend: str = "nvrtc", translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 name_expressions=None, jitify=None, arch: str | None = None, maxrregcount: int | None = None,
                 toolchain: str | None = None) -> None:
        if code is None and path is None:
            raise ArgumentTypeError("RawModule needs code= (CUDA source or PTX text) or path= (a .cu or .ptx file)")
        if code is not None and path is not None:
            raise ArgumentTypeError("RawModule takes code= or path=, not both")
        if code is not None:
            _check_code(code, "RawModule")
        if backend not in ("nvcc", "nvrtc"):
            raise ArgumentValueError(f"RawModule backend must be 'nvrtc' or 'nvcc', not {backend!r}")
        if name_expressions is not None and backend == "nvcc":
            raise ArgumentValueError("name_expressions is only supported with backend='nvrtc' (as in CuPy)")
        _jitify_warning(jitify)
        options = (options,) if isinstance(options, str) else tuple(options)
        self._spec = dict(code=code, path=path, options=options, backend=backend,
                          translate_cucomplex=translate_cucomplex, enable_cooperative_groups=enable_cooperative_groups,
                          name_expressions=tuple(name_expressions) if name_expressions is not None else None,
                          jitify=jitify, arch=arch, maxrregcount=maxrregcount, toolchain=toolchain)
        self.code, self.path, self.options, self.backend = code, path, options, backend
        self.translate_cucomplex = bool(translate_cucomplex)
        self.enable_cooperative_groups = self.cooperative = bool(enable_cooperative_groups)
        self.name_expressions = self._spec["name_expressions"]
        self.jitify = bool(jitify)
        self._exprs = check_expressions(name_expressions)
        if path is not None:
            _check_module_file(path)
        self._programs: dict[tuple, Program] = {}
        self._lowered: dict[str, str] = {}
        self._log = ""
        # the target is that of the device current at construction (tlpsim's rule: a module
        # made under one preset runs that preset's PTX wherever it is launched)
        self._key = self._compile_key()
        if self._exprs:
            self.program  # noqa: B018 - name expressions are resolved at construction, as in CuPy

    # ------------------------------------------------------------ compiling

    def _compile_key(self) -> tuple:
        dev = Device.current()
        s = self._spec
        return (s["arch"] or dev.arch, s["maxrregcount"] or dev.maxrregcount, s["toolchain"] or dev.toolchain)

    @property
    def program(self) -> Program:
        """The compiled module (compiled on first use, for the device current at construction)."""
        key = self._key
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = self._build(*key)
        return prog

    def _source(self) -> str:
        if self.path is not None:
            return _read_source(self.path)
        return self.code if not self.translate_cucomplex else translate_cucomplex(self.code)

    def _build(self, arch: str, maxrregcount: int | None, toolchain: str) -> Program:
        from tlpsim.cupy_sources import cupy_include_options

        options = self.options
        kw = dict(arch=arch, maxrregcount=maxrregcount, toolchain=toolchain)
        try:
            if self.path is not None and not self._exprs and not self.translate_cucomplex:
                text = _read_source(self.path)
                options = options + cupy_include_options(text, toolchain)
                prog = load_program(Path(self.path), options=options, **kw)
            else:
                text = self._source()
                options = options + cupy_include_options(text, toolchain)
                if self._exprs:
                    text = add_name_expressions(text, self._exprs)
                    if self.path is not None:
                        kw.update(include_dirs=[str(Path(self.path).resolve().parent)], name=str(self.path))
                prog = load_program(text, options=options, **kw)
        except CompileError as exc:
            cls = JitifyException if self.jitify else CompileException
            raise cls(str(exc) + _compile_hint(exc), self.code or "", str(self.path or "<string>"),
                      self.options, self.backend) from None
        self._lowered = lowered_names(prog.module, self._exprs) if self._exprs else {}
        cr = prog.compile_result
        self._log = cr.nvcc_output if cr is not None else ""
        return prog

    def compile(self, log_stream=None) -> None:
        """Compile now (for the current device); the compiler's log (warnings) goes to `log_stream`."""
        self.program  # noqa: B018
        if log_stream is not None and self._log:
            log_stream.write(self._log if self._log.endswith("\n") else self._log + "\n")

    # ------------------------------------------------------------ contents

    def get_lowered_name(self, name_expression: str) -> str:
        """The mangled name of a kernel given in `name_expressions`."""
        try:
            return self._lowered[name_expression]
        except KeyError:
            raise KernelNotFound(f"{name_expression!r} was not given in name_expressions "
                                 f"(given: {', '.join(map(repr, self._lowered)) or 'none'})") from None

    def _function(self, name: str):
        prog = self.program
        mangled = self._lowered.get(name, name)
        try:
            return prog.kernel(mangled)
        except KernelNotFound as exc:
            if is_template_name(name) and name not in self._lowered:
                detail = (f"{name!r} is a template instance: pass it in name_expressions to instantiate it "
                          f"(given: {', '.join(map(repr, self._lowered)) or 'none'})")
            else:
                detail = str(exc)
            raise SymbolNotFound(detail) from None

    def get_function(self, name: str) -> "RawKernel":
        """The kernel `name` (plain, qualified, mangled or a name expression); compiles the module
        if it was not yet; a missing kernel is CUDA_ERROR_NOT_FOUND, as in CuPy."""
        self._function(name)
        return RawKernel(None, name, _module=self)

    def get_global(self, name: str) -> ndarray:
        """A `.global`/`__constant__` variable as a uint8 array over its memory (CuPy returns a
        MemoryPointer: `.data` of this array is one, and `ndarray(shape, dtype, memptr)` takes either)."""
        module = self.program.module
        if name not in module.variables:
            raise SymbolNotFound(f"module has no global variable {name!r}")
        var = module.variables[name]
        addr = Device.current().module_globals(module)[name]
        return ndarray((var.size,), np.uint8, _ptr=addr)

    def pointer_types(self, name: str) -> list[tuple[str, np.dtype | None]]:
        """(declaration, element type or None) of each parameter of kernel `name`, from
        the CUDA source; [] for PTX or a kernel the source does not define once."""
        from tlpsim.frontend.loader import _is_ptx_text
        from tlpsim.frontend.signatures import kernel_parameters, pointee_dtype

        code, path = self.code, self.path
        if path is not None and str(path).endswith(".ptx"):
            return []
        text = code if code is not None else _read_source(path)
        if _is_ptx_text(text):
            return []
        decls = kernel_parameters(text, name.split("<")[0].rsplit("::", 1)[-1].strip())
        return [(d, pointee_dtype(d)) for d in decls or []]

    def __reduce__(self):
        return (_module_from_spec, (self._spec,))


_REINTERPRET_WARNED: set[tuple[str, int, str]] = set()  # (kernel, parameter, dtype) already warned about


def _check_code(code, who: str) -> None:
    """`code` is source text; PTX (which CuPy also takes) must say so with `.version`,
    or nvcc would compile it as CUDA C++ and report C++ errors about PTX."""
    if not isinstance(code, str):
        raise ArgumentError(f"{who}: code must be CUDA C++ or PTX source text (a str), got {type(code).__name__}"
                            + (f" {code!r}" if isinstance(code, (int, float)) else ""))
    head = "\n".join(ln for ln in code.lstrip().splitlines()[:40] if not ln.lstrip().startswith("//"))
    looks_ptx = any(d in head for d in (".target", ".address_size", ".visible .entry", ".entry "))
    if looks_ptx and ".version" not in head:
        raise ArgumentError(f"{who}: code looks like PTX (it has {'.target' if '.target' in head else '.entry'}) "
                            "but no .version directive, so it would be compiled as CUDA C++; start it with "
                            "`.version X.Y` (e.g. .version 8.0) and `.target sm_XX`")


def _module_from_spec(spec: dict) -> RawModule:
    spec = dict(spec)
    if spec.get("jitify") is not None:
        spec["jitify"] = None  # warned where it was made
    return RawModule(**spec)


def _check_module_file(path) -> None:
    from tlpsim.source_files import check_source_file

    p = Path(path).expanduser()
    if not p.exists():
        raise CUDADriverError("CUDA_ERROR_FILE_NOT_FOUND", f"RawModule(path={str(path)!r}): no such file")
    if p.suffix in _BINARY_SUFFIXES:
        raise CUDADriverError("CUDA_ERROR_NO_BINARY_FOR_GPU", f"{p} is {p.suffix} machine code (SASS), which tlpsim "
                              "cannot execute: it simulates PTX; compile with `nvcc -ptx` and load the .ptx file, "
                              "or pass the CUDA source as code=")
    check_source_file(p)


def _read_source(path) -> str:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError as exc:
        raise TlpsimError(f"cannot read CUDA source file {str(path)!r}: {exc.strerror or exc}") from None


def _compile_hint(exc: CompileError) -> str:
    """What tlpsim knows about a failure's cause: CuPy's headers not fetched; a device-side launch."""
    from tlpsim.cupy_sources import include_dir

    text = str(exc)
    if "GetParameterBuffer" in text or "cudaLaunchDevice" in text:
        return ("\na kernel that launches kernels (dynamic parallelism) needs CUDA's device runtime, which tlpsim "
                "does not simulate: launch the inner kernel from the host instead")
    if "cupy/" in text and ("cannot open source file" in text or "No such file" in text) and include_dir() is None:
        return ("\nCuPy's headers (cupy/complex.cuh, cupy/carray.cuh, ...) come from the pinned CuPy source "
                "package: run `tlpsim cupy --fetch-sources` once (downloads it from PyPI)")
    return ""


class RawKernel:
    """A kernel callable as `kernel(grid, block, args, shared_mem=0, stream=None)`.
    A name with template arguments ("scale<float, 3>") is looked up as a name
    expression. Compiled on first use; pickles as its module's source and its name."""

    def __init__(self, code: str | None, name: str, options: Sequence[str] = (), backend: str = "nvrtc", *,
                 translate_cucomplex: bool = False, enable_cooperative_groups: bool = False, jitify=None,
                 arch: str | None = None, maxrregcount: int | None = None, _module: RawModule | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ArgumentTypeError(f"RawKernel name must be a non-empty str (the kernel's name), not {name!r}")
        if _module is None:
            if code is None:
                raise ArgumentTypeError("RawKernel needs the CUDA source (code) of kernel " + repr(name))
            _check_code(code, "RawKernel")
            _module = RawModule(code, options=options, backend=backend, translate_cucomplex=translate_cucomplex,
                                enable_cooperative_groups=enable_cooperative_groups,
                                name_expressions=[name] if is_template_name(name) else None, jitify=jitify,
                                arch=arch, maxrregcount=maxrregcount)
        self.name = name
        self._module = _module
        self._max_dynamic: int | None = None
        self._carveout = -1
        self._pointers: list[tuple[str, np.dtype | None]] | None = None  # from the source, on first launch

    code = property(lambda self: self._module.code)
    options = property(lambda self: self._module.options)
    backend = property(lambda self: self._module.backend)
    enable_cooperative_groups = property(lambda self: self._module.enable_cooperative_groups)
    translate_cucomplex = property(lambda self: self._module.translate_cucomplex)

    @property
    def program(self) -> Program:
        return self._module.program

    @property
    def kernel(self):
        """The kernel's parsed PTX function (compiles the module on first use)."""
        return self._module._function(self.name)

    def compile(self, log_stream=None) -> None:
        """Compile now; the compiler's log (warnings) goes to `log_stream`, as in CuPy."""
        self._module.compile(log_stream)
        self.kernel  # noqa: B018 - a missing kernel fails here

    # ------------------------------------------------------------ attributes (cuFuncGetAttribute)

    @property
    def attributes(self) -> dict:
        """The kernel's attributes under CUDA's names (CuPy's keys): ptxas's register, shared,
        local and constant counts for the device's target, and the launch limits they imply."""
        fn = self.kernel
        res = self.program.resources.get(fn.name)
        arch = (self.program.compile_result.arch if self.program.compile_result else self.program.module.arch) or ""
        m = _PTX_VERSION.search(self.program.module.version and f".version {self.program.module.version}" or "")
        return {
            "max_threads_per_block": self.max_threads_per_block,
            "shared_size_bytes": res.shared_bytes if res else 0,
            "const_size_bytes": res.const_bytes if res else 0,
            "local_size_bytes": res.local_bytes if res else 0,
            "num_regs": res.registers if res else 0,
            "ptx_version": int(m.group(1)) * 10 + int(m.group(2)) if m else 0,
            "binary_version": int(arch[3:].rstrip("af")) if arch.startswith("sm_") else 0,
            "cache_mode_ca": 0,
            "max_dynamic_shared_size_bytes": self.max_dynamic_shared_size_bytes,
            "preferred_shared_memory_carveout": self._carveout,
        }

    num_regs = property(lambda self: self.attributes["num_regs"])
    shared_size_bytes = property(lambda self: self.attributes["shared_size_bytes"])
    const_size_bytes = property(lambda self: self.attributes["const_size_bytes"])
    local_size_bytes = property(lambda self: self.attributes["local_size_bytes"])
    ptx_version = property(lambda self: self.attributes["ptx_version"])
    binary_version = property(lambda self: self.attributes["binary_version"])
    cache_mode_ca = property(lambda self: 0)

    @property
    def max_threads_per_block(self) -> int:
        """1024, or fewer when the kernel's registers exceed the per-block register file
        (64K registers, allocated per warp in units of 256, as CUDA's occupancy calculator)."""
        res = self.program.resources.get(self.kernel.name)
        regs = res.registers if res else 0
        if regs <= 0:
            return 1024
        per_warp = -(-regs * 32 // 256) * 256
        return max(32, min(1024, (65536 // per_warp) * 32))

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        """Dynamic shared memory a launch may use (CUDA's 48 KiB default until raised, as in CuPy)."""
        return self._max_dynamic if self._max_dynamic is not None else DEFAULT_SHARED_PER_BLOCK

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        self._max_dynamic = check_max_dynamic(value, Device.current().arch)

    @property
    def preferred_shared_memory_carveout(self) -> int:
        """A hint (-1: no preference; else percent of the largest carveout): on a preset with a
        unified L1/shared array (l1d.shared_carveouts_kb) it picks this kernel's carveout, and so
        its L1, overriding l1d.carveout_preference (timing/carveout.py); elsewhere nothing."""
        return self._carveout

    @preferred_shared_memory_carveout.setter
    def preferred_shared_memory_carveout(self, value: int) -> None:
        v = int(value)
        if not (v == -1 or 0 <= v <= 100):
            raise ArgumentValueError(f"preferred_shared_memory_carveout must be -1 or a percentage 0..100, not {value}")
        self._carveout = v

    # ------------------------------------------------------------ launching

    def __call__(self, grid, block, args, *, shared_mem: int = 0, stream: "Stream | None" = None,
                 enable_cooperative_groups: bool | None = None, resources: dict | None = None) -> LaunchRecord:
        """Launch. `resources` (tlpsim extension) overrides ptxas's counts for the timing
        model, e.g. {'registers': 32, 'shared_bytes': 1296} to match another toolchain."""
        if not isinstance(args, (tuple, list)):
            raise LaunchArgumentError(f"kernel {self.name}: arguments must be a tuple, got {type(args).__name__}")
        if stream is not None and not isinstance(stream, Stream):
            raise LaunchArgumentError(f"kernel {self.name}: stream must be a tlpsim.Stream (cupy.cuda.Stream) or "
                                      f"None, got {type(stream).__name__} {stream!r}")
        fn = self.kernel
        stream = stream or Stream._current()
        self._warn_reinterpreted(args)
        coop = self._module.cooperative if enable_cooperative_groups is None else bool(enable_cooperative_groups)
        return Device.current().launch(self.program, fn.name, grid, block, args, shared_mem, stream, resources,
                                       max_dynamic_shared=self._max_dynamic, cooperative=coop,
                                       carveout=self._carveout)

    def __reduce__(self):
        return (_kernel_from_module, (self._module, self.name, self._max_dynamic))


    def _warn_reinterpreted(self, args) -> None:
        """An array for a `float*` holding float64 (or ints, ...) is passed as is, as on a
        GPU and in CuPy, but almost never meant: say so once per parameter and type."""
        if self._pointers is None:
            self._pointers = self._module.pointer_types(self.name)
        if len(self._pointers) != len(args):
            return
        for k, ((decl, want), a) in enumerate(zip(self._pointers, args)):
            if want is None or not isinstance(a, ndarray) or a.dtype == want:
                continue
            have = a.dtype
            if have.itemsize == want.itemsize and (have.kind in "fc") == (want.kind in "fc"):
                continue  # int32 for unsigned*, uint8 for bool*: the same bytes, on purpose
            key = (self.kernel.name, k, have.str)
            if key in _REINTERPRET_WARNED:
                continue
            _REINTERPRET_WARNED.add(key)
            warnings.warn(f"kernel {self.name}: argument {k} (parameter '{decl}') is a {have} array; the kernel reads "
                          f"its bytes as {want} ({want.itemsize} bytes each), as CuPy does; pass "
                          f"a.astype(numpy.{want.name}) if that is not what you meant", ArgumentWarning, stacklevel=3)

def _kernel_from_module(module: RawModule, name: str, max_dynamic: int | None) -> RawKernel:
    k = RawKernel(None, name, _module=module)
    k._max_dynamic = max_dynamic
    return k


__all__ = ["RawKernel", "RawModule", "translate_cucomplex"]
