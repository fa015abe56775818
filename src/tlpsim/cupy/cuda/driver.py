"""`cupy.cuda.driver`: CUDADriverError (CUDA's CUresult names in the text) and the
version queries CuPy's tests and scripts make."""

from __future__ import annotations

from tlpsim.cuda_errors import DRIVER_ERRORS, CUDADriverError
from tlpsim.cupy.cuda import versions

for _code, (_name, _) in DRIVER_ERRORS.items():
    globals()[_name] = _code


def _is_cuda_python() -> bool:
    """CuPy built on NVIDIA's cuda-python bindings: no."""
    return False


def get_build_version() -> int:
    return versions.runtime_version()


def driverGetVersion() -> int:  # noqa: N802
    return versions.DRIVER_VERSION


__all__ = ["CUDADriverError", "driverGetVersion", "get_build_version"]
