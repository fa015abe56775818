"""The `cuda11` toolchain: NVRTC 11.8 (through ctypes) and ptxas 11.8 from NVIDIA's
CUDA 11 wheels, without a system CUDA::

    nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2, libnvrtc-builtins.so.11.8   (nvidia-cuda-nvrtc-cu11)
    nvidia/cuda_nvcc/bin/ptxas                                          (nvidia-cuda-nvcc-cu11)
    nvidia/cuda_runtime/include/cooperative_groups.h, cuda_fp16.h, ...  (nvidia-cuda-runtime-cu11)

NVRTC has the CUDA built-ins but not CUDA's headers; the runtime wheel's include
folder is passed with -I after the user's, as CuPy passes its CUDA include path.

NVRTC compiles device code only: a source with ``main``, host headers such as
``<cstdio>`` or ``<<<>>>`` launches is a whole program and stays with the CUDA 13.5
toolchain (``tlpsim exec``). NVRTC does not resolve ``#include "x.h"`` against the
including file's folder by itself, so that folder is passed as the first ``-I``.

Errors are :class:`CompileError`: a missing wheel names it and the pip command; a
compile error quotes NVRTC's log, whose lines read ``file.cu(LINE): error: ...``,
rewritten as ``file.cu:LINE: error: ...``.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tlpsim.errors import CompileError

from .ptx_cache import CACHE_FORMAT_VERSION, CompileResult, cache_dir, included_files, load_cache, sha256, store_cache
from .resources import parse_ptxas_module, parse_ptxas_verbose, run_ptxas_verbose
from .toolkit import nvidia_package_dirs

__all__ = ["CUDA11_WHEELS", "Cuda11Toolkit", "compile_cuda11", "find_cuda11", "nvrtc_compile", "nvrtc_options",
           "with_register_cap"]

#: pip package -> pinned version (pyproject.toml, requirements.lock)
CUDA11_WHEELS: dict[str, str] = {"nvidia-cuda-nvrtc-cu11": "11.8.89", "nvidia-cuda-nvcc-cu11": "11.8.89",
                                  "nvidia-cuda-runtime-cu11": "11.8.89"}

_NVRTC_LIB = "cuda_nvrtc/lib/libnvrtc.so.11.2"
_BUILTINS_LIB = "cuda_nvrtc/lib/libnvrtc-builtins.so.11.8"
_PTXAS = "cuda_nvcc/bin/ptxas"
_HEADERS = "cuda_runtime/include/cooperative_groups.h"
_STANDARDS = ("c++03", "c++11", "c++14", "c++17")
_LOG_LINE = re.compile(r"^(.*?)\((\d+)\): ", re.MULTILINE)
_WHOLE_PROGRAM = re.compile(r"\bint\s+main\s*\(|^\s*#\s*include\s*<(?:c?std|iostream|vector|string)", re.MULTILINE)


@dataclass(frozen=True)
class Cuda11Toolkit:
    """The located CUDA 11.8 wheels (paths only)."""

    nvrtc: Path
    builtins: Path
    ptxas: Path
    include_dir: Path

    def version(self) -> str:
        """``"nvrtc 11.8 / ptxas 11.8.89"``: what the PTX cache key records."""
        return f"nvrtc {'.'.join(map(str, _nvrtc_version(str(self.nvrtc), str(self.builtins))))} / ptxas " \
               f"{_ptxas_version(str(self.ptxas))}"


def _install_hint(packages: list[str]) -> str:
    pins = " ".join(f"{p}=={CUDA11_WHEELS[p]}" for p in packages)
    return f"install it with `make setup` (requirements.lock) or `pip install {pins}`"


def find_cuda11() -> Cuda11Toolkit:
    """The CUDA 11.8 wheels, or a CompileError naming the missing wheel."""
    dirs = nvidia_package_dirs()
    found: dict[str, Path] = {}
    for rel in (_NVRTC_LIB, _BUILTINS_LIB, _PTXAS, _HEADERS):
        hit = next((d / rel for d in dirs if (d / rel).is_file()), None)
        if hit is not None:
            found[rel] = hit
    missing = [pkg for rel, pkg in ((_NVRTC_LIB, "nvidia-cuda-nvrtc-cu11"), (_BUILTINS_LIB, "nvidia-cuda-nvrtc-cu11"),
                                    (_PTXAS, "nvidia-cuda-nvcc-cu11"), (_HEADERS, "nvidia-cuda-runtime-cu11"))
               if rel not in found]
    if missing:
        missing = list(dict.fromkeys(missing))
        raise CompileError(f"the cuda11 toolchain needs the wheel{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(missing)}, which {'are' if len(missing) > 1 else 'is'} not installed: "
                           f"{_install_hint(missing)}; or compile with gpu.toolchain = 'cuda13'")
    if not os.access(found[_PTXAS], os.X_OK):
        raise CompileError(f"the cuda11 toolchain's ptxas {found[_PTXAS]} is not executable "
                           f"(try: chmod +x {found[_PTXAS]})")
    return Cuda11Toolkit(found[_NVRTC_LIB], found[_BUILTINS_LIB], found[_PTXAS], found[_HEADERS].parent)


@functools.lru_cache(maxsize=2)
def _library(nvrtc: str, builtins: str) -> ctypes.CDLL:
    # libnvrtc dlopens its builtins by soname; loading them first from the wheel's
    # folder makes that work without LD_LIBRARY_PATH
    try:
        ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(nvrtc)
    except OSError as exc:
        raise CompileError(f"cannot load NVRTC 11.8 from {nvrtc}: {exc}; reinstall nvidia-cuda-nvrtc-cu11 "
                           f"({_install_hint(['nvidia-cuda-nvrtc-cu11'])})") from None
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    lib.nvrtcCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    for fn in ("nvrtcGetPTXSize", "nvrtcGetProgramLogSize"):
        getattr(lib, fn).argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    for fn in ("nvrtcGetPTX", "nvrtcGetProgramLog"):
        getattr(lib, fn).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return lib


@functools.lru_cache(maxsize=2)
def _nvrtc_version(nvrtc: str, builtins: str) -> tuple[int, int]:
    lib = _library(nvrtc, builtins)
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


@functools.lru_cache(maxsize=2)
def _ptxas_version(ptxas: str) -> str:
    try:
        out = subprocess.run([ptxas, "--version"], check=False, capture_output=True, text=True, timeout=60).stdout
    except OSError as exc:
        raise CompileError(f"cannot run the cuda11 toolchain's ptxas {ptxas}: {exc}") from None
    m = re.search(r"\bV(\d+(?:\.\d+)+)", out)
    if m is None:
        raise CompileError(f"`{ptxas} --version` printed no version: {out.strip()!r}")
    return m.group(1)


def nvrtc_options(arch: str, *, std: str | None, include_dirs: Sequence[str], defines: Mapping[str, str | None],
                  maxrregcount: int | None, options: Sequence[str]) -> list[str]:
    """NVRTC's options for a compute_XX compilation (``arch`` is sm_XX)."""
    std = std or "c++17"
    if std not in _STANDARDS:
        raise CompileError(f"--std={std}: NVRTC 11.8 (toolchain cuda11) knows {', '.join(_STANDARDS)}")
    opts = [f"--gpu-architecture=compute_{arch[3:]}", f"--std={std}"]
    if maxrregcount is not None:
        opts.append(f"--maxrregcount={maxrregcount}")
    opts += [f"-I{d}" for d in include_dirs]
    opts += [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in defines.items()]
    return opts + list(options)


def _readable_log(log: str) -> str:
    """NVRTC's ``file.cu(12): error`` as ``file.cu:12: error`` (the form editors jump to)."""
    return _LOG_LINE.sub(lambda m: f"{m.group(1)}:{m.group(2)}: ", log)


@functools.lru_cache(maxsize=1)
def _libc_uselocale():
    libc = ctypes.CDLL(None)
    fn = libc.uselocale
    fn.restype, fn.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
    return fn


def nvrtc_compile(text: str, source_name: str, options: Sequence[str], tk: Cuda11Toolkit | None = None
                  ) -> tuple[str, str]:
    """(PTX, NVRTC's log) of CUDA source `text`; a CompileError quoting the log on failure.
    `source_name` is the name NVRTC's messages give the file."""
    # NVRTC 11.8 leaves the calling thread on the "C" locale (uselocale), which turns
    # Python's default text encoding into ASCII for the rest of the process: restore it
    uselocale = _libc_uselocale()
    thread_locale = uselocale(None)   # (locale_t)0: query without changing
    try:
        return _nvrtc_compile(text, source_name, options, tk)
    finally:
        uselocale(thread_locale)


def _nvrtc_compile(text: str, source_name: str, options: Sequence[str], tk: Cuda11Toolkit | None
                   ) -> tuple[str, str]:
    tk = tk or find_cuda11()
    lib = _library(str(tk.nvrtc), str(tk.builtins))
    prog = ctypes.c_void_p()
    status = lib.nvrtcCreateProgram(ctypes.byref(prog), text.encode("utf-8", "surrogateescape"),
                                    source_name.encode(), 0, None, None)
    if status:
        raise CompileError(f"NVRTC 11.8 cannot create a program for {source_name}: "
                           f"{lib.nvrtcGetErrorString(status).decode()}")
    try:
        encoded = [o.encode() for o in options]
        status = lib.nvrtcCompileProgram(prog, len(encoded), (ctypes.c_char_p * len(encoded))(*encoded))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode("utf-8", "replace").strip()
        if status:
            reason = lib.nvrtcGetErrorString(status).decode()
            first = next((ln for ln in log.splitlines() if "error" in ln), "")
            where = f": {_readable_log(first).strip()}" if first else ""
            if _WHOLE_PROGRAM.search(text):
                where += ("; NVRTC compiles device code only, and this looks like a whole program (main, host "
                          "headers): run it with `tlpsim exec` (CUDA 13.5) or compile it with toolchain cuda13")
            raise CompileError(f"NVRTC 11.8 (toolchain cuda11) failed to compile {source_name} ({reason}){where}",
                               ["nvrtc", *options, source_name], _readable_log(log))
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        return buf.value.decode("utf-8", "replace"), _readable_log(log)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


_ENTRY_RE = re.compile(r"\.entry\s+[\w$]+\s*\(")


def with_register_cap(ptx: str, maxrregcount: int | None) -> str:
    """The PTX ptxas 11.8 assembles for resources: every entry without `.maxnreg`
    gets `.maxnreg N`. ptxas 11.8 ignores -maxrregcount for kernels with
    `__launch_bounds__` (`.maxntid`), which CUDA documents; ptxas 13.5 applies the
    cap to them too, and the Fermi presets' cap of 63 is a hardware limit no kernel
    exceeded, so the cap is made to hold for every kernel. The simulated PTX is
    unchanged: register allocation does not alter what a kernel computes."""
    if maxrregcount is None:
        return ptx
    out: list[str] = []
    pos = 0
    for m in _ENTRY_RE.finditer(ptx):
        close = ptx.find(")", m.end())
        body = ptx.find("{", close)
        if close < 0 or body < 0 or body < pos:
            continue
        if ".maxnreg" not in ptx[close:body]:
            out.append(ptx[pos:body])
            out.append(f".maxnreg {maxrregcount}\n")
            pos = body
    out.append(ptx[pos:])
    return "".join(out)


def compile_cuda11(*, text: str, path: Path | None, source_name: str, nvrtc_name: str, arch: str,
                   maxrregcount: int | None, options: Sequence[str], include_dirs: Sequence[str | os.PathLike[str]],
                   defines: Mapping[str, str | None] | None, cache: bool, std: str | None) -> CompileResult:
    """NVRTC 11.8 to compute_XX PTX, then ptxas 11.8 -arch=sm_XX -v for its resources (tlpsim.frontend.nvcc
    checks the options and defines and describes the cache key; `nvrtc_name` is the name NVRTC's log uses)."""
    tk = find_cuda11()
    inc_dirs = list(dict.fromkeys(([path.parent] if path is not None else [])
                                  + [Path(d).expanduser().resolve() for d in include_dirs]))
    opts = nvrtc_options(arch, std=std, include_dirs=[str(d) for d in inc_dirs] + [str(tk.include_dir)],
                         defines={str(k): (None if v is None else str(v)) for k, v in (defines or {}).items()},
                         maxrregcount=maxrregcount, options=options)
    command = ["nvrtc", *opts, nvrtc_name]
    version = tk.version()
    key = sha256(json.dumps({
        "format": CACHE_FORMAT_VERSION, "toolchain": "cuda11", "toolkit_version": version,
        "toolkit_root": str(tk.nvrtc.parent), "source_sha256": sha256(text),
        "source_path": str(path) if path is not None else None,
        "includes": included_files(text, path.parent if path is not None else None, inc_dirs),
        "arch": arch, "maxrregcount": maxrregcount, "command": command[1:],
    }, sort_keys=True))
    cache_file = cache_dir() / f"{key}.json"
    if cache:
        hit = load_cache(cache_file, key)
        if hit is not None:
            return hit
    ptx, log = nvrtc_compile(text, nvrtc_name, opts, tk)
    report, ptxas_cmd = run_ptxas_verbose(with_register_cap(ptx, maxrregcount), arch, maxrregcount,
                                          name=f"the PTX of {source_name}", ptxas=str(tk.ptxas))
    result = CompileResult(
        ptx=ptx, resources=parse_ptxas_verbose(report, arch), arch=arch, command=command, toolkit_version=version,
        source_name=source_name, from_cache=False, maxrregcount=maxrregcount, ptxas_command=ptxas_cmd,
        module_resources=parse_ptxas_module(report), nvcc_output=log, ptxas_output=report, cache_key=key,
        toolchain="cuda11")
    if cache:
        store_cache(cache_file, result)
    return result
