"""The two compilers that turn CUDA C into the PTX tlpsim simulates.

``cuda13``
    The pinned CUDA 13.5 toolkit (``nvcc -ptx`` and ptxas 13.5 from the
    ``nvidia-cuda-nvcc`` wheel): targets sm_75 and newer. Whole programs
    (``tlpsim exec``, ``tlpsim nvcc``) always use it, since they need nvcc's host
    compilation.
``cuda11``
    The papers' era: NVRTC 11.8 (``nvidia-cuda-nvrtc-cu11``) compiles device code
    to ``compute_XX`` PTX of ISA 7.8, and ptxas 11.8 (``nvidia-cuda-nvcc-cu11``)
    reports that target's registers and shared memory. It reaches back to sm_35
    (Kepler), the oldest target any CUDA 11 compiler has; Fermi's sm_20 was last
    supported by CUDA 8, whose compilers are not distributed as wheels.

This module is data only (no compiler is located or run), so the configuration
layer can validate a ``[gpu]`` section against it.
"""

from __future__ import annotations

import re

from tlpsim.errors import CompileError

__all__ = ["DEFAULT_TOOLCHAIN", "TARGETS", "TOOLCHAINS", "check_target", "target_problem"]

#: the toolchain names, in the order they are documented
TOOLCHAINS: tuple[str, ...] = ("cuda13", "cuda11")

#: the toolchain of a configuration that names none (today's behaviour)
DEFAULT_TOOLCHAIN = "cuda13"

#: toolchain -> the sm_XX numbers it can compile for (CUDA 11.8: nvrtcGetSupportedArchs;
#: CUDA 13.5: ptxas's sm_75 floor; newer targets are whatever that ptxas accepts)
TARGETS: dict[str, tuple[int, ...]] = {
    "cuda11": (35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90),
    "cuda13": (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121),
}

#: what each toolchain is, for messages and docs
DESCRIPTIONS: dict[str, str] = {
    "cuda13": "CUDA 13.5 (nvcc + ptxas 13.5; targets sm_75 and newer)",
    "cuda11": "CUDA 11.8 (NVRTC + ptxas 11.8; targets sm_35 to sm_90)",
}

_SM_RE = re.compile(r"sm_(\d{2,3})([af]?)")


def target_problem(toolchain: str, arch: str) -> str | None:
    """Why `toolchain` cannot compile for `arch` (``sm_XX``), or None when it can."""
    if toolchain not in TARGETS:
        return f"unknown toolchain {toolchain!r} (choose one of {', '.join(TOOLCHAINS)})"
    m = _SM_RE.fullmatch(arch) if isinstance(arch, str) else None
    if m is None:
        return f"{arch!r} is not a GPU architecture (write e.g. 'sm_35' or 'sm_80')"
    number, suffix = int(m.group(1)), m.group(2)
    if toolchain == "cuda11":
        if suffix or number not in TARGETS["cuda11"]:
            older = " (Fermi's sm_20/sm_21 were last supported by CUDA 8, which has no wheel)" if number < 35 else ""
            return (f"{DESCRIPTIONS['cuda11']} cannot target {arch}{older}; its targets are "
                    + ", ".join(f"sm_{n}" for n in TARGETS["cuda11"]))
        return None
    if number < TARGETS["cuda13"][0]:
        return f"{DESCRIPTIONS['cuda13']} cannot target {arch}"
    return None


def check_target(toolchain: str, arch: str) -> int:
    """The sm number of `arch`; a CompileError naming both when `toolchain` cannot target it."""
    problem = target_problem(toolchain, arch)
    if problem is not None:
        raise CompileError(f"toolchain {toolchain}: {problem}")
    return int(_SM_RE.fullmatch(arch).group(1))  # type: ignore[union-attr]
