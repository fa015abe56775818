"""Launch arguments: every kernel argument is checked against its PTX parameter,
grid and block against CUDA's limits, shared memory against the per-block limit,
arrays against the launching device — in functional and timing mode alike."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tlpsim
from tlpsim.errors import TlpsimError

AXPY = r'''
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}'''


@pytest.fixture(params=["functional", "timing"])
def dev(request):
    with tlpsim.Device(mode=request.param, trace_cache=False) as d:
        yield d


@pytest.fixture
def axpy(dev):
    return tlpsim.RawKernel(AXPY, "axpy")


def _xy(n=64):
    return tlpsim.asarray(np.arange(n, dtype=np.float32)), tlpsim.zeros(n, np.float32)


def test_array_of_another_device_is_rejected_naming_both():
    d1 = tlpsim.Device()
    with d1:
        x = tlpsim.zeros(64, np.float32)
    with tlpsim.Device() as d2:
        k = tlpsim.RawKernel(AXPY, "axpy")
        y = tlpsim.zeros(64, np.float32)
        with pytest.raises(TlpsimError) as exc:
            k((1,), (64,), (np.float32(1), x, y, np.int32(64)))
    msg = str(exc.value)
    assert f"allocated on {d1.name}" in msg and f"launched on {d2.name}" in msg
    assert "argument 1 of kernel axpy (parameter 'axpy_param_1'" in msg


@pytest.mark.parametrize("bad, needle", [
    ((np.int32(2),), "argument 0 of kernel axpy (parameter 'axpy_param_0', .f32 (4 bytes)): np.int32 for a float "
                     "parameter would reinterpret its bits; pass (e.g. np.float32(x))"),
    ((np.float64(2),), "np.float64 has 8 bytes; pass a 4-byte value (e.g. np.float32(x))"),
    ((np.float32(2), "x"), "argument 1 of kernel axpy (parameter 'axpy_param_1', .u64 (8 bytes)): cannot pass a str"),
])
def test_wrong_scalar_types_name_the_parameter(axpy, bad, needle):
    x, y = _xy()
    args = list((np.float32(2), x, y, np.int32(64)))
    args[: len(bad)] = bad
    with pytest.raises(TlpsimError) as exc:
        axpy((1,), (64,), tuple(args))
    assert needle in str(exc.value)


def test_python_float_for_an_int_and_width_and_range_errors(axpy):
    x, y = _xy()
    with pytest.raises(TlpsimError, match=r"argument 3 .*'axpy_param_3', .u32 .*a Python float \(64.0\) for an "
                                          "integer parameter"):
        axpy((1,), (64,), (np.float32(2), x, y, 64.0))
    with pytest.raises(TlpsimError, match="np.int64 has 8 bytes; pass a 4-byte value"):
        axpy((1,), (64,), (np.float32(2), x, y, np.int64(64)))
    with pytest.raises(TlpsimError, match="4294967296 does not fit in 32 bits"):
        axpy((1,), (64,), (np.float32(2), x, y, 2**32))


def test_argument_count_lists_the_parameters(axpy):
    x, y = _xy()
    with pytest.raises(TlpsimError, match=r"kernel axpy takes 4 argument\(s\), 3 given \(parameters: axpy_param_0: "
                                          r"\.f32 \(4 bytes\), axpy_param_1: \.u64"):
        axpy((1,), (64,), (np.float32(2), x, y))
    with pytest.raises(TlpsimError, match="takes 4 argument"):
        axpy((1,), (64,), (np.float32(2), x, y, 64, 5))
    with pytest.raises(TlpsimError, match="arguments must be a tuple"):
        axpy((1,), (64,), np.float32(2))


def test_cupy_conversions_that_keep_the_value(axpy):
    x, y = _xy()
    axpy((1,), (64,), (2.0, x, y, 64))               # Python float -> .f32, Python int -> .u32
    axpy((1,), (64,), (np.float32(1), x, y, np.uint32(64)))
    axpy((1,), (64,), (1, x, y, np.int32(64)))       # Python int -> float parameter: converted
    np.testing.assert_array_equal(y.get(), 4 * np.arange(64, dtype=np.float32))


def test_null_pointer_and_negative_int():
    src = r'''extern "C" __global__ void k(int* p, int* q, int v) { if (p == 0) q[0] = v; }'''
    with tlpsim.Device():
        k = tlpsim.RawKernel(src, "k")
        q = tlpsim.zeros(1, np.int32)
        k((1,), (1,), (None, q, -5))
        assert q.get()[0] == -5


def test_complex_scalars_and_structs_by_value():
    src = r'''
    #include <cuComplex.h>
    struct Pair { int a; float b; double c; };
    extern "C" __global__ void cplx(cuFloatComplex zf, cuDoubleComplex zd, Pair p, double* out) {
        out[0] = cuCrealf(zf); out[1] = cuCimagf(zf); out[2] = cuCreal(zd); out[3] = cuCimag(zd);
        out[4] = p.a; out[5] = p.b; out[6] = p.c;
    }'''
    pair = np.dtype([("a", np.int32), ("b", np.float32), ("c", np.float64)], align=True)
    with tlpsim.Device():
        k = tlpsim.RawKernel(src, "cplx")
        out = tlpsim.zeros(7, np.float64)
        k((1,), (1,), (np.complex64(1.5 - 2j), 3 + 4j, np.array([(7, 0.5, -1.25)], dtype=pair), out))
        np.testing.assert_array_equal(out.get(), [1.5, -2, 3, 4, 7, 0.5, -1.25])
        k((1,), (1,), (1.5 - 2j, np.complex128(3 + 4j), np.zeros((), dtype=pair)[()], out))
        np.testing.assert_array_equal(out.get(), [1.5, -2, 3, 4, 0, 0, 0])
        with pytest.raises(TlpsimError, match=r"argument 2 of kernel cplx \(parameter 'cplx_param_2', \.b8\[16\] "
                                              r"\(16 bytes\)\): the value has 8 bytes"):
            k((1,), (1,), (0j, 0j, np.zeros(1, dtype=[("a", np.int64)]), out))
        with pytest.raises(TlpsimError, match="only with one element, this one has 2"):
            k((1,), (1,), (0j, 0j, np.zeros(2, dtype=pair), out))


@pytest.mark.parametrize("grid, block, needle", [
    ((1.5,), (64,), "grid must be an int or a tuple of 1-3 ints, got (1.5,)"),
    ("12", (64,), "grid must be an int or a tuple of 1-3 ints, got '12'"),
    ((1, 65536), (64,), "grid y = 65536 exceeds CUDA's limit of 65535"),
    ((1, 1, 70000), (64,), "grid z = 70000 exceeds CUDA's limit of 65535"),
    ((2**31,), (64,), "grid x = 2147483648 exceeds CUDA's limit of 2147483647"),
    ((1,), (1025,), "block x = 1025 exceeds CUDA's limit of 1024"),
    ((1,), (32, 32, 2), "a block of 32 x 32 x 2 = 2048 threads exceeds CUDA's limit of 1024 threads per block"),
    ((1,), (1, 1, 65), "block z = 65 exceeds CUDA's limit of 64"),
    ((0,), (64,), "grid dimensions must be positive"),
    ((1,), (True,), "block must be an int or a tuple of 1-3 ints"),
])
def test_grid_and_block_limits(axpy, grid, block, needle):
    x, y = _xy()
    with pytest.raises(TlpsimError) as exc:
        axpy(grid, block, (np.float32(1), x, y, np.int32(64)))
    assert needle in str(exc.value)


def test_dynamic_shared_memory_limits(dev):
    src = r'''extern "C" __global__ void dyn(float* out) {
        extern __shared__ float buf[]; buf[threadIdx.x] = threadIdx.x; __syncthreads();
        out[threadIdx.x] = buf[threadIdx.x]; }'''
    k = tlpsim.RawKernel(src, "dyn")
    out = tlpsim.zeros(32, np.float32)
    with pytest.raises(TlpsimError, match="shared_mem must be >= 0 bytes, got -4"):
        k((1,), (32,), (out,), shared_mem=-4)
    with pytest.raises(TlpsimError, match=r"1048576 bytes of dynamic shared memory plus 0 static exceed CUDA's "
                                          r"default per-block limit of 49152 bytes \(48 KiB\); set "
                                          r"kernel.max_dynamic_shared_size_bytes"):
        k((1,), (32,), (out,), shared_mem=1 << 20)
    with pytest.raises(TlpsimError, match="shared_mem must be an int"):
        k((1,), (32,), (out,), shared_mem=12.5)
    with pytest.raises(TlpsimError, match="max_dynamic_shared_size_bytes must be an int from 0 to"):
        k.max_dynamic_shared_size_bytes = 1 << 20
    k((1,), (32,), (out,), shared_mem=128)
    np.testing.assert_array_equal(out.get(), np.arange(32, dtype=np.float32))


def test_opting_in_to_more_dynamic_shared_memory():
    src = r'''extern "C" __global__ void dyn(float* out) {
        extern __shared__ float buf[]; buf[threadIdx.x + 16000] = 2.f; out[threadIdx.x] = buf[threadIdx.x + 16000]; }'''
    with tlpsim.Device():
        k = tlpsim.RawKernel(src, "dyn")
        out = tlpsim.zeros(32, np.float32)
        k.max_dynamic_shared_size_bytes = 96 * 1024
        k((1,), (32,), (out,), shared_mem=80 * 1024)
        assert (out.get() == 2).all()
        with pytest.raises(TlpsimError, match=r"the kernel's max_dynamic_shared_size_bytes \(98304\)"):
            k((1,), (32,), (out,), shared_mem=97 * 1024)


def test_raw_kernel_pickles_after_a_launch():
    with tlpsim.Device():
        k = tlpsim.RawKernel(AXPY, "axpy")
        x, y = _xy()
        k((1,), (64,), (np.float32(1), x, y, np.int32(64)))
        k.max_dynamic_shared_size_bytes = 50000
        k2 = pickle.loads(pickle.dumps(k))
        assert k2.name == "axpy" and k2.max_dynamic_shared_size_bytes == 50000
        k2((1,), (64,), (np.float32(1), x, y, np.int32(64)))
        np.testing.assert_array_equal(y.get(), 2 * np.arange(64, dtype=np.float32))
        mod = tlpsim.RawModule(code=AXPY)
        f = mod.get_function("axpy")
        f((1,), (64,), (np.float32(1), x, y, np.int32(64)))
        assert pickle.loads(pickle.dumps(f)).kernel.name == "axpy"
        assert pickle.loads(pickle.dumps(mod)).get_function("axpy").name == "axpy"


def _run_in_worker(k):
    with tlpsim.Device():
        x, y = _xy()
        k((1,), (64,), (np.float32(3), x, y, np.int32(64)))
        return float(y.get().sum())


def test_raw_kernel_through_a_multiprocessing_pool():
    import multiprocessing

    with tlpsim.Device():
        k = tlpsim.RawKernel(AXPY, "axpy")
        x, y = _xy()
        k((1,), (64,), (np.float32(1), x, y, np.int32(64)))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map(_run_in_worker, [k, k]) == [3 * 2016.0] * 2


TEMPLATES = r'''
template <typename T, int K>
__global__ void scale(T* p, int n) { int i = threadIdx.x; if (i < n) p[i] *= (T)K; }
namespace ns { template <typename T> __global__ void fill(T* p, T v) { p[threadIdx.x] = v; } }
'''


def test_name_expressions_find_template_kernels():
    with tlpsim.Device():
        mod = tlpsim.RawModule(code=TEMPLATES, name_expressions=["scale<float, 3>", "ns::fill<unsigned int>",
                                                                   "scale<int, -2>"])
        assert mod.get_lowered_name("scale<float, 3>") == "_Z5scaleIfLi3EEvPT_i"
        a = tlpsim.asarray(np.arange(32, dtype=np.float32))
        mod.get_function("scale<float, 3>")((1,), (32,), (a, np.int32(32)))
        np.testing.assert_array_equal(a.get(), 3 * np.arange(32, dtype=np.float32))
        b = tlpsim.asarray(np.arange(32, dtype=np.int32))
        mod.get_function("scale<int, -2>")((1,), (32,), (b, np.int32(32)))
        np.testing.assert_array_equal(b.get(), -2 * np.arange(32, dtype=np.int32))
        u = tlpsim.zeros(32, np.uint32)
        mod.get_function("ns::fill<unsigned int>")((1,), (32,), (u, np.uint32(9)))
        assert (u.get() == 9).all()
        with pytest.raises(TlpsimError, match="'scale<double, 1>' was not given in name_expressions"):
            mod.get_lowered_name("scale<double, 1>")
        # a RawKernel named by a template expression is instantiated the same way
        k = tlpsim.RawKernel(TEMPLATES, "scale<float, 3>")
        k((1,), (32,), (a, np.int32(32)))
        np.testing.assert_array_equal(a.get(), 9 * np.arange(32, dtype=np.float32))


def test_name_expression_that_names_nothing():
    with tlpsim.Device():
        with pytest.raises(TlpsimError, match="scale<float>"):
            tlpsim.RawModule(code=TEMPLATES, name_expressions=["scale<float>"])
        with pytest.raises(TlpsimError, match="is not a kernel name"):
            tlpsim.RawModule(code=TEMPLATES, name_expressions=["x; int y"])


GRID_SYNC = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void twophase(const int* in, int* partial, int* out, int n) {
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    if (i < n) partial[i] = in[i] * 2;
    grid.sync();
    if (i < n) out[i] = partial[(i + 1) % n];   // reads what another CTA wrote before the barrier
}'''


def test_cooperative_grid_sync():
    n = 256
    with tlpsim.Device():
        k = tlpsim.RawKernel(GRID_SYNC, "twophase", enable_cooperative_groups=True)
        src = tlpsim.asarray(np.arange(n, dtype=np.int32))
        part, out = tlpsim.zeros(n, np.int32), tlpsim.zeros(n, np.int32)
        k((4,), (64,), (src, part, out, np.int32(n)))
        np.testing.assert_array_equal(out.get(), 2 * np.roll(np.arange(n, dtype=np.int32), -1))


def test_grid_sync_without_a_cooperative_launch_says_so():
    with tlpsim.Device():
        k = tlpsim.RawKernel(GRID_SYNC, "twophase")
        src = tlpsim.zeros(64, np.int32)
        with pytest.raises(TlpsimError, match="enable_cooperative_groups=True"):
            k((2,), (32,), (src, tlpsim.zeros(64, np.int32), tlpsim.zeros(64, np.int32), np.int32(64)))
