"""Host-executed array operations of tlpsim's CuPy API against NumPy, exactly; their counts."""

from __future__ import annotations

import numpy as np
import pytest

import tlpsim
import tlpsim.cupy as cp
from tlpsim.array_ops import HOST_OPS, StridedCopyWarning


@pytest.fixture(autouse=True)
def device():
    HOST_OPS.clear()
    with tlpsim.Device(trace_cache=False) as dev:
        yield dev


def test_operators_match_numpy_and_are_counted():
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    a, b = cp.asarray(h), cp.asarray(h[::-1].copy())
    np.testing.assert_array_equal((a + b).get(), h + h[::-1])
    np.testing.assert_array_equal((2 * a - b / 4).get(), 2 * h - h[::-1] / 4)
    np.testing.assert_array_equal((a ** 2).get(), h ** 2)
    np.testing.assert_array_equal((np.float32(3) * a).get(), 3 * h)  # a NumPy scalar on the left
    np.testing.assert_array_equal((a == b).get(), h == h[::-1])
    np.testing.assert_array_equal((-a).get(), -h)
    assert isinstance(np.float32(3) * a, tlpsim.ndarray)
    assert HOST_OPS == {"add": 1, "multiply": 3, "subtract": 1, "true_divide": 1, "power": 1, "equal": 1,
                        "negative": 1}


def test_in_place_operator_writes_the_operand():
    a = cp.arange(4, dtype=cp.int32)
    ptr = a.ptr
    a += 5
    assert a.ptr == ptr
    np.testing.assert_array_equal(a.get(), [5, 6, 7, 8])


def test_reductions_return_0d_device_arrays():
    a = cp.asarray(np.array([[1, 5], [3, 2]], np.int64))
    s = a.sum()
    assert isinstance(s, tlpsim.ndarray) and s.shape == () and int(s) == 11
    np.testing.assert_array_equal(a.max(axis=0).get(), [3, 5])
    assert bool((a > 0).all()) and not bool((a > 4).all()) and bool((a > 4).any())
    assert int(a.argmax()) == 1
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a > 0)


def test_allclose_array_equal_abs_conj():
    z = cp.asarray(np.array([1 + 2j, -3 - 4j], np.complex128))
    assert bool(cp.allclose(z, z + 1e-12)) and not bool(cp.allclose(z, z + 1))
    assert bool(cp.array_equal(cp.conj(z), cp.asarray(np.array([1 - 2j, -3 + 4j]))))
    np.testing.assert_array_equal(cp.abs(z).get(), np.abs(np.array([1 + 2j, -3 - 4j])))
    assert cp.allclose(z, z).shape == ()  # a 0-d array, as CuPy returns


def test_contiguous_slice_is_a_view_strided_slice_a_copy():
    a = cp.arange(12, dtype=cp.float64).reshape(3, 4)
    row = a[1]
    assert row.ptr == a.ptr + 4 * 8
    row[...] = -1  # writes through to `a`
    np.testing.assert_array_equal(a.get()[1], [-1, -1, -1, -1])
    with pytest.warns(StridedCopyWarning, match="returns a copy"):
        col = a[:, 1]
    np.testing.assert_array_equal(col.get(), [1, -1, 9])
    a[:, 0] = 7  # assignment through the original works for any index
    np.testing.assert_array_equal(a.get()[:, 0], [7, 7, 7])
    mask = a > 8
    np.testing.assert_array_equal(a[mask].get(), a.get()[a.get() > 8])


def test_astype_reshape_copy():
    a = cp.arange(6, dtype=cp.int32)
    f = a.astype(cp.float64)
    assert f.dtype == np.float64 and f.ptr != a.ptr
    r = a.reshape(2, -1)
    assert r.shape == (2, 3) and r.ptr == a.ptr
    c = a.copy()
    c[0] = 100
    assert int(a[0]) == 0
    with pytest.raises(ValueError, match="cannot reshape array of size 6 into shape"):
        a.reshape(4, -1)


def test_ndarray_over_memory_pointer():
    mem = cp.cuda.memory.alloc(8 * 4)
    src = cp.arange(8, dtype=cp.float32)
    mem.copy_from(src.data, 8 * 4)
    b = cp.ndarray((8,), cp.float32, mem)
    assert b.ptr == mem.ptr
    np.testing.assert_array_equal(b.get(), np.arange(8, dtype=np.float32))
    with pytest.raises(ValueError, match="needs 64 bytes"):
        cp.ndarray((8,), cp.float64, mem)
    with pytest.raises(TypeError, match="MemoryPointer"):
        cp.ndarray((8,), cp.float32, 1234)


def test_random_is_seeded_and_numpy_backed():
    cp.random.seed(7)
    a = cp.random.random((5,), dtype=cp.float32)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a.get(), np.random.RandomState(7).random_sample(5).astype(np.float32))
    cp.random.seed(7)
    np.testing.assert_array_equal(cp.random.random((5,), dtype=cp.float32).get(), a.get())
    r = cp.random.random_integers(0, 3, 1000).get()
    assert r.min() == 0 and r.max() == 3


def test_numpy_functions_under_cupy_names():
    a = cp.linspace(0, 1, 5)
    assert isinstance(a, tlpsim.ndarray)
    np.testing.assert_array_equal(cp.sqrt(a).get(), np.sqrt(np.linspace(0, 1, 5)))
    assert cp.get_array_module(a) is cp and cp.get_array_module(np.zeros(1)) is np
    with pytest.raises(AttributeError, match="ElementwiseKernel: write the kernel as a RawKernel"):
        cp.ElementwiseKernel  # noqa: B018


def test_defaults_are_cupys():
    assert cp.zeros(3).dtype == np.float64 and cp.empty(2).dtype == np.float64


def test_ndarray_over_another_array_counts_its_bytes():
    base = cp.zeros(4, dtype=cp.float64)  # 32 bytes
    assert cp.ndarray((8,), cp.float32, base).ptr == base.ptr
    with pytest.raises(ValueError, match="needs 40 bytes; the memory at 0x[0-9a-f]+ has 32"):
        cp.ndarray((10,), cp.float32, base)


def test_iteration_yields_row_views():
    a = cp.arange(6, dtype=cp.int32).reshape(3, 2)
    rows = list(a)
    assert [r.ptr - a.ptr for r in rows] == [0, 8, 16] and rows[2].shape == (2,)
    rows[1][...] = 9
    np.testing.assert_array_equal(a.get(), [[0, 1], [9, 9], [4, 5]])
    assert [int(x) for x in cp.arange(3, dtype=cp.int64)] == [0, 1, 2]
