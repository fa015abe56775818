"""CuPy's array functions (`cp.allclose`, `cp.abs`, `cp.sqrt`, `cp.linspace`, ...),
executed with NumPy on the host: device-array arguments are copied out of the
simulated memory, NumPy computes, and array results become device arrays (0-d for
scalar results, as CuPy returns them). Not simulated; counted in HOST_OPS."""

from __future__ import annotations

import numpy as np

from tlpsim.array_ops import HOST_OPS, host_value
from tlpsim.device_array import asarray, ndarray

# NumPy names that are not array functions, or whose results must stay Python objects
_PASS_THROUGH = frozenset({
    "dtype", "finfo", "iinfo", "result_type", "promote_types", "can_cast", "min_scalar_type", "issubdtype",
    "isscalar", "ndim", "shape", "size", "iscomplexobj", "isrealobj", "isfortran", "may_share_memory",
    "shares_memory", "errstate", "seterr", "geterr", "printoptions", "set_printoptions", "get_printoptions",
    "broadcast_shapes", "common_type", "obj2sctype", "sctype2char", "typename", "format_float_positional",
    "format_float_scientific", "array2string", "array_repr", "array_str", "save", "savez", "load", "binary_repr",
    "base_repr", "vectorize", "frompyfunc", "nditer", "ndindex", "ndenumerate", "iterable",
})


def _wrap(result):
    if isinstance(result, (np.ndarray, np.generic)):
        return asarray(np.asarray(result))
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if isinstance(result, list) and result and all(isinstance(r, np.ndarray) for r in result):
        return [_wrap(r) for r in result]
    return result


def _host_args(x):
    if isinstance(x, ndarray):
        return x.get()
    if isinstance(x, (list, tuple)) and any(isinstance(v, ndarray) for v in x):
        return type(x)(_host_args(v) for v in x)
    return x


def lift(name: str, fn):
    """`fn` (a NumPy function) taking and returning device arrays, counted as a host operation."""
    if name in _PASS_THROUGH:
        def passthrough(*args, **kwargs):
            return fn(*(_host_args(a) for a in args), **{k: _host_args(v) for k, v in kwargs.items()})

        passthrough.__name__ = name
        return passthrough

    def lifted(*args, **kwargs):
        HOST_OPS[name] += 1
        out = kwargs.pop("out", None)
        result = fn(*(_host_args(a) for a in args), **{k: _host_args(v) for k, v in kwargs.items()})
        if out is not None:
            out.set(np.asarray(result).astype(out.dtype, copy=False))
            return out
        return _wrap(result)

    lifted.__name__ = name
    lifted.__doc__ = f"numpy.{name}, executed on the host (device arrays in and out; not simulated)."
    return lifted


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> ndarray:
    """A 0-d boolean device array, as CuPy returns."""
    HOST_OPS["allclose"] += 1
    return asarray(np.asarray(np.allclose(host_value(a), host_value(b), rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False) -> ndarray:
    HOST_OPS["array_equal"] += 1
    return asarray(np.asarray(np.array_equal(host_value(a1), host_value(a2), equal_nan=equal_nan)))


def get_array_module(*args):
    """tlpsim's CuPy module if any argument is a device array, else NumPy (as CuPy's)."""
    if any(isinstance(a, ndarray) for a in args):
        import tlpsim.cupy

        return tlpsim.cupy
    return np
