"""`cupy_backends.cuda.libs.nvrtc`: the version of the compiler RawModule uses on the
current device (NVRTC 11.8 for the cuda11 toolchain; nvcc 13.5's for cuda13)."""

from __future__ import annotations

from tlpsim.cupy.cuda import versions


def getVersion() -> tuple[int, int]:  # noqa: N802 - NVRTC's name
    return versions.compiler_version()
