"""`tlpsim toolkit`: a directory laid out as a CUDA installation, for Makefiles that
take one (`make CUDA_DIR=$(tlpsim toolkit)`).

    bin/nvcc          runs `tlpsim nvcc` (the pinned nvcc against tlpsim's runtime);
                      the wheel's other tools (ptxas, fatbinary, ...) are linked
    include/          the pinned CUDA 13 headers, with two generated files:
                      cuda_runtime_api.h also includes compat/tlpsim_cuda_compat.h
                      (cudaThreadSynchronize and the other functions CUDA 13 removed),
                      driver_types.h names the first words of cudaDeviceProp's
                      reserved array after the fields CUDA 13 removed (clockRate, ...)
    lib64/ (and lib)  libcudart.so: a linker script naming tlpsim's libcudart.so.13 and
                      libstdc++ (nvcc 13's host code needs it when a Makefile links
                      with gcc); libcuda.so (also in stubs/): a stub for `-lcuda`
                      (compat/libcuda_stub.c)

Why compat headers rather than a CUDA 12 toolchain: one compiler and one runtime ABI
(CUDA 12's cudaDeviceProp has another layout, and its programs would call CUDA 12's
symbol versions), no further wheels to pin, and the headers change nothing for
programs written for CUDA 13. The NVIDIA headers are patched when the directory is
made, from the installed wheels; nothing of NVIDIA's is kept in the project.

The directory is made on first use (under the runtime library's folder) and made
again when anything it is made from changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tlpsim.cudart.build import LIB_DIR, SONAME, library
from tlpsim.errors import TlpsimError

HERE = Path(__file__).resolve().parent
COMPAT_HEADER = HERE / "compat" / "tlpsim_cuda_compat.h"
LIBCUDA_STUB = HERE / "compat" / "libcuda_stub.c"
ROOT = LIB_DIR / "toolkit"
STAMP = "tlpsim-toolkit.json"

#: cudaDeviceProp fields CUDA 13 removed, in the order they take the reserved words
#: (libcudart.c's compat_props fills them in this order)
COMPAT_FIELDS = ("clockRate", "deviceOverlap", "kernelExecTimeoutEnabled", "computeMode", "maxTexture1DLinear",
                 "memoryClockRate", "cooperativeMultiDeviceLaunch", "singleToDoublePrecisionPerfRatio")

_PROP_STRUCT = re.compile(r"struct\s+__device_builtin__\s+cudaDeviceProp\s*\{(.*?)\n\};", re.DOTALL)
_RESERVED = re.compile(r"\bint(\s+)reserved\[(\d+)\];")
_API_GUARD_END = "#endif /* !__CUDA_RUNTIME_API_H__ */"


class ToolkitDirError(TlpsimError):
    pass


def patch_driver_types(text: str, origin: str = "driver_types.h") -> str:
    """`text` with cudaDeviceProp's reserved words named after COMPAT_FIELDS (same layout)."""
    struct = _PROP_STRUCT.search(text)
    reserved = _RESERVED.search(struct.group(1)) if struct else None
    if struct is None or reserved is None or int(reserved.group(2)) < len(COMPAT_FIELDS):
        raise ToolkitDirError(f"{origin}: no `int reserved[N];` (N >= {len(COMPAT_FIELDS)}) in struct cudaDeviceProp; "
                              "these CUDA headers are not the ones tlpsim's compat layer was written for")
    pad = reserved.group(1)
    named = "".join(f"int{pad}{f}; /* tlpsim compat: removed in CUDA 13 */\n    " for f in COMPAT_FIELDS)
    rest = int(reserved.group(2)) - len(COMPAT_FIELDS)
    body = struct.group(1)
    body = body[:reserved.start()] + named + f"int{pad}reserved[{rest}];" + body[reserved.end():]
    start, end = struct.span(1)
    return text[:start] + body + text[end:]


def patch_runtime_api(text: str, origin: str = "cuda_runtime_api.h") -> str:
    """`text` including the compat header just inside its include guard's end."""
    at = text.rfind(_API_GUARD_END)
    if at < 0:
        raise ToolkitDirError(f"{origin}: its include guard's end `{_API_GUARD_END}` was not found; these CUDA "
                              "headers are not the ones tlpsim's compat layer was written for")
    return text[:at] + '#include "tlpsim_cuda_compat.h"\n' + text[at:]


def _digest(include: Path, bin_dir: Path, runtime: Path) -> str:
    h = hashlib.sha256()
    for p in (COMPAT_HEADER, LIBCUDA_STUB, Path(__file__), include / "driver_types.h", include / "cuda_runtime_api.h"):
        h.update(p.read_bytes())
    h.update(json.dumps([str(include), str(bin_dir), str(runtime), sys.executable,
                         sorted(os.listdir(include)), sorted(os.listdir(bin_dir))]).encode())
    return h.hexdigest()


def _write_nvcc(path: Path) -> None:
    path.write_text("#!/bin/sh\n# tlpsim toolkit: the pinned nvcc, set up for tlpsim exec (see `tlpsim nvcc`)\n"
                    f'exec "{sys.executable}" -m tlpsim.cudart.nvcc "$@"\n')
    path.chmod(0o755)


def _make(root: Path, include: Path, bin_dir: Path, runtime: Path, digest: str) -> None:
    (root / "bin").mkdir(parents=True)
    _write_nvcc(root / "bin" / "nvcc")
    for entry in sorted(bin_dir.iterdir()):
        if entry.name not in ("nvcc", "nvcc.profile"):
            (root / "bin" / entry.name).symlink_to(entry)
    inc = root / "include"
    inc.mkdir()
    generated = {"driver_types.h": patch_driver_types, "cuda_runtime_api.h": patch_runtime_api}
    for entry in sorted(include.iterdir()):
        if entry.name in generated:
            (inc / entry.name).write_text(generated[entry.name](entry.read_text(), str(entry)))
        else:
            (inc / entry.name).symlink_to(entry)
    shutil.copyfile(COMPAT_HEADER, inc / COMPAT_HEADER.name)
    lib = root / "lib64"
    lib.mkdir()
    (root / "lib").symlink_to("lib64")
    (lib / SONAME).symlink_to(runtime)
    # a linker script: `gcc ... -lcudart` links tlpsim's runtime and the C++ library nvcc's host code needs
    (lib / "libcudart.so").write_text(f"/* tlpsim toolkit: tlpsim's CUDA runtime, and libstdc++ for nvcc's host "
                                      f"code when a program links with gcc */\nINPUT({runtime} -lstdc++)\n")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise ToolkitDirError("no C compiler (cc/gcc) on PATH to build the toolkit's libcuda.so stub")
    proc = subprocess.run([cc, "-shared", "-fPIC", "-O2", str(LIBCUDA_STUB), "-o", str(lib / "libcuda.so.1"),
                           "-Wl,-soname,libcuda.so.1"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ToolkitDirError(f"building the toolkit's libcuda.so stub failed:\n{proc.stdout}{proc.stderr}")
    (lib / "libcuda.so").symlink_to("libcuda.so.1")
    curand = runtime.parent / "libcurand.so.10"  # tlpsim's host cuRAND, for `-lcurand` (libcurand.c)
    if curand.is_file():
        (lib / "libcurand.so.10").symlink_to(curand)
        (lib / "libcurand.so").symlink_to("libcurand.so.10")
    (lib / "stubs").mkdir()  # where NVIDIA's toolkits keep their libcuda.so for linking
    (lib / "stubs" / "libcuda.so").symlink_to("../libcuda.so.1")
    (root / STAMP).write_text(json.dumps({"digest": digest, "headers": str(include), "tools": str(bin_dir),
                                          "runtime": str(runtime)}, indent=1) + "\n")


def _current(root: Path, digest: str) -> bool:
    try:
        return json.loads((root / STAMP).read_text()).get("digest") == digest
    except (OSError, ValueError):
        return False


def ensure(root: Path = ROOT) -> Path:
    """The toolkit directory, made (again) when it is missing or stale."""
    from tlpsim.frontend.toolkit import find_toolkit

    tk = find_toolkit()
    runtime = library()
    digest = _digest(tk.include_dir, tk.bin_dir, runtime)
    if _current(root, digest):
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    # made aside and renamed into place, so parallel builds (make -j) never see half a toolkit
    tmp = Path(tempfile.mkdtemp(prefix=".toolkit-", dir=root.parent))
    try:
        _make(tmp / "t", tk.include_dir, tk.bin_dir, runtime, digest)
        if _current(root, digest):
            return root  # another process (make -j) put the same toolkit in place meanwhile
        if root.exists():
            old = Path(tempfile.mkdtemp(prefix=".toolkit-old-", dir=root.parent))
            try:
                root.rename(old / "t")
            except OSError:
                pass  # another process replaced it first
        try:
            (tmp / "t").rename(root)
        except OSError:
            if not (root / STAMP).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for stale in root.parent.glob(".toolkit-old-*"):
            shutil.rmtree(stale, ignore_errors=True)
    return root


def include_dir() -> Path:
    return ensure() / "include"


def lib_dir() -> Path:
    return ensure() / "lib64"
