"""`tlpsim compile` takes nvcc's -D, -I and --std, parsed by frontend.options as
RawModule(options=...) parses them; bad values are user errors (exit 2)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tlpsim.cli import main

# needs a header from another directory, a macro and C++20 (a concept)
SOURCE = r'''#include "tile.h"
template <typename T> concept Small = sizeof(T) <= 4;
template <Small T> __device__ T scaled(T x) { return x * SCALE; }
extern "C" __global__ void k(int* out) {
    __shared__ int s[TILE];
    s[threadIdx.x % TILE] = scaled(threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x % TILE];
}
'''


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _files(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "tile.h").write_text("#define TILE 24\n")
    src = tmp_path / "src" / "k.cu"
    src.parent.mkdir()
    src.write_text(SOURCE)
    return src, tmp_path / "inc"


def test_defines_include_dirs_and_std_reach_nvcc(tmp_path):
    src, inc = _files(tmp_path)
    res = _cli("compile", src, "-I", inc, "-DSCALE=3", "--define-macro", "UNUSED", "--std", "c++20", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["compile_options"] == {"include_dirs": [str(inc)], "defines": {"SCALE": "3", "UNUSED": None},
                                      "std": "c++20", "maxrregcount": None, "options": []}
    cmd = out["nvcc_command"]
    assert "--std=c++20" in cmd and "--std=c++17" not in cmd and f"-I{inc}" in cmd
    assert "-DSCALE=3" in cmd and "-DUNUSED" in cmd
    (k,) = out["kernels"]
    assert k["kernel"] == "k" and k["shared_bytes"] == 24 * 4  # TILE came from the -I header
    res = _cli("compile", src, "--include-path", inc, "-D", "SCALE=3", "--std=c++20")
    assert res.exit_code == 0 and res.output.startswith("nvcc ") and "--std=c++20" in res.output.splitlines()[0]


def test_missing_options_and_bad_values_are_user_errors(tmp_path):
    src, inc = _files(tmp_path)
    cases = [
        (("-DSCALE=3", "--std=c++20"), "header tile.h not found (add its directory with -I"),
        (("-I", inc, "-DSCALE=3"), 'identifier "concept" is undefined'),  # the default c++17 has no concepts
        (("-I", inc, "--std=c++99"), "--std=c++99: not a C++ standard nvcc knows"),
        (("-I", tmp_path / "nowhere"), "does not exist"),
    ]
    for args, needle in cases:
        res = _cli("compile", src, *args)
        assert res.exit_code == 2 and needle in res.output and "Traceback" not in res.output, (args, res.output)
