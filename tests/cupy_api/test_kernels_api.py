"""RawModule/RawKernel as CuPy has them: lazy compilation, CuPy's exceptions and messages,
kernel attributes, compile logs, pickling."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import tlpsim
import tlpsim.cupy as cp
from tlpsim.cuda_errors import CompileException, CUDADriverError

SUM = r'''
extern "C" __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    int unused;  // nvcc warns: the compile log is non-empty
    if (tid < n) y[tid] = x1[tid] + x2[tid];
}
'''
BROKEN = '''
#error precision not supported
extern "C" __global__ void k() {}
'''


@pytest.fixture(autouse=True)
def device():
    with tlpsim.Device(trace_cache=False) as dev:
        yield dev


def test_launch_and_compare():
    k = cp.RawKernel(SUM, "test_sum")
    x1 = cp.arange(100, dtype=cp.float32).reshape(10, 10)
    x2 = cp.ones((10, 10), dtype=cp.float32)
    y = cp.zeros((10, 10), dtype=cp.float32)
    k((10,), (10,), (x1, x2, y, 100))  # a Python int for `unsigned int`
    assert cp.allclose(y, x1 + x2)


def test_compilation_waits_for_first_use():
    mod = cp.RawModule(code=BROKEN)  # no compile yet, as in CuPy
    with pytest.raises(cp.cuda.compiler.CompileException, match="precision not supported") as exc:
        mod.get_function("k")
    assert isinstance(exc.value, tlpsim.TlpsimError)  # the CLI still reports it as a user error
    k = cp.RawKernel(BROKEN, "k")
    with pytest.raises(CompileException):
        k((1,), (1,), ())


def test_misuse_raises_cupys_types():
    with pytest.raises(TypeError, match="needs code="):
        cp.RawModule()
    with pytest.raises(TypeError, match="not both"):
        cp.RawModule(code=SUM, path="x.cu")
    with pytest.raises(ValueError, match="backend must be 'nvrtc' or 'nvcc'"):
        cp.RawModule(code=SUM, backend="hiprtc")
    with pytest.raises(ValueError, match="nvrtc"):
        cp.RawModule(code=SUM, backend="nvcc", name_expressions=["k<int>"])


def test_driver_errors_name_cuda_codes(tmp_path):
    mod = cp.RawModule(code=SUM)
    with pytest.raises(CUDADriverError, match="CUDA_ERROR_NOT_FOUND: named symbol not found") as exc:
        mod.get_function("no_such_kernel")
    assert exc.value.status == 500
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="CUDA_ERROR_FILE_NOT_FOUND"):
        cp.RawModule(path=str(tmp_path / "missing.cubin"))
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(b"\x7fELF")
    with pytest.raises(CUDADriverError, match="CUDA_ERROR_NO_BINARY_FOR_GPU.*compile with `nvcc -ptx`"):
        cp.RawModule(path=str(cubin))


def test_attributes_have_cudas_keys_and_ptxas_counts():
    k = cp.RawKernel(SUM, "test_sum")
    attrs = k.attributes
    res = k.program.resources[k.kernel.name]
    assert attrs["num_regs"] == res.registers > 0
    assert attrs["shared_size_bytes"] == 0 and attrs["local_size_bytes"] == res.local_bytes
    assert attrs["binary_version"] == 80 and attrs["max_threads_per_block"] == 1024
    assert attrs["max_dynamic_shared_size_bytes"] == 48 * 1024 and attrs["preferred_shared_memory_carveout"] == -1
    assert attrs["ptx_version"] >= 70 and attrs["cache_mode_ca"] == 0
    assert k.num_regs == res.registers


def test_compile_writes_the_compiler_log():
    log = io.StringIO()
    cp.RawKernel(SUM, "test_sum").compile(log_stream=log)
    assert "warning" in log.getvalue() and "unused" in log.getvalue()


def test_kernels_and_modules_pickle():
    k = pickle.loads(pickle.dumps(cp.RawKernel(SUM, "test_sum", enable_cooperative_groups=True)))
    assert k.enable_cooperative_groups
    x = cp.ones(8, dtype=cp.float32)
    y = cp.zeros(8, dtype=cp.float32)
    pickle.loads(pickle.dumps(cp.RawModule(code=SUM))).get_function("test_sum")((1,), (8,), (x, x, y, 8))
    np.testing.assert_array_equal(y.get(), np.full(8, 2, np.float32))


def test_compile_with_cache_is_memoized():
    m1 = cp.cuda.compiler.compile_with_cache(SUM)
    assert cp.cuda.compiler.compile_with_cache(SUM) is m1
    cp._util.clear_memo()
    assert cp.cuda.compiler.compile_with_cache(SUM) is not m1
