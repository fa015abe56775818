"""The CUDA versions the CuPy API reports, in CUDA's encoding (1000 x major + 10 x minor).

The driver version is that of the newest toolkit tlpsim ships (13.5): tlpsim loads
PTX that toolkit writes. The runtime and NVRTC versions are those of the device's
toolchain: 11.8 for "cuda11" (NVRTC 11.8, the presets' default), 13.5 for "cuda13"."""

from __future__ import annotations

from tlpsim.cupy import _device

DRIVER_VERSION = 13050
_TOOLCHAIN_VERSIONS = {"cuda11": (11, 8), "cuda13": (13, 5)}


def compiler_version() -> tuple[int, int]:
    """(major, minor) of the compiler the current device's toolchain uses."""
    return _TOOLCHAIN_VERSIONS.get(_device.current().toolchain, (13, 5))


def runtime_version() -> int:
    major, minor = compiler_version()
    return major * 1000 + minor * 10
