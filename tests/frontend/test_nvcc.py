"""compile_cuda & friends against the pinned nvcc/ptxas 13.5.37 wheels.

Register counts are exact for this toolkit release (pyproject pins it)."""

from __future__ import annotations

import json
import textwrap
import warnings

import pytest

from tlpsim.cachefile import CacheWarning
from tlpsim.errors import CompileError, TlpsimError, ToolkitNotFound
from tlpsim.frontend.nvcc import (
    PtxasWarning,
    cache_dir,
    compile_cuda,
    compile_cuda_file,
    compile_cuda_source,
    ptx_resources_for_file,
)
from tlpsim.frontend.toolkit import find_toolkit, toolkit_version

KERNELS = textwrap.dedent(
    """\
    __global__ void vecadd(const float* a, const float* b, float* c, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[i] + b[i];
    }
    __global__ void reduce(const float* in, float* out) {
        __shared__ float s[256];
        int t = threadIdx.x;
        s[t] = in[blockIdx.x * 256 + t];
        __syncthreads();
        for (int k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
        if (t == 0) out[blockIdx.x] = s[0];
    }
    """
)

PROGRAM = textwrap.dedent(
    """\
    #include <cstdio>
    #include <cuda_runtime.h>
    #include "scale.h"

    __global__ void scale(float* x, int n) {
        extern __shared__ float tile[];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        tile[threadIdx.x] = i < n ? x[i] : 0.0f;
        __syncthreads();
        if (i < n) x[i] = tile[threadIdx.x] * SCALE;
    }

    int main() {
        float* d = nullptr;
        cudaMalloc(&d, 1024 * sizeof(float));
        scale<<<4, 256, 256 * sizeof(float)>>>(d, 1024);
        cudaDeviceSynchronize();
        printf("done\\n");
        cudaFree(d);
        return 0;
    }
    """
)

HEAVY = textwrap.dedent(
    """\
    __global__ void heavy(const float* in, float* out) {
        float r[48];
    #pragma unroll
        for (int i = 0; i < 48; ++i) r[i] = in[threadIdx.x + i * 1024];
    #pragma unroll
        for (int j = 0; j < 8; ++j)
    #pragma unroll
            for (int i = 0; i < 48; ++i) r[i] = r[i] * r[(i + j + 1) % 48] + 1.0f;
        float s = 0;
    #pragma unroll
        for (int i = 0; i < 48; ++i) s += r[i] * (i + 1);
        out[threadIdx.x] = s;
    }
    """
)


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("TLPSIM_CACHE_DIR", str(root))
    monkeypatch.delenv("TLPSIM_CUDA_HOME", raising=False)
    return root / "ptx"


def test_compile_source_text_and_cache(cache_env):
    assert cache_dir() == cache_env
    r = compile_cuda(KERNELS)
    assert r.from_cache is False
    assert r.source_name == "<string>"
    assert r.arch == "sm_80"
    assert r.toolkit_version == toolkit_version() == "13.5.37"
    assert r.command[0] == str(find_toolkit().nvcc)
    assert r.command[1:] == ["-ptx", "-arch=sm_80", "-O3", "--std=c++17", "source.cu", "-o", "out.ptx"]
    assert ".target sm_80" in r.ptx
    assert ".visible .entry _Z6vecaddPKfS0_Pfi(" in r.ptx
    assert r.kernels == ["_Z6reducePKfPf", "_Z6vecaddPKfS0_Pfi"]

    red = r.resources["_Z6reducePKfPf"]
    assert (red.registers, red.shared_bytes, red.barriers, red.local_bytes) == (12, 1024, 1, 0)
    assert red.cmem_banks == {0: 352 + 16} and red.is_entry and red.arch == "sm_80"
    vec = r.resources["_Z6vecaddPKfS0_Pfi"]
    assert (vec.registers, vec.shared_bytes, vec.barriers, vec.local_bytes) == (12, 0, 0, 0)
    assert vec.cmem_banks == {0: 380}
    files = list(cache_env.glob("*.json"))
    assert [f.name for f in files] == [f"{r.cache_key}.json"]

    again = compile_cuda(KERNELS)
    assert again.from_cache is True
    assert again.ptx == r.ptx and again.resources == r.resources and again.command == r.command
    assert again.module_resources == r.module_resources

    # any change of options/defines/maxrregcount/arch is a different cache entry
    opt = compile_cuda(KERNELS, options=["-DUNUSED=1"])
    assert opt.from_cache is False and opt.cache_key != r.cache_key
    assert opt.command[-4:] == ["-DUNUSED=1", "source.cu", "-o", "out.ptx"]
    assert compile_cuda(KERNELS, options=["-DUNUSED=1"]).from_cache is True
    # defines={"UNUSED": "1"} is the same command line as options=["-DUNUSED=1"]
    assert compile_cuda(KERNELS, defines={"UNUSED": "1"}).from_cache is True
    assert compile_cuda(KERNELS, defines={"UNUSED": "2"}).from_cache is False
    assert len(list(cache_env.glob("*.json"))) == 3
    # cache=False never reads the cache
    assert compile_cuda_source(KERNELS, cache=False).from_cache is False


def test_corrupt_cache_file_is_rebuilt(cache_env):
    vec = KERNELS.split("__global__ void reduce")[0]
    first = compile_cuda_source(vec, arch="sm_75")
    path = cache_env / f"{first.cache_key}.json"
    path.write_text('{"format": 2, "ptx": "trunc')
    with pytest.warns(CacheWarning, match=f"PTX cache entry {path} is unreadable"):
        second = compile_cuda_source(vec, arch="sm_75")
    assert second.from_cache is False
    assert second.ptx == first.ptx
    assert second.resources["_Z6vecaddPKfS0_Pfi"].registers == 12
    assert second.resources["_Z6vecaddPKfS0_Pfi"].arch == "sm_75"
    assert json.loads(path.read_text())["cache_key"] == first.cache_key
    assert compile_cuda_source(vec, arch="sm_75").from_cache is True
    assert not list(cache_env.glob("*.tmp"))


def test_compile_whole_program_file(cache_env, tmp_path):
    src_dir = tmp_path / "prog"
    src_dir.mkdir()
    (src_dir / "scale.h").write_text("#define SCALE 2.0f\n")
    cu = src_dir / "scale.cu"
    cu.write_text(PROGRAM)
    r = compile_cuda(cu)  # pathlib.Path -> file
    assert r.from_cache is False
    assert r.source_name == str(cu.resolve())
    assert f"-I{src_dir.resolve()}" in r.command
    assert r.command[-3:] == [str(cu.resolve()), "-o", "out.ptx"]
    assert r.kernels == ["_Z5scalePfi"]
    k = r.resources["_Z5scalePfi"]
    # dynamic shared memory only: no static smem
    assert (k.shared_bytes, k.barriers, k.local_bytes, k.spill_stores) == (0, 1, 0, 0)
    assert k.registers == 10
    assert "main" not in r.ptx  # host code is not in the PTX

    assert compile_cuda(str(cu)).from_cache is True  # str naming a file -> file
    # editing an included header invalidates the cache entry
    (src_dir / "scale.h").write_text("#define SCALE 3.0f\n")
    r3 = compile_cuda_file(cu)
    assert r3.from_cache is False
    assert "0f40400000" in r3.ptx  # 3.0f


def test_spills_under_maxrregcount(cache_env):
    free = compile_cuda_source(HEAVY, arch="sm_80")
    h = free.resources["_Z5heavyPKfPf"]
    assert h.local_bytes == 0 and not h.has_spills and h.registers > 24
    capped = compile_cuda_source(HEAVY, arch="sm_80", maxrregcount=24)
    assert capped.from_cache is False and capped.cache_key != free.cache_key
    assert "-maxrregcount=24" in capped.command
    assert "-maxrregcount=24" in capped.ptxas_command
    c = capped.resources["_Z5heavyPKfPf"]
    assert c.registers == 24
    assert c.local_bytes > 0 and c.spill_stores > 0 and c.spill_loads > 0
    assert c.cumulative_stack_bytes == c.local_bytes


def test_syntax_error_raises_compile_error(cache_env):
    with pytest.raises(CompileError) as info:
        compile_cuda("__global__ void bad(float* p) { p[0] = 1 }\n")
    err = info.value
    assert str(err).startswith("nvcc failed to compile <string>")
    assert 'source.cu(1): error: expected a ";"' in err.output
    assert 'source.cu(1): error: expected a ";"' in str(err)
    assert err.command[0].endswith("nvcc") and "-ptx" in err.command
    assert "command: " + " ".join(err.command) in str(err)
    assert not list(cache_env.glob("*.json"))


def test_missing_file_raises(cache_env, tmp_path):
    missing = tmp_path / "nope.cu"
    with pytest.raises(TlpsimError) as info:
        compile_cuda(str(missing))
    assert str(info.value) == f"CUDA source file '{missing}' does not exist"
    with pytest.raises(TlpsimError, match="does not exist"):
        compile_cuda(missing)
    with pytest.raises(TlpsimError, match="is a directory"):
        compile_cuda_file(tmp_path)


def test_invalid_arguments(cache_env):
    with pytest.raises(TlpsimError, match="invalid GPU architecture 'ampere'"):
        compile_cuda(KERNELS, arch="ampere")
    with pytest.raises(TlpsimError, match="pass arch="):
        compile_cuda(KERNELS, options=["-arch=sm_90"])
    with pytest.raises(TlpsimError, match="maxrregcount must be a positive integer"):
        compile_cuda(KERNELS, maxrregcount=0)


def test_toolkit_not_found_for_empty_cuda_home(cache_env, tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("TLPSIM_CUDA_HOME", str(empty))
    with pytest.raises(ToolkitNotFound) as info:
        compile_cuda(KERNELS)
    msg = str(info.value)
    assert msg.startswith(f"TLPSIM_CUDA_HOME={empty} is not a usable CUDA toolkit: missing {empty}/bin/nvcc")
    assert "nvidia-cuda-nvcc==13.5.37" in msg and "nvidia-nvvm==13.5.37" in msg


def test_ptx_resources_for_file(cache_env, tmp_path):
    r = compile_cuda_source(KERNELS, arch="sm_80")
    ptx80 = tmp_path / "k80.ptx"
    ptx80.write_text(r.ptx)
    res = ptx_resources_for_file(ptx80)  # arch from .target
    assert res == r.resources
    res90 = ptx_resources_for_file(ptx80, arch="sm_90")
    assert res90["_Z6reducePKfPf"].arch == "sm_90" and res90["_Z6reducePKfPf"].cmem_banks == {}

    old = tmp_path / "old.ptx"
    old.write_text(r.ptx.replace(".version 9.5", ".version 7.8").replace(".target sm_80", ".target sm_35"))
    # below sm_75 the cuda11 toolchain's ptxas 11.8 assembles it for its own target
    kepler = ptx_resources_for_file(old)
    assert kepler["_Z6reducePKfPf"].arch == "sm_35" and kepler["_Z6reducePKfPf"].shared_bytes == 1024
    older = tmp_path / "older.ptx"
    older.write_text(old.read_text().replace(".target sm_35", ".target sm_30"))
    with pytest.warns(PtxasWarning, match="cannot report resources for sm_30 .*cannot target sm_30"):
        assert ptx_resources_for_file(older) == {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = ptx_resources_for_file(old, arch="sm_75")
    assert est["_Z6reducePKfPf"].shared_bytes == 1024 and est["_Z6reducePKfPf"].arch == "sm_75"

    with pytest.raises(TlpsimError, match="does not exist"):
        ptx_resources_for_file(tmp_path / "missing.ptx")
    broken = tmp_path / "broken.ptx"
    broken.write_text(".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry f() { bogus; }\n")
    with pytest.raises(CompileError, match="Not a name of any known instruction: 'bogus'"):
        ptx_resources_for_file(broken)
