"""`tlpsim nvcc`: the pinned nvcc, set up to build programs for `tlpsim exec`.

The user's options pass through unchanged; tlpsim adds

* `-cudart shared`, so the program loads libcudart.so.13 at run time, and
  `-L<runtime dir> -Xlinker -rpath=<runtime dir>`, so that library is tlpsim's;
* `--no-compress`, so the PTX in the fat binary is readable at registration;
* PTX for the program's architecture: `-arch=sm_80` when no architecture is
  given, and a `code=compute_XX` target when -gencode/-code name only SASS;
* `-I` for the compat headers of `tlpsim toolkit` (toolkit_dir.py), searched before
  every other folder: programs for CUDA 4-12 (cudaThreadSynchronize,
  cudaDeviceProp::clockRate) build, and a foreign CUDA's include folder named by a
  Makefile (-I/usr/local/cuda/include) no longer shadows CUDA 13's headers (it is
  reported);
* architectures older than the pinned nvcc can target (-arch=sm_20, compute_13, the
  old --gpu-name) are replaced by sm_80 / compute_80, with one warning;
* `-L` for the toolkit's lib64, so `-lcuda` links its stub (nvcc finds NVIDIA's in
  lib64/stubs);
* `-I` for the pinned header-only wheels (nvidia-cuda-profiler-api's
  cuda_profiler_api.h) when they are not in the toolkit's own include folder
  (they install into the same nvidia/cu13/include, unless TLPSIM_CUDA_HOME
  points elsewhere or the wheels sit in another site-packages).

So a Makefile works with NVCC="tlpsim nvcc": compile and link steps, several
.cu/.cpp files, -I/-D/-O3/-std/-l, -rdc and device linking all pass through.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tlpsim.cudart.build import library

_CUDART_OPTS = ("-cudart", "--cudart")
_NO_COMPRESS = ("-no-compress", "--no-compress", "-compress-mode", "--compress-mode")
_VIRTUAL = re.compile(r"compute_(\d+[af]?)")
_REAL = re.compile(r"sm_(\d+[af]?)")
_ARCH_OPTS = ("-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code")
_OLD_GPU_NAME = ("--gpu-name", "-gpu-name")  # CUDA 2-4's spelling of -arch
_ANY_ARCH = re.compile(r"\b(sm|compute)_(\d+)([af]?)\b")
#: the oldest architecture the pinned nvcc compiles for, and what older ones become
OLDEST_ARCH, MODERN_ARCH = 75, 80
_QUERY = ("--version", "-V", "--help", "-h", "--list-gpu-arch", "-arch-ls", "--list-gpu-code", "-code-ls")


def _option_values(args: list[str], names: tuple[str, ...]) -> list[str]:
    """Values of options given as `-opt value`, `-opt=value` or `--opt value`."""
    out = []
    for k, a in enumerate(args):
        for n in names:
            if a == n and k + 1 < len(args):
                out.append(args[k + 1])
            elif a.startswith(n + "="):
                out.append(a[len(n) + 1:])
    return out


def _without_option(args: list[str], names: tuple[str, ...]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in names:
            skip = True
            continue
        if any(a.startswith(n + "=") for n in names):
            continue
        out.append(a)
    return out


def with_ptx(args: list[str]) -> list[str]:
    """`args` with the architecture options changed so the fat binary carries PTX."""
    arch = _option_values(args, ("-arch", "--gpu-architecture"))
    code = _option_values(args, ("-code", "--gpu-code"))
    gencode = _option_values(args, ("-gencode", "--generate-code"))
    if not (arch or code or gencode):
        return ["-arch=sm_80", *args]
    if not (code or gencode):
        return list(args)  # -arch alone embeds PTX (for compute_XX, or the newest with -arch=all)
    targets = code + [g.split("code=", 1)[1] for g in gencode if "code=" in g]
    text = " ".join(arch + code + gencode)
    archs = [int(v.rstrip("af")) for v in _VIRTUAL.findall(text) + _REAL.findall(text)]
    if any("compute_" in t for t in targets) or not archs:
        return list(args)
    ptx = f"compute_{max(archs)}"
    if gencode:
        return [*args, "-gencode", f"arch={ptx},code={ptx}"]
    # -arch with -code: nvcc refuses an extra -gencode, so the PTX target joins -code's list
    out = _without_option(args, ("-code", "--gpu-code"))
    return [*out, f"-code={','.join(code + [ptx])}"]


def modernize_arch(args: list[str]) -> tuple[list[str], str | None]:
    """`args` with architectures older than the pinned nvcc's (sm_13, sm_20, compute_20,
    --gpu-name sm_13) replaced by sm_80 / compute_80, and the warning to print, if any."""
    old: list[str] = []

    def modern(value: str) -> str:
        def sub(m: re.Match) -> str:
            if int(m.group(2)) >= OLDEST_ARCH:
                return m.group(0)
            if m.group(0) not in old:
                old.append(m.group(0))
            return f"{m.group(1)}_{MODERN_ARCH}"
        replaced = _ANY_ARCH.sub(sub, value)
        # `code=sm_20,compute_20,sm_21` -> no repeated targets in a list
        return ",".join(dict.fromkeys(replaced.split(","))) if "=" not in replaced else replaced

    out: list[str] = []
    names = _ARCH_OPTS + _OLD_GPU_NAME
    take_value = False
    for a in args:
        if take_value:
            out.append(modern(a))
            take_value = False
            continue
        name, eq, value = a.partition("=")
        if name in _OLD_GPU_NAME:
            name = "-arch"
        if name in names:
            if eq:
                out.append(f"{name}={modern(value)}")
            else:
                out.append(name)
                take_value = True
            continue
        out.append(a)
    if not old:
        return list(args), None
    deduped: list[str] = []  # -gencode arch=compute_20,code=sm_20 and ...sm_13 become one target
    for k, a in enumerate(out):
        if a.startswith(("-gencode=", "--generate-code=")) and a in deduped:
            continue
        if k and out[k - 1] in ("-gencode", "--generate-code") and a in out[:k - 1]:
            deduped.pop()
            continue
        deduped.append(a)
    targets = ", ".join(old)
    warning = (f"tlpsim nvcc: {targets} {'is' if len(old) == 1 else 'are'} older than CUDA 13.5 can compile for "
               f"(sm_{OLDEST_ARCH} and newer); compiling for sm_{MODERN_ARCH} / compute_{MODERN_ARCH} instead, "
               "the architecture tlpsim executes")
    return deduped, warning


def foreign_includes(args: list[str], own: list[Path]) -> list[tuple[str, str]]:
    """(folder, CUDA version) for each -I folder holding another toolkit's CUDA headers."""
    own_real = {p.resolve() for p in own}
    out = []
    for d in _option_values(args, ("-I", "--include-path")) + [a[2:] for a in args if a.startswith("-I") and a != "-I"]:
        api = Path(d) / "cuda_runtime_api.h"
        if not api.is_file() or Path(d).resolve() in own_real or api.resolve().parent in own_real:
            continue
        m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", api.read_text(errors="replace"))
        version = f"{int(m.group(1)) // 1000}.{int(m.group(1)) % 1000 // 10}" if m else "unknown"
        if (d, version) not in out:
            out.append((d, version))
    return out


EXTRA_HEADERS = ("cuda_profiler_api.h",)


def extra_include_dirs(toolkit_include: Path) -> list[str]:
    """Include folders of the pinned header wheels that the toolkit's lacks."""
    from tlpsim.frontend.toolkit import _wheel_candidates

    out: list[str] = []
    for header in EXTRA_HEADERS:
        if (toolkit_include / header).is_file():
            continue
        for root in _wheel_candidates():
            inc = root / "include"
            if (inc / header).is_file() and str(inc) not in out:
                out.append(str(inc))
                break
    return out


def command(args: list[str]) -> list[str]:
    """The nvcc command line for the user's `args`."""
    from tlpsim.cudart import toolkit_dir
    from tlpsim.frontend.toolkit import find_toolkit

    toolkit = find_toolkit()
    nvcc = str(toolkit.nvcc)
    if any(a in _QUERY for a in args):
        return [nvcc, *args]
    libdir = str(library().parent)
    user, _ = modernize_arch(_without_option(args, _CUDART_OPTS))
    extra = ["-cudart", "shared", f"-I{toolkit_dir.include_dir()}"]
    if not any(a.split("=")[0] in _NO_COMPRESS for a in args):
        extra.append("--no-compress")
    includes = [f"-I{d}" for d in extra_include_dirs(toolkit.include_dir)]
    # the toolkit's lib64 last: `-lcuda` finds its stub, as nvcc finds NVIDIA's in lib64/stubs
    stubs = f"-L{toolkit_dir.lib_dir()}"
    return [nvcc, *extra, *with_ptx(user), *includes, f"-L{libdir}", stubs, "-Xlinker", f"-rpath={libdir}"]


def main(args: list[str]) -> int:
    from tlpsim.cudart import toolkit_dir
    from tlpsim.frontend.toolkit import check_host_compiler, find_toolkit, subprocess_env

    env = subprocess_env()
    check_host_compiler(env)
    static = [v for v in _option_values(args, _CUDART_OPTS) if v != "shared"]
    if static:
        sys.stderr.write(f"tlpsim nvcc: -cudart {static[0]} replaced by -cudart shared (the program must load "
                         "tlpsim's CUDA runtime)\n")
    if not any(a in _QUERY for a in args):
        _, warning = modernize_arch(args)
        if warning:
            sys.stderr.write(warning + "\n")
        own = [toolkit_dir.include_dir(), find_toolkit().include_dir]
        for folder, version in foreign_includes(args, own):
            sys.stderr.write(f"tlpsim nvcc: -I{folder} holds the headers of another CUDA toolkit (CUDA {version}); "
                             "tlpsim builds with CUDA 13.5's, searched first, so CUDA's own headers do not come from "
                             f"there (build with `make CUDA_DIR=$(tlpsim toolkit)` to name tlpsim's)\n")
    return subprocess.run(command(args), env=env, check=False).returncode


if __name__ == "__main__":  # the toolkit's bin/nvcc: python -m tlpsim.cudart.nvcc ARGS
    from tlpsim.cli_errors import friendly

    sys.exit(friendly(main)(sys.argv[1:]))
