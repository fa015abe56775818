"""`tlpsim toolkit` and the legacy-build support of `tlpsim nvcc`: old architectures,
the compat headers (functions and cudaDeviceProp fields CUDA 13 removed), foreign CUDA
include folders, and a Rodinia-style Makefile (CUDA_DIR, -arch=sm_20, C host code
linked by gcc with -lcuda -lcudart) building and running unmodified."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tlpsim.config import load_config
from tlpsim.cudart import toolkit_dir
from tlpsim.cudart.nvcc import foreign_includes, modernize_arch
from tlpsim.cudart.props import attributes

from .conftest import PROGRAMS, TLPSIM, run_exec

HEADER = """struct __device_builtin__ cudaDeviceProp
{
    int          major;
    int          reserved[10];               /**< Reserved */
};
struct other { int reserved[3]; };
"""


@pytest.mark.parametrize("args, expected", [
    (["-arch=sm_20", "a.cu"], ["-arch=sm_80", "a.cu"]),
    (["-arch", "sm_13", "a.cu"], ["-arch", "sm_80", "a.cu"]),
    (["--gpu-name", "sm_13", "a.cu"], ["-arch", "sm_80", "a.cu"]),
    (["--gpu-architecture=compute_20", "--gpu-code=compute_20,sm_20,sm_21"],
     ["--gpu-architecture=compute_80", "--gpu-code=compute_80,sm_80"]),
    (["-gencode", "arch=compute_20,code=sm_20", "-gencode", "arch=compute_20,code=sm_21", "a.cu"],
     ["-gencode", "arch=compute_80,code=sm_80", "a.cu"]),
    (["-gencode=arch=compute_30,code=sm_30", "-gencode=arch=compute_80,code=sm_80"],
     ["-gencode=arch=compute_80,code=sm_80"]),
])
def test_old_architectures_become_sm_80(args, expected):
    out, warning = modernize_arch(args)
    assert out == expected
    old = sorted(set(re.findall(r"(?:sm|compute)_[0-3]\d", " ".join(args))))
    assert warning.startswith("tlpsim nvcc: ") and "compiling for sm_80 / compute_80" in warning
    assert sorted(re.findall(r"(?:sm|compute)_\d+", warning.split(" older ")[0])) == old


@pytest.mark.parametrize("args", [["-arch=sm_80", "a.cu"], ["-gencode", "arch=compute_75,code=sm_75"], ["a.cu"],
                                  ["-O2", "-Xptxas", "-v", "a.cu"]])
def test_current_architectures_are_kept(args):
    assert modernize_arch(args) == (args, None)


def test_compat_fields_take_reserved_words_of_the_same_struct():
    text = toolkit_dir.patch_driver_types(HEADER)
    body = text.split("struct other")[0]
    names = re.findall(r"int\s+(\w+);", body)
    assert names == ["major", *toolkit_dir.COMPAT_FIELDS]
    assert "int          reserved[2];" in body  # 10 - 8 words: same size
    assert text.endswith("struct other { int reserved[3]; };\n")


def test_unknown_headers_are_refused_by_name():
    with pytest.raises(toolkit_dir.ToolkitDirError, match=r"x/driver_types.h: no `int reserved\[N\];`"):
        toolkit_dir.patch_driver_types("struct __device_builtin__ cudaDeviceProp\n{\n int a;\n};\n",
                                       "x/driver_types.h")
    with pytest.raises(toolkit_dir.ToolkitDirError, match="y.h: its include guard"):
        toolkit_dir.patch_runtime_api("#ifndef X\n#endif\n", "y.h")


def test_toolkit_is_laid_out_as_cudas():
    proc = subprocess.run([*TLPSIM, "toolkit"], capture_output=True, text=True, check=True)
    root = Path(proc.stdout.strip())
    assert root == toolkit_dir.ROOT
    assert os.access(root / "bin" / "nvcc", os.X_OK) and (root / "bin" / "ptxas").exists()
    assert (root / "include" / "cuda_runtime.h").is_file() and (root / "include" / "cuda.h").is_file()
    assert '#include "tlpsim_cuda_compat.h"' in (root / "include" / "cuda_runtime_api.h").read_text()
    assert "int          clockRate;" in (root / "include" / "driver_types.h").read_text()
    lib = root / "lib64"
    assert "-lstdc++" in (lib / "libcudart.so").read_text()
    assert (lib / "libcudart.so.13").resolve() == toolkit_dir.library().resolve()
    assert (lib / "libcuda.so").resolve() == (lib / "libcuda.so.1").resolve()
    assert (lib / "stubs" / "libcuda.so").resolve() == (lib / "libcuda.so.1").resolve()
    assert (root / "lib").resolve() == lib.resolve()
    assert toolkit_dir.ensure() == root  # current: not made again
    assert not list(root.parent.glob(".toolkit-*"))


def test_foreign_cuda_include_dirs_are_named(tmp_path):
    foreign = tmp_path / "cuda-10.2" / "include"
    foreign.mkdir(parents=True)
    (foreign / "cuda_runtime_api.h").write_text("#define CUDART_VERSION 10020\n")
    own = [toolkit_dir.include_dir()]
    args = [f"-I{foreign}", "-I", str(foreign), f"-I{own[0]}", "-I/nonexistent", "a.cu"]
    assert foreign_includes(args, own) == [(str(foreign), "10.2")]


@pytest.fixture(scope="module")
def legacy_build(tmp_path_factory):
    work = tmp_path_factory.mktemp("legacy") / "legacy"
    shutil.copytree(PROGRAMS / "legacy", work)
    root = subprocess.run([*TLPSIM, "toolkit"], capture_output=True, text=True, check=True).stdout.strip()
    proc = subprocess.run(["make", f"CUDA_DIR={root}"], cwd=work, capture_output=True, text=True, timeout=600, check=False)
    return work, proc


def test_rodinia_style_makefile_builds_unmodified(legacy_build):
    _, proc = legacy_build
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("tlpsim nvcc:")]
    assert warnings == [("tlpsim nvcc: sm_20 is older than CUDA 13.5 can compile for (sm_75 and newer); compiling "
                         "for sm_80 / compute_80 instead, the architecture tlpsim executes")]
    assert re.search(r"^gcc .* -lcuda -lcudart -lm$", proc.stdout, re.MULTILINE)  # linked by gcc, not nvcc


@pytest.mark.parametrize("binary", ["legacy", "legacy_nvcc"])  # linked by gcc; by nvcc with -lcuda and no -L
def test_legacy_program_reads_removed_fields_and_calls(legacy_build, binary):
    work, _ = legacy_build
    r = run_exec("--", f"./{binary}", cwd=work)
    assert r.returncode == 0, r.stdout + r.stderr
    a = attributes(load_config("gtx480"))
    assert r.stdout.splitlines() == [
        f"clockRate {a['ClockRate']} kHz (attribute {a['ClockRate']})",
        f"memoryClockRate {a['MemoryClockRate']} kHz",
        "deviceOverlap 1 kernelExecTimeoutEnabled 0 computeMode 0",
        "maxTexture1DLinear 134217728",
        "PASS"]
    assert "square  8x1x1  128x1x1" in r.stderr


def test_another_cudas_include_dir_no_longer_shadows_cuda13(tmp_path):
    """`-I` of CUDA 11.8's headers (the pinned cu11 runtime wheel) used to break the host
    code (`macro "__cudaLaunch" requires 2 arguments`); it builds, and is named."""
    from tlpsim.frontend.toolkit import nvidia_package_dirs

    cu11 = next((d / "cuda_runtime" / "include" for d in nvidia_package_dirs()
                 if (d / "cuda_runtime" / "include" / "cuda_runtime_api.h").is_file()), None)
    if cu11 is None:
        pytest.skip("the pinned nvidia-cuda-runtime-cu11 wheel is not installed")
    src = tmp_path / "a.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k(int *x) { x[threadIdx.x] = 1; }\n"
                   "void run(int *d) { k<<<1, 32>>>(d); cudaThreadSynchronize(); }\n")
    proc = subprocess.run([*TLPSIM, "nvcc", f"-I{cu11}", "-c", str(src), "-o", str(tmp_path / "a.o")],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"tlpsim nvcc: -I{cu11} holds the headers of another CUDA toolkit (CUDA 11.8)" in proc.stderr


def test_toolkit_is_made_again_when_stale(tmp_path):
    root = tmp_path / "toolkit"
    assert toolkit_dir.ensure(root) == root
    stamp = (root / toolkit_dir.STAMP).read_text()
    (root / toolkit_dir.STAMP).write_text(stamp.replace('"digest": "', '"digest": "old'))
    (root / "include" / "driver_types.h").unlink()
    assert toolkit_dir.ensure(root) == root
    assert (root / toolkit_dir.STAMP).read_text() == stamp
    assert "clockRate" in (root / "include" / "driver_types.h").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toolkit"]
