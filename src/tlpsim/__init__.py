"""tlpsim: a Python simulator of NVIDIA-style GPUs for SM resource-management research.

The CuPy-compatible host API is available here and as `tlpsim.cupy`."""

__version__ = "0.1.0"

# compiled timing core or its Python sources: decided before any of them is imported
from tlpsim import _core  # noqa: E402

_core.select()

from tlpsim.errors import KernelError, TlpsimError  # noqa: E402
from tlpsim.host import Device, LaunchRecord, Stream, cuda  # noqa: E402
from tlpsim.device_array import (  # noqa: E402
    arange,
    array,
    asarray,
    asnumpy,
    empty,
    empty_like,
    full,
    full_like,
    ndarray,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from tlpsim.host_kernels import RawKernel, RawModule  # noqa: E402

# NumPy dtypes under CuPy's names (cp.float32, ...)
from numpy import (  # noqa: E402
    bool_, complex64, complex128, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
    uint64,
)

__all__ = [
    "bool_", "complex64", "complex128", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "Device", "LaunchRecord", "RawKernel", "RawModule", "Stream", "arange", "array", "asarray", "asnumpy", "cuda",
    "empty", "empty_like", "full", "full_like", "ndarray", "ones", "ones_like", "zeros", "zeros_like", "KernelError", "TlpsimError",
]
