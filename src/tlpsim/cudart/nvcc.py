"""`tlpsim nvcc`: the pinned nvcc, set up to build programs for `tlpsim exec`.

The user's options pass through unchanged; tlpsim adds

* `-cudart shared`, so the program loads libcudart.so.13 at run time, and
  `-L<runtime dir> -Xlinker -rpath=<runtime dir>`, so that library is tlpsim's;
* `--no-compress`, so the PTX in the fat binary is readable at registration;
* PTX for the program's architecture: `-arch=sm_80` when no architecture is
  given, and a `code=compute_XX` target when -gencode/-code name only SASS;
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
    from tlpsim.frontend.toolkit import find_toolkit

    toolkit = find_toolkit()
    nvcc = str(toolkit.nvcc)
    if any(a in _QUERY for a in args):
        return [nvcc, *args]
    libdir = str(library().parent)
    user = _without_option(args, _CUDART_OPTS)
    extra = ["-cudart", "shared"]
    if not any(a.split("=")[0] in _NO_COMPRESS for a in args):
        extra.append("--no-compress")
    includes = [f"-I{d}" for d in extra_include_dirs(toolkit.include_dir)]
    return [nvcc, *extra, *with_ptx(user), *includes, f"-L{libdir}", "-Xlinker", f"-rpath={libdir}"]


def main(args: list[str]) -> int:
    from tlpsim.frontend.toolkit import check_host_compiler, subprocess_env

    env = subprocess_env()
    check_host_compiler(env)
    static = [v for v in _option_values(args, _CUDART_OPTS) if v != "shared"]
    if static:
        sys.stderr.write(f"tlpsim nvcc: -cudart {static[0]} replaced by -cudart shared (the program must load "
                         "tlpsim's CUDA runtime)\n")
    return subprocess.run(command(args), env=env, check=False).returncode
