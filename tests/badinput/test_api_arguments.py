"""The CuPy-style Python API with arguments a CuPy user gets wrong: each mistake is
a `TlpsimError` subclass naming the argument and what it must be (and still a
TypeError/ValueError, as CuPy and NumPy raise), not a bare Python traceback; an
array whose element type differs from its `float*` parameter is passed as is (as
CuPy does) with one warning naming the parameter."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tlpsim as cp
from tlpsim.errors import ArgumentError, ArgumentWarning, TlpsimError
from tlpsim.frontend.signatures import kernel_parameters, pointee_dtype
from tlpsim.functional.launch_args import LaunchArgumentError

SOURCE = r'''extern "C" __global__ void fill(float* __restrict__ x, const unsigned int *u, int n) {
    if (threadIdx.x < n) x[threadIdx.x] = 1.0f + u[threadIdx.x];
}'''


@pytest.fixture(scope="module")
def fill():
    return cp.RawKernel(SOURCE, "fill")


@pytest.mark.parametrize("call, needle, numpy_kind", [
    (lambda: cp.zeros(-5), "shape -5: negative dimensions are not allowed", ValueError),
    (lambda: cp.empty((2, -1)), "shape (2, -1): negative dimensions are not allowed", ValueError),
    (lambda: cp.zeros(2.5), "shape 2.5: dimensions must be whole numbers", TypeError),
    (lambda: cp.asarray(np.array([1, "a", None], dtype=object)), "asarray: argument a has dtype object", TypeError),
    (lambda: cp.zeros(3, dtype=object), "dtype object is not supported on the device", TypeError),
    (lambda: cp.RawKernel(12345, "k"), "RawKernel: code must be CUDA C++ or PTX source text (a str), got int 12345",
     TypeError),
    (lambda: cp.RawModule(code=b"__global__ void k() {}"), "RawModule: code must be CUDA C++ or PTX source text",
     TypeError),
    (lambda: cp.RawModule(code=".target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"),
     "RawModule: code looks like PTX (it has .target) but no .version directive, so it would be compiled as CUDA "
     "C++", ValueError),
])
def test_a_wrong_argument_is_an_argument_error(call, needle, numpy_kind):
    with pytest.raises(ArgumentError) as exc:
        call()
    assert needle in str(exc.value)
    assert isinstance(exc.value, TlpsimError) and isinstance(exc.value, numpy_kind)


def test_a_stream_that_is_not_one(fill):
    x, u = cp.zeros(4, dtype=np.float32), cp.zeros(4, dtype=np.uint32)
    with pytest.raises(LaunchArgumentError, match=r"kernel fill: stream must be a tlpsim.Stream \(cupy.cuda.Stream\) "
                                                  r"or None, got str 'x'"):
        fill((1,), (4,), (x, u, np.int32(4)), stream="x")


def test_a_float64_array_for_a_float_pointer_warns_once(fill):
    x, u = cp.zeros(4, dtype=np.float64), cp.zeros(4, dtype=np.uint32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fill((1,), (4,), (x, u, np.int32(4)))
        fill((1,), (4,), (x, u, np.int32(4)))
    got = [str(w.message) for w in caught if w.category is ArgumentWarning]
    assert got == ["kernel fill: argument 0 (parameter 'float* __restrict__ x') is a float64 array; the kernel reads "
                   "its bytes as float32 (4 bytes each), as CuPy does; pass a.astype(numpy.float32) if that is not "
                   "what you meant"]
    # kept as on a GPU: two float32 ones fill the first float64's bytes
    assert x.get()[:2].view(np.float32).tolist() == [1.0, 1.0, 1.0, 1.0]


def test_same_width_integers_and_matching_arrays_do_not_warn(fill):
    x, u = cp.zeros(4, dtype=np.float32), cp.zeros(4, dtype=np.int32)  # int32 for unsigned*: the same bytes, on purpose
    with warnings.catch_warnings():
        warnings.simplefilter("error", ArgumentWarning)
        fill((1,), (4,), (x, u, np.int32(4)))
    assert x.get().tolist() == [1.0] * 4


def test_kernel_parameter_types_from_source():
    src = "// fill(double* y)\n" + SOURCE + "\ntemplate <typename T> __global__ void t(T* a, long long *b) {}\n"
    decls = kernel_parameters(src, "fill")
    assert decls == ["float* __restrict__ x", "const unsigned int *u", "int n"]
    assert [pointee_dtype(d) for d in decls] == [np.float32, np.uint32, None]
    assert [pointee_dtype(d) for d in kernel_parameters(src, "t")] == [None, np.int64]
    assert kernel_parameters(src, "nope") is None
