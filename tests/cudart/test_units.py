"""Unit tests of tlpsim exec's parts that need no program: nvcc option rewriting,
fat-binary parsing, the error table against CUDA's header, the built library's
exports, size parsing, and the exit-status wording."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess

import pytest

from tlpsim.cli_exec import parse_size
from tlpsim.cudart import build, errors
from tlpsim.cudart.exec import describe_exit, split_command
from tlpsim.cudart.fatbin import FatbinError, parse_fatbin
from tlpsim.cudart.nvcc import with_ptx
from tlpsim.errors import TlpsimError
from tlpsim.frontend.toolkit import find_toolkit


@pytest.mark.parametrize("args, expected", [
    (["a.cu"], ["-arch=sm_80", "a.cu"]),
    (["-arch=sm_86", "a.cu"], ["-arch=sm_86", "a.cu"]),
    (["-arch", "compute_75", "a.cu"], ["-arch", "compute_75", "a.cu"]),
    (["-gencode", "arch=compute_80,code=sm_80", "a.cu"],
     ["-gencode", "arch=compute_80,code=sm_80", "a.cu", "-gencode", "arch=compute_80,code=compute_80"]),
    (["-gencode=arch=compute_75,code=sm_75", "-gencode=arch=compute_86,code=sm_86"],
     ["-gencode=arch=compute_75,code=sm_75", "-gencode=arch=compute_86,code=sm_86", "-gencode",
      "arch=compute_86,code=compute_86"]),
    (["-gencode", "arch=compute_80,code=[sm_80,compute_80]"], ["-gencode", "arch=compute_80,code=[sm_80,compute_80]"]),
    (["-arch=compute_80", "-code=sm_80", "a.cu"], ["-arch=compute_80", "a.cu", "-code=sm_80,compute_80"]),
])
def test_tlpsim_nvcc_keeps_ptx_in_the_fat_binary(args, expected):
    assert with_ptx(args) == expected


def test_exec_command_splitting():
    assert split_command(["a.cu", "b.cu", "--", "-n", "3"]) == (["a.cu", "b.cu"], ["-n", "3"])
    assert split_command(["./prog", "x.cu"]) == ([], ["./prog", "x.cu"])
    assert split_command(["prog.cu"]) == (["prog.cu"], [])


@pytest.mark.parametrize("text, value", [("4GiB", 4 << 30), ("512M", 512 << 20), ("1048576", 1 << 20),
                                         ("1.5 GiB", 3 << 29)])
def test_device_memory_sizes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["lots", "12 parsecs", "1KiB", "2TiB"])
def test_device_memory_bad_sizes(text):
    with pytest.raises(TlpsimError, match="--device-memory"):
        parse_size(text)


def test_exit_descriptions():
    assert describe_exit(0) == {"exit_status": 0, "text": "the program exited with status 0"}
    crash = describe_exit(-11)
    assert crash["exit_status"] == 139 and crash["signal"] == "SIGSEGV" and "killed by SIGSEGV" in crash["text"]
    assert describe_exit(86)["exit_status"] == 2


def _fatbin(tmp_path, *options) -> bytes:
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(int *p) { *p = 7; }\n")
    tk = find_toolkit()
    out = tmp_path / "k.fatbin"
    subprocess.run([str(tk.nvcc), "-fatbin", "-arch=sm_80", *options, str(src), "-o", str(out)], check=True,
                   env=tk.env(), capture_output=True)
    return out.read_bytes()


def test_fat_binary_entries(tmp_path):
    plain = parse_fatbin(_fatbin(tmp_path, "--no-compress"))
    assert plain.describe() == "SASS for sm_80, PTX for compute_80"
    entry = plain.best_ptx(80)
    assert entry.version == (9, 5) and ".entry _Z1kPi" in entry.ptx and entry.ptx.rstrip().endswith("}")
    squeezed = parse_fatbin(_fatbin(tmp_path))  # nvcc compresses PTX by default
    assert squeezed.describe() == "SASS for sm_80, compressed PTX for compute_80"
    assert squeezed.best_ptx(80) is None


def test_fat_binary_damage_is_reported(tmp_path):
    blob = _fatbin(tmp_path, "--no-compress")
    with pytest.raises(FatbinError, match="not a fat binary"):
        parse_fatbin(b"\0" * 16 + blob[16:])
    with pytest.raises(FatbinError, match="shorter than its header"):
        parse_fatbin(blob[:100])
    bad = bytearray(blob)
    struct.pack_into("<I", bad, 16 + 4, 8)  # an entry header size below the minimum
    with pytest.raises(FatbinError, match="corrupt fat binary entry"):
        parse_fatbin(bytes(bad))


def test_error_codes_match_cudas_header():
    header = (find_toolkit().include_dir / "driver_types.h").read_text()
    numbering = {name: int(code) for name, code in re.findall(r"\b(cudaError\w+)\s*=\s*(\d+)", header)}
    for code, (name, text) in errors.ERRORS.items():
        assert numbering.get(name, 0 if name == "cudaSuccess" else None) == code, name
        assert text
    assert errors.name_of(12345) == errors.text_of(12345) == "unrecognized error code"


def _dynamic_symbols(path) -> dict[str, str]:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run([nm, "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        name = line.split()[-1]
        base, _, version = name.partition("@@")
        syms[base] = version
    return syms


def test_runtime_library_exports_every_function_of_nvidias():
    nvidia = _dynamic_symbols(find_toolkit().root / "lib" / build.SONAME)
    ours = _dynamic_symbols(build.library())
    listed = set(build.exported_names())
    assert listed == {n for n in nvidia if n != build.SONAME}  # the committed list is the wheel's
    assert listed <= set(ours)
    assert {ours[n] for n in listed} == {build.SONAME}  # NVIDIA's symbol version
    assert len(build.implemented_names()) > 90
    readelf = shutil.which("readelf")
    if readelf:
        dyn = subprocess.run([readelf, "-d", str(build.library())], capture_output=True, text=True).stdout
        assert f"Library soname: [{build.SONAME}]" in dyn


def test_stale_library_is_refused(monkeypatch):
    monkeypatch.setattr(build, "source_digest", lambda: "0" * 64)
    with pytest.raises(build.BuildError, match="older than its sources; rebuild it with `make setup`"):
        build.library()


_UNIT_A = r"""
#include <cstdio>
extern __device__ int counter;
__device__ float twice(float x);
template <typename T> __device__ __noinline__ T plus1(T x) { return x + 1; }
__global__ void ka(float *p) { p[0] = twice(plus1(p[0])); atomicAdd(&counter, 1); printf("a %f\n", p[0]); }
"""
_UNIT_B = r"""
#include <cstdio>
__device__ int counter;
template <typename T> __device__ __noinline__ T plus1(T x) { return x + 1; }
__device__ float twice(float x) { return 2 * x; }
__global__ void kb(float *p) { p[1] = plus1(p[1]); counter += 2; printf("b %f\n", p[1]); }
"""


def test_rdc_units_link_into_one_ptx_module(tmp_path):
    """-rdc=true -lineinfo PTX of two units: a cross-unit call and variable, a template
    instance (weak) in both, printf format strings ($str, internal) in both."""
    from tlpsim.cudart.ptxlink import link_ptx, split_items
    from tlpsim.frontend.ptx_parser import parse_ptx
    from tlpsim.frontend.resources import ptxas_resources

    tk = find_toolkit()
    texts = []
    for name, src in (("a", _UNIT_A), ("b", _UNIT_B)):
        (tmp_path / f"{name}.cu").write_text(src)
        subprocess.run([str(tk.nvcc), "-ptx", "-rdc=true", "-arch=sm_80", "-lineinfo", str(tmp_path / f"{name}.cu"),
                        "-o", str(tmp_path / f"{name}.ptx")], check=True, env=tk.env(), capture_output=True)
        texts.append((tmp_path / f"{name}.ptx").read_text())
    assert all("$str" in t for t in texts)
    linked = link_ptx(texts)
    assert linked.count(".section .debug_str") == 1  # -lineinfo: inlined_at names, one section for both units
    module = parse_ptx(linked, "linked.ptx")  # the parser skips the DWARF section
    assert {"_Z2kaPf", "_Z2kbPf"} <= set(module.functions)
    assert not module.functions["_Z5twicef"].is_declaration
    assert "$str" in module.variables and "$str_tlpsim_u1" in module.variables
    assert not module.variables["counter"].extern
    names = [it.name for it in split_items(linked) if it.kind == "func" and it.body]
    assert names.count("_Z5plus1IfET_S0_") == 1
    assert {".file\t1", ".file\t2"} <= {line.split(' "')[0] for line in linked.splitlines() if line.startswith(".file")}
    res = ptxas_resources(linked, "sm_80", None)  # ptxas accepts the linked module
    assert {"_Z2kaPf", "_Z2kbPf"} <= set(res)


def test_tlpsim_nvcc_finds_the_profiler_api_header(tmp_path):
    """cuda_profiler_api.h comes from the pinned nvidia-cuda-profiler-api wheel; tlpsim nvcc
    adds its folder when the toolkit's include folder (e.g. TLPSIM_CUDA_HOME's) lacks it."""
    from tlpsim.cudart.nvcc import extra_include_dirs

    include = find_toolkit().include_dir
    assert (include / "cuda_profiler_api.h").is_file() or extra_include_dirs(include)
    (found,) = extra_include_dirs(tmp_path)  # a toolkit without the header
    assert (tmp_path.__class__(found) / "cuda_profiler_api.h").is_file()
    assert extra_include_dirs(tmp_path.__class__(found)) == []


def test_cache_files_written_by_concurrent_host_threads(tmp_path):
    """Issue 28: host threads of one program (simpleCallback) wrote the same resources file
    through one temporary name (the process id) and one rename removed the other's file."""
    import threading

    from tlpsim.cudart.modules import write_atomically

    path = tmp_path / "abc.json"
    texts = [f'{{"thread": {k}}}' * 200 for k in range(8)]
    barrier, errors = threading.Barrier(len(texts)), []

    def writer(text):
        barrier.wait()
        try:
            for _ in range(25):
                write_atomically(path, text)
        except Exception as exc:  # noqa: BLE001 - the test reports whatever a writer hit
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert path.read_text() in texts
    assert [p.name for p in tmp_path.iterdir()] == ["abc.json"]


@pytest.mark.parametrize("value", ["-1", "0"])
def test_exec_timeout_must_be_positive(value):
    from click.testing import CliRunner

    from tlpsim.cli_exec import exec_cmd

    result = CliRunner().invoke(exec_cmd, ["--timeout", value, "--", "./prog"])
    assert result.exit_code == 2
    assert f"Invalid value for '--timeout': {float(value)} is not in the range x>0" in result.output


def test_every_reported_device_attribute_reaches_cudaDeviceGetAttribute():
    """libcudart.c passes attributes by name (its enum -> name table); an attribute the
    Python table reports but the C table lacks failed with cudaErrorInvalidValue (NVIDIA's
    deviceQuery asks for cudaDevAttrGpuOverlap, issue 28)."""
    import re

    from tlpsim.config.loader import load_config
    from tlpsim.cudart.build import SOURCE
    from tlpsim.cudart.props import attributes

    table = SOURCE.read_text().split("attr_names[] = {", 1)[1].split("};", 1)[0]
    in_c = set(re.findall(r"A\(([A-Z]\w*)\)", table))  # not the macro's own A(n)
    assert set(attributes(load_config("gtx480"))) == in_c
