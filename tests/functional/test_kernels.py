"""Whole kernels through the host API, checked against NumPy references."""

import numpy as np
import pytest

import tlpsim
from tlpsim.errors import KernelError, TlpsimError


@pytest.fixture
def dev():
    with tlpsim.Device() as d:
        yield d


def test_vecadd_and_launch_record(dev):
    src = r'''
    extern "C" __global__ void vecadd(const float* a, const float* b, float* c, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[i] + b[i];
    }'''
    k = tlpsim.RawKernel(src, "vecadd")
    n = 1000
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    da, db, dc = tlpsim.asarray(a), tlpsim.asarray(b), tlpsim.zeros(n, np.float32)
    rec = k((4,), (256,), (da, db, dc, np.int32(n)))
    np.testing.assert_array_equal(dc.get(), a + b)
    assert rec is dev.launches[-1] and rec.grid == (4, 1, 1) and rec.block == (256, 1, 1)
    assert rec.resources.registers > 0
    tr = rec.trace
    assert tr.n_warps == 32
    # threads 1000..1023 are masked off after the bounds check
    assert tr.thread_instructions < 32 * tr.warp_instructions
    assert tr.summary()["mix"]["mem"] > 0


def test_divergence_nested_and_loops(dev):
    src = r'''
    __global__ void k(int* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        int acc = 0;
        if (i % 3 == 0) {
            for (int j = 0; j < i % 7; ++j) { if (j == 4) break; acc += j; }
        } else if (i % 3 == 1) {
            acc = -i;
            if (i & 4) acc *= 2;
        } else {
            int j = 0;
            do { acc += i; j++; } while (j < (i & 3));
        }
        out[i] = acc;
    }'''
    n = 300
    k = tlpsim.RawKernel(src, "k")
    out = tlpsim.zeros(n, np.int32)
    k((3,), (128,), (out, np.int32(n)))
    ref = np.zeros(n, np.int32)
    for i in range(n):
        acc = 0
        if i % 3 == 0:
            for j in range(i % 7):
                if j == 4:
                    break
                acc += j
        elif i % 3 == 1:
            acc = -i * (2 if i & 4 else 1)
        else:
            j = 0
            while True:
                acc += i
                j += 1
                if not j < (i & 3):
                    break
        ref[i] = acc
    np.testing.assert_array_equal(out.get(), ref)


def test_shared_reduction_with_barriers_and_shuffles(dev):
    src = r'''
    __global__ void reduce(const float* x, float* partial, int n) {
        __shared__ float s[256];
        int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
        s[t] = i < n ? x[i] : 0.f;
        __syncthreads();
        for (int w = blockDim.x / 2; w >= 32; w >>= 1) { if (t < w) s[t] += s[t + w]; __syncthreads(); }
        float v = t < 32 ? s[t] : 0.f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        if (t == 0) partial[blockIdx.x] = v;
    }'''
    k = tlpsim.RawKernel(src, "reduce")
    n = 5000
    x = np.arange(n, dtype=np.float32) % 17
    blocks = (n + 255) // 256
    part = tlpsim.zeros(blocks, np.float32)
    k((blocks,), (256,), (tlpsim.asarray(x), part, np.int32(n)))
    ref = np.array([x[b * 256:(b + 1) * 256].sum() for b in range(blocks)], np.float32)
    np.testing.assert_allclose(part.get(), ref, rtol=1e-6)


def test_histogram_atomics_dynamic_shared(dev):
    src = r'''
    __global__ void hist(const unsigned* data, unsigned* bins, int n, int nbins) {
        extern __shared__ unsigned local[];
        for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
        __syncthreads();
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
            atomicAdd(&local[data[i] % nbins], 1u);
        __syncthreads();
        for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&bins[b], local[b]);
    }'''
    k = tlpsim.RawKernel(src, "hist")
    n, nbins = 20000, 37
    data = np.random.default_rng(2).integers(0, 1 << 20, n, dtype=np.uint32)
    bins = tlpsim.zeros(nbins, np.uint32)
    k((8,), (128,), (tlpsim.asarray(data), bins, np.int32(n), np.int32(nbins)), shared_mem=nbins * 4)
    np.testing.assert_array_equal(bins.get(), np.bincount(data % nbins, minlength=nbins))


def test_device_function_calls_and_local_arrays(dev):
    src = r'''
    __device__ __noinline__ float poly(float x, int k) { float r = 0; for (int i = 0; i <= k; ++i) r = r * x + i; return r; }
    __global__ void k(const int* idx, float* out) {
        float tmp[16];
        int t = threadIdx.x;
        for (int i = 0; i < 16; ++i) tmp[i] = poly((float)i, t % 4);
        out[t] = tmp[idx[t] & 15];
    }'''
    k = tlpsim.RawKernel(src, "k")
    idx = np.random.default_rng(3).integers(0, 1000, 64).astype(np.int32)
    out = tlpsim.zeros(64, np.float32)
    k((1,), (64,), (tlpsim.asarray(idx), out))

    def poly(x, kk):
        r = np.float32(0)
        for i in range(kk + 1):
            r = np.float32(r * np.float32(x) + np.float32(i))
        return r

    ref = np.array([poly(idx[t] & 15, t % 4) for t in range(64)], np.float32)
    np.testing.assert_array_equal(out.get(), ref)


def test_out_of_bounds_access_names_kernel_cta_thread_line(dev):
    src = r'''
    __global__ void oob(float* a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i * 4] = 1.0f; }'''
    k = tlpsim.RawKernel(src, "oob")
    a = tlpsim.zeros(100, np.float32)
    with pytest.raises(KernelError) as info:
        k((2,), (32,), (a,))
    msg = str(info.value)
    assert "illegal memory access" in msg and "oob" in msg and "thread (25, 0, 0)" in msg
    assert "CTA (0, 0, 0)" in msg and "line" in msg
    assert info.value.address == a.ptr + 100 * 4


def test_barrier_deadlock_is_reported(dev):
    src = r'''
    __global__ void dl(int* x) {
        if (threadIdx.x < 32) asm volatile("bar.sync 1;"); else asm volatile("bar.sync 2;");
        x[threadIdx.x] = 1;
    }'''
    k = tlpsim.RawKernel(src, "dl")
    with pytest.raises(KernelError, match="can never complete"):
        k((1,), (64,), (tlpsim.zeros(64, np.int32),))


def test_instruction_budget(dev):
    src = r'''
    __global__ void spin(volatile int* flag) { int i = 0; while (flag[0] == 0) { flag[1] = i++; } }'''
    k = tlpsim.RawKernel(src, "spin")
    dev.budget = 10_000
    with pytest.raises(KernelError, match="instruction budget of 10,000 warp instructions.* in kernel spin,"):
        k((1,), (32,), (tlpsim.zeros(2, np.int32),))


def test_argument_errors(dev):
    src = 'extern "C" __global__ void k(float* a, int n) { a[0] = n; }'
    k = tlpsim.RawKernel(src, "k")
    with pytest.raises(TlpsimError, match="takes 2 argument"):
        k((1,), (1,), (tlpsim.zeros(1),))
    with pytest.raises(TlpsimError, match="asarray"):
        k((1,), (1,), (np.zeros(4, np.float32), np.int32(1)))


def test_streams_recorded(dev):
    src = 'extern "C" __global__ void k(int* a) { a[threadIdx.x] += 1; }'
    k = tlpsim.RawKernel(src, "k")
    a = tlpsim.zeros(32, np.int32)
    s1, s2 = tlpsim.cuda.Stream(), tlpsim.cuda.Stream()
    with s1:
        k((1,), (32,), (a,))
    k((1,), (32,), (a,), stream=s2)
    assert dev.launches[-2].stream == s1.id and dev.launches[-1].stream == s2.id != s1.id
    np.testing.assert_array_equal(a.get(), np.full(32, 2))


def test_cupy_style_example_runs_unchanged():
    import runpy
    from pathlib import Path

    runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "cupy_rawmodule.py"), run_name="__main__")
