"""`cupy.testing`: the helpers CuPy test files use — markers (`slow`, `multi_gpu`,
which skips when `CUPY_TEST_GPU_LIMIT` or the one simulated GPU is fewer than
asked), `shaped_random` and NumPy's assertions on device arrays."""

from __future__ import annotations

import itertools
import os

import numpy as np

from tlpsim.device_array import asarray


def _pytest():
    import pytest

    return pytest


class _Slow:
    """`@testing.slow` and `@testing.slow()`: pytest's `slow` marker."""

    def __call__(self, *args, **kwargs):
        mark = _pytest().mark.slow
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return mark(args[0])
        return mark(*args, **kwargs)


slow = _Slow()


def multi_gpu(gpu_num: int):
    """Skip unless `gpu_num` GPUs are available: tlpsim simulates one (and CUPY_TEST_GPU_LIMIT caps it)."""
    pytest = _pytest()
    limit = int(os.environ.get("CUPY_TEST_GPU_LIMIT", "-1"))
    have = 1 if limit < 0 else min(1, limit)
    return lambda f: pytest.mark.multi_gpu(pytest.mark.skipif(
        have < gpu_num, reason=f"needs {gpu_num} GPUs; tlpsim simulates one")(f))


def shaped_random(shape, xp=None, dtype=np.float32, scale=10, seed=0, order="C"):
    """Random values of `shape` and `dtype` from a fixed seed (integers in [0, scale), booleans,
    complex values with random real and imaginary parts), as a device array (xp=None or cupy)
    or a NumPy array (xp=numpy)."""
    rs = np.random.RandomState(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        host = rs.randint(2, size=shape).astype(dt)
    elif dt.kind == "c":
        host = ((rs.rand(*shape) + 1j * rs.rand(*shape)) * scale).astype(dt)
    else:
        host = (rs.rand(*shape) * scale).astype(dt)
    if xp is np:
        return np.asarray(host, order=order)
    return asarray(host)


def _host(x):
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else x


def assert_allclose(actual, desired, rtol=1e-7, atol=0, err_msg="", verbose=True):
    np.testing.assert_allclose(_host(actual), _host(desired), rtol=rtol, atol=atol, err_msg=err_msg, verbose=verbose)


def assert_array_almost_equal(x, y, decimal=6, err_msg="", verbose=True):
    np.testing.assert_array_almost_equal(_host(x), _host(y), decimal=decimal, err_msg=err_msg, verbose=verbose)


def assert_array_equal(x, y, err_msg="", verbose=True, strict=False):
    np.testing.assert_array_equal(_host(x), _host(y), err_msg=err_msg, verbose=verbose, strict=strict)


def assert_array_less(x, y, err_msg="", verbose=True):
    np.testing.assert_array_less(_host(x), _host(y), err_msg=err_msg, verbose=verbose)


def product(parameter: dict) -> list[dict]:
    """Every combination of the values in `parameter` (name -> list), as CuPy's testing.product."""
    keys = sorted(parameter)
    return [dict(zip(keys, values)) for values in itertools.product(*(parameter[k] for k in keys))]
