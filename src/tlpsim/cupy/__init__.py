"""CuPy's API on the simulated GPU: `import tlpsim.cupy as cp` in place of
`import cupy as cp`, or `tlpsim cupy -- python script.py` to run a script that
imports cupy unchanged (tlpsim.cupy.hook).

Kernels (`RawKernel`, `RawModule`, `cuda.compiler.compile_with_cache`) run on the
simulator. Array operations (operators, reductions, `allclose`, `random`, any NumPy
function under its CuPy name) run on the host with NumPy on the simulated device's
memory: they are not simulated, and `tlpsim.array_ops.HOST_OPS` counts them."""

import os as _os
import types as _types

import numpy as _np

from tlpsim import *  # noqa: F401,F403
from tlpsim import __all__ as _tlpsim_all
from tlpsim.array_ops import HOST_OPS  # noqa: F401
from tlpsim.cupy_sources import CUPY_VERSION
from tlpsim.cupy import _core, _util, exceptions, random  # noqa: F401
import importlib as _importlib

cuda = _importlib.import_module("tlpsim.cupy.cuda")  # the module, not tlpsim.cuda (star-imported above)
from tlpsim.cupy._functions import allclose, array_equal, get_array_module, lift
from tlpsim.host_kernels import translate_cucomplex  # noqa: F401

#: the CuPy release whose API this mirrors, with tlpsim's version as the local part
__version__ = f"{CUPY_VERSION}+tlpsim"

# NumPy's scalar types and constants under CuPy's names
from numpy import (  # noqa: E402,F401
    bool_, byte, cdouble, complex64, complex128, csingle, double, dtype, e, euler_gamma, float16, float32, float64,
    half, inf, int8, int16, int32, int64, intc, intp, longlong, nan, newaxis, pi, short, single, ubyte, uint,
    uint8, uint16, uint32, uint64, uintc, uintp, ulonglong, ushort,
)

_NOT_PROVIDED = {
    "ElementwiseKernel": "write the kernel as a RawKernel (CUDA source) or use array operators (host-executed)",
    "ReductionKernel": "write the kernel as a RawKernel (CUDA source) or use a.sum()/a.max() (host-executed)",
    "fuse": "write the kernel as a RawKernel",
}


class _LiftedModule(_types.ModuleType):
    """A NumPy submodule (linalg, fft) whose functions take and return device arrays."""

    def __init__(self, name: str, numpy_module) -> None:
        super().__init__(f"cupy.{name}", f"numpy.{name}, executed on the host (not simulated)")
        self._numpy_module = numpy_module

    def __getattr__(self, attr: str):
        obj = getattr(self._numpy_module, attr)
        return lift(f"{self.__name__[5:]}.{attr}", obj) if callable(obj) and not isinstance(obj, type) else obj


def __getattr__(name: str):
    """Submodules of tlpsim.cupy (testing, ...), then any other NumPy function under its
    CuPy name, executed on the host (not simulated)."""
    if name in _NOT_PROVIDED:
        raise AttributeError(f"tlpsim's CuPy API has no cupy.{name}: {_NOT_PROVIDED[name]}")
    here = _os.path.dirname(__file__)
    if _os.path.isfile(_os.path.join(here, name + ".py")) or _os.path.isdir(_os.path.join(here, name)):
        return _importlib.import_module(f"{__name__}.{name}")
    if name.startswith("__") or not hasattr(_np, name):
        raise AttributeError(f"module 'cupy' (tlpsim's CuPy API) has no attribute {name!r}")
    obj = getattr(_np, name)
    if isinstance(obj, _types.ModuleType):
        if name in ("linalg", "fft"):
            globals()[name] = _LiftedModule(name, obj)
            return globals()[name]
        raise AttributeError(f"tlpsim's CuPy API has no cupy.{name}")
    if isinstance(obj, type) or not callable(obj):
        return obj
    fn = lift(name, obj)
    globals()[name] = fn
    return fn


abs = lift("absolute", _np.absolute)  # noqa: A001 - CuPy's names
absolute = abs
conj = conjugate = lift("conjugate", _np.conjugate)
sum = lift("sum", _np.sum)  # noqa: A001
max = amax = lift("max", _np.max)  # noqa: A001
min = amin = lift("min", _np.min)  # noqa: A001
all = lift("all", _np.all)  # noqa: A001
any = lift("any", _np.any)  # noqa: A001

__all__ = list(_tlpsim_all) + ["allclose", "array_equal", "abs", "conj", "cuda", "random", "get_array_module"]
