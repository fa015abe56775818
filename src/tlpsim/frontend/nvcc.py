"""Compile CUDA C to PTX with the pinned nvcc wheel, and read ptxas resources.

``compile_cuda`` runs ::

    nvcc -ptx -arch=<arch> -O3 --std=c++17 [-maxrregcount=N] [-I<dir of the .cu>]
         [-I<include dir>...] [-D<name>[=<value>]...] [<options>...] <file.cu> -o out.ptx

exactly as a user would (a whole program with ``main``, ``<cstdio>`` and
``<<<>>>`` launches is fine: ``-ptx`` keeps only the device code), then
assembles the PTX with ``ptxas -arch=<arch> -v [-maxrregcount=N]`` to get the
per-function :class:`~tlpsim.frontend.resources.ResourceUsage` (``nvcc -ptx``
never runs ptxas, so ``-Xptxas -v`` would print nothing).

With ``toolchain="cuda11"`` NVRTC 11.8 compiles the device code to
``compute_XX`` PTX (ISA 7.8) instead, and ptxas 11.8 reports ``sm_XX``
resources (tlpsim.frontend.nvrtc, tlpsim.frontend.toolchains).

Results are cached on disk, one JSON file per compilation, in
``$TLPSIM_CACHE_DIR/ptx/`` (default ``$XDG_CACHE_HOME/tlpsim/ptx`` or
``~/.cache/tlpsim/ptx``).  The key hashes the source text, the absolute path
of a source file, the contents of the files it includes with
``#include "..."`` (found next to the including file or in ``include_dirs``;
conditional or macro includes and ``<...>`` headers are not tracked), the
toolchain, arch, maxrregcount, options, include directories, defines, the
toolkit version and the cache format version.  Every file stores its key and a checksum of its
contents (tlpsim.cachefile): a file of another format version is ignored, a
corrupt one or one holding another compilation is reported with a warning naming
it and recompiled; files are written atomically (temporary file + ``os.replace``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tlpsim.errors import CompileError, TlpsimError

from .nvrtc import compile_cuda11, find_cuda11
from .ptx_cache import CACHE_FORMAT_VERSION, CompileResult, cache_dir, included_files, load_cache, sha256, store_cache
from .resources import (
    ResourceUsage,
    check_arch,
    parse_ptxas_module,
    parse_ptxas_verbose,
    run_ptxas_verbose,
)
from .toolchains import DEFAULT_TOOLCHAIN, check_target
from .toolkit import check_host_compiler, find_toolkit

__all__ = [
    "CACHE_FORMAT_VERSION",
    "CompileResult",
    "PtxasWarning",
    "cache_dir",
    "compile_cuda",
    "compile_cuda_file",
    "compile_cuda_source",
    "nvcc_command",
    "ptx_resources_for_file",
    "ptx_text_resources",
]

log = logging.getLogger(__name__)

#: Default nvcc flags (after ``-ptx -arch=...``).
DEFAULT_NVCC_FLAGS: tuple[str, ...] = ("-O3", "--std=c++17")

# Lowest architecture ptxas 13.5 accepts.
_MIN_PTXAS_ARCH = 75

_ARCH_OPTIONS = re.compile(r"^(-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code)(=|$)")
_DEFINE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\([^)]*\))?$")
_TARGET_RE = re.compile(r"^\s*\.target\s+([A-Za-z0-9_]+)", re.MULTILINE)
_STRING_SOURCE_NAME = "<string>"
_STRING_SOURCE_FILE = "source.cu"


class PtxasWarning(UserWarning):
    """ptxas could not report resources for a PTX file (e.g. a target below sm_75)."""


# --------------------------------------------------------------------------- compiling


def nvcc_command(
    source_file: str,
    *,
    arch: str,
    maxrregcount: int | None = None,
    options: Sequence[str] = (),
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: Mapping[str, str | None] | None = None,
    output: str = "out.ptx",
    std: str | None = None,
) -> list[str]:
    """The nvcc command line tlpsim runs for ``source_file``; ``std`` replaces the
    default ``--std=c++17``."""
    check_arch(arch)
    flags = [f for f in DEFAULT_NVCC_FLAGS if not (std and f.startswith("--std="))]
    cmd = [str(find_toolkit().nvcc), "-ptx", f"-arch={arch}", *flags] + ([f"--std={std}"] if std else [])
    if maxrregcount is not None:
        if not isinstance(maxrregcount, int) or isinstance(maxrregcount, bool) or maxrregcount <= 0:
            raise TlpsimError(f"maxrregcount must be a positive integer, got {maxrregcount!r}")
        cmd.append(f"-maxrregcount={maxrregcount}")
    for inc in include_dirs:
        cmd.append(f"-I{inc}")
    for name, value in (defines or {}).items():
        if not _DEFINE_NAME.match(str(name)):
            raise TlpsimError(f"invalid macro name in defines: {name!r}")
        cmd.append(f"-D{name}" if value is None else f"-D{name}={value}")
    for opt in options:
        if not isinstance(opt, str):
            raise TlpsimError(f"nvcc options must be strings, got {opt!r}")
        if _ARCH_OPTIONS.match(opt):
            raise TlpsimError(f"nvcc option {opt!r} is not allowed: pass arch='sm_XX' instead")
    cmd.extend(options)
    cmd.extend([source_file, "-o", output])
    return cmd


def _compile(
    *,
    text: str,
    path: Path | None,
    source_name: str,
    arch: str,
    maxrregcount: int | None,
    options: Sequence[str],
    include_dirs: Sequence[str | os.PathLike[str]],
    defines: Mapping[str, str | None] | None,
    cache: bool,
    std: str | None = None,
    toolchain: str = DEFAULT_TOOLCHAIN,
) -> CompileResult:
    check_arch(arch)
    check_target(toolchain, arch)
    if isinstance(options, str):
        options = options.split()
    options = list(options)
    if toolchain == "cuda11":
        for name in defines or {}:
            if not _DEFINE_NAME.match(str(name)):
                raise TlpsimError(f"invalid macro name in defines: {name!r}")
        for opt in options:
            if not isinstance(opt, str) or _ARCH_OPTIONS.match(opt):
                raise TlpsimError(f"compile option {opt!r} is not allowed: pass arch='sm_XX' (gpu.cuda11_arch)"
                                  if isinstance(opt, str) else f"compile options must be strings, got {opt!r}")
        nvrtc_name = str(path) if path is not None else (
            source_name if source_name != _STRING_SOURCE_NAME else _STRING_SOURCE_FILE)
        return compile_cuda11(text=text, path=path, source_name=source_name, nvrtc_name=nvrtc_name, arch=arch,
                              maxrregcount=maxrregcount, options=options, include_dirs=include_dirs,
                              defines=defines, cache=cache, std=std)
    tk = find_toolkit()
    env = tk.env()
    if not any(o.startswith(("-ccbin", "--compiler-bindir")) for o in options) and not env.get("NVCC_CCBIN"):
        check_host_compiler(env)
    version = tk.version()

    inc_dirs: list[Path] = []
    if path is not None:
        inc_dirs.append(path.parent)
    inc_dirs.extend(Path(d).expanduser().resolve() for d in include_dirs)
    inc_dirs = list(dict.fromkeys(inc_dirs))
    defines_d = {str(k): (None if v is None else str(v)) for k, v in (defines or {}).items()}

    src_arg = str(path) if path is not None else _STRING_SOURCE_FILE
    command = nvcc_command(
        src_arg,
        arch=arch,
        maxrregcount=maxrregcount,
        options=options,
        include_dirs=[str(d) for d in inc_dirs],
        defines=defines_d,
        std=std,
    )

    key_material = {
        "format": CACHE_FORMAT_VERSION,
        "toolchain": toolchain,
        "toolkit_version": version,
        "toolkit_root": str(tk.root),
        "source_sha256": sha256(text),
        "source_path": str(path) if path is not None else None,
        "includes": included_files(text, path.parent if path is not None else None, inc_dirs),
        "arch": arch,
        "maxrregcount": maxrregcount,
        "command": command[1:],  # flags, include dirs, defines and options (not the nvcc path)
    }
    key = sha256(json.dumps(key_material, sort_keys=True))
    cache_file = cache_dir() / f"{key}.json"
    if cache:
        hit = load_cache(cache_file, key)
        if hit is not None:
            return hit

    with tempfile.TemporaryDirectory(prefix="tlpsim-nvcc-") as tmp:
        if path is None:
            (Path(tmp) / _STRING_SOURCE_FILE).write_text(text, encoding="utf-8")
        try:
            proc = subprocess.run(command, check=False, cwd=tmp, env=env, capture_output=True, text=True, errors="replace")
        except OSError as exc:
            raise CompileError(f"cannot run nvcc to compile {source_name}: {exc}", command) from exc
        output = (proc.stdout + proc.stderr).strip()
        out_file = Path(tmp) / "out.ptx"
        if proc.returncode != 0 or not out_file.is_file():
            raise CompileError(f"nvcc failed to compile {source_name}{_missing_header_hint(output)}", command,
                               output)
        ptx = out_file.read_text(encoding="utf-8", errors="replace")

    report, ptxas_cmd = run_ptxas_verbose(ptx, arch, maxrregcount, name=f"the PTX of {source_name}")
    result = CompileResult(
        ptx=ptx,
        resources=parse_ptxas_verbose(report, arch),
        arch=arch,
        command=command,
        toolkit_version=version,
        source_name=source_name,
        from_cache=False,
        maxrregcount=maxrregcount,
        ptxas_command=ptxas_cmd,
        module_resources=parse_ptxas_module(report),
        nvcc_output=output,
        ptxas_output=report,
        cache_key=key,
    )
    if cache:
        store_cache(cache_file, result)
    return result


def compile_cuda_file(
    path: str | os.PathLike[str],
    *,
    arch: str = "sm_80",
    maxrregcount: int | None = None,
    options: Sequence[str] = (),
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: Mapping[str, str | None] | None = None,
    cache: bool = True,
    std: str | None = None,
    toolchain: str = DEFAULT_TOOLCHAIN,
) -> CompileResult:
    """Compile a ``.cu`` file (its directory is added with ``-I`` so
    ``#include "local.h"`` works).  A missing file raises :class:`TlpsimError`."""
    p = Path(path).expanduser()
    if not p.is_file():
        what = "is a directory, not a CUDA source file" if p.is_dir() else "does not exist"
        raise TlpsimError(f"CUDA source file {str(path)!r} {what}")
    p = p.resolve()
    try:
        text = p.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise TlpsimError(f"cannot read CUDA source file {str(path)!r}: {exc.strerror or exc}") from exc
    return _compile(
        text=text,
        path=p,
        source_name=str(p),
        arch=arch,
        maxrregcount=maxrregcount,
        options=options,
        include_dirs=include_dirs,
        defines=defines,
        cache=cache,
        std=std,
        toolchain=toolchain,
    )


def compile_cuda_source(
    text: str,
    *,
    arch: str = "sm_80",
    maxrregcount: int | None = None,
    options: Sequence[str] = (),
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: Mapping[str, str | None] | None = None,
    cache: bool = True,
    name: str = _STRING_SOURCE_NAME,
    std: str | None = None,
    toolchain: str = DEFAULT_TOOLCHAIN,
) -> CompileResult:
    """Compile CUDA source text (written to ``source.cu`` in a temporary
    directory; nvcc's messages refer to that name).  ``name`` is used in
    error messages and as :attr:`CompileResult.source_name`."""
    if not isinstance(text, str):
        raise TypeError(f"CUDA source text must be a str, got {type(text).__name__}")
    return _compile(
        text=text,
        path=None,
        source_name=name,
        arch=arch,
        maxrregcount=maxrregcount,
        options=options,
        include_dirs=include_dirs,
        defines=defines,
        cache=cache,
        std=std,
        toolchain=toolchain,
    )


#: headers that ship in the nvidia-cuda-cccl wheel rather than the compiler's
_CCCL_HEADERS = ("nv/", "cuda/", "cub/", "thrust/")
_MISSING_HEADER = re.compile(r"fatal error: ([^\s:]+): No such file or directory")


def _missing_header_hint(output: str) -> str:
    """': header X not found (...)' naming a header nvcc could not find."""
    m = _MISSING_HEADER.search(output)
    if m is None:
        return ""
    header = m.group(1)
    if header.startswith(_CCCL_HEADERS):
        return (f": header <{header}> not found; it is part of CUDA's CCCL (the nvidia-cuda-cccl wheel pinned in "
                "requirements.lock): reinstall with `make setup` or `pip install -r requirements.lock`")
    return f": header {header} not found (add its directory with -I / include_dirs)"


def _looks_like_path(source: str) -> bool:
    if "\n" in source or len(source) > 4096:
        return False
    if os.path.isfile(source):
        return True
    return source.strip().endswith((".cu", ".cuh")) and not any(ch in source for ch in "{};")


def compile_cuda(
    source: str | os.PathLike[str],
    *,
    arch: str = "sm_80",
    maxrregcount: int | None = None,
    options: Sequence[str] = (),
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: Mapping[str, str | None] | None = None,
    cache: bool = True,
    std: str | None = None,
    toolchain: str = DEFAULT_TOOLCHAIN,
) -> CompileResult:
    """Compile CUDA C to PTX and read its ptxas resources (``toolchain``: "cuda13"
    or "cuda11", tlpsim.frontend.toolchains).

    ``source`` is a file when it is a ``pathlib.Path``/``os.PathLike``, or a
    ``str`` without newlines that names an existing file or ends in ``.cu``
    (a missing file then raises :class:`TlpsimError`); any other ``str`` is
    CUDA source text.  Use :func:`compile_cuda_file` /
    :func:`compile_cuda_source` to be explicit.
    """
    kwargs: dict[str, Any] = {
        "arch": arch,
        "maxrregcount": maxrregcount,
        "options": options,
        "include_dirs": include_dirs,
        "defines": defines,
        "cache": cache,
        "std": std,
        "toolchain": toolchain,
    }
    if isinstance(source, os.PathLike):
        return compile_cuda_file(source, **kwargs)
    if not isinstance(source, str):
        raise TypeError(f"source must be a path or CUDA source text, got {type(source).__name__}")
    if _looks_like_path(source):
        return compile_cuda_file(source.strip(), **kwargs)
    return compile_cuda_source(source, **kwargs)


# --------------------------------------------------------------------------- ready-made PTX


def ptx_resources_for_file(
    ptx_path: str | os.PathLike[str],
    arch: str | None = None,
    maxrregcount: int | None = None,
) -> dict[str, ResourceUsage]:
    """ptxas resources of a ready ``.ptx`` file.

    ``arch`` defaults to the file's ``.target`` (``sm_90a`` etc.).  ptxas 13.5
    only knows sm_75 and newer; PTX written for older targets (e.g.
    ``.version 7.8`` / ``.target sm_35`` files) is assembled by the cuda11
    toolchain's ptxas 11.8 (sm_35 ... sm_72).  When neither can -- a target
    below sm_35, the CUDA 11 wheels missing, or a ptxas failure while the
    architecture is below sm_75 -- this returns ``{}`` and emits a
    :class:`PtxasWarning` instead of raising.  Passing ``arch="sm_75"`` (or
    newer) explicitly usually works for such files and gives an estimate for
    that architecture.  Other ptxas failures raise :class:`CompileError`.
    """
    p = Path(ptx_path).expanduser()
    if not p.is_file():
        raise TlpsimError(f"PTX file {str(ptx_path)!r} does not exist")
    return ptx_text_resources(p.read_text(encoding="utf-8", errors="replace"), str(p), arch, maxrregcount)


def ptx_text_resources(text: str, p: str, arch: str | None = None,
                       maxrregcount: int | None = None) -> dict[str, ResourceUsage]:
    """:func:`ptx_resources_for_file` of PTX text; `p` names it in messages."""
    if arch is None:
        m = _TARGET_RE.search(text)
        if m is None:
            raise TlpsimError(f"{p}: no .target directive; pass arch='sm_XX'")
        arch = m.group(1)
    try:
        number = check_arch(arch)
    except TlpsimError as exc:
        raise TlpsimError(f"{p}: unsupported target {arch!r} ({exc})") from exc
    try:
        report, _ = run_ptxas_verbose(text, arch, maxrregcount, name=str(p), ptxas=_old_target_ptxas(number))
    except CompileError as exc:
        if number < _MIN_PTXAS_ARCH:
            first = next((ln for ln in (exc.output or str(exc)).splitlines() if ln.strip()), "ptxas failed")
            warnings.warn(
                f"{p}: ptxas cannot report resources for {arch} (ptxas 13.5 supports sm_75 and newer, the cuda11 "
                f"toolchain's ptxas 11.8 sm_35 to sm_72: {first.strip()}); no resource usage available -- pass "
                "arch='sm_75' or newer for an estimate",
                PtxasWarning,
                stacklevel=2,
            )
            return {}
        raise
    return parse_ptxas_verbose(report, arch)


def _old_target_ptxas(number: int) -> str | None:
    """ptxas 11.8 for a target below sm_75 (None: ptxas 13.5); a CompileError when
    no installed ptxas can assemble for it."""
    if number >= _MIN_PTXAS_ARCH:
        return None
    check_target("cuda11", f"sm_{number}")
    return str(find_cuda11().ptxas)
