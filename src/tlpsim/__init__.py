"""tlpsim: a Python simulator of NVIDIA-style GPUs for SM resource-management research.

The CuPy-compatible host API is available here and as `tlpsim.cupy`."""

__version__ = "0.1.0"

from tlpsim.errors import KernelError, TlpsimError  # noqa: E402
from tlpsim.functional.host import (  # noqa: E402
    Device,
    LaunchRecord,
    RawKernel,
    RawModule,
    Stream,
    arange,
    array,
    asarray,
    asnumpy,
    cuda,
    empty,
    empty_like,
    full,
    ndarray,
    ones,
    zeros,
    zeros_like,
)

__all__ = [
    "Device", "LaunchRecord", "RawKernel", "RawModule", "Stream", "arange", "array", "asarray", "asnumpy", "cuda",
    "empty", "empty_like", "full", "ndarray", "ones", "zeros", "zeros_like", "KernelError", "TlpsimError",
]
