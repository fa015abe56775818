"""PTX from `nvcc -G` (debug information): `.section .debug_*` blocks, `.file`
with timestamp and size, `.loc` with `function_name`/`inlined_at` attributes and
old toolkits' `@@DWARF` lines are skipped; the kernels run as without -G."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tlpsim
from tlpsim.errors import PTXSyntaxError
from tlpsim.frontend.ptx_parser import parse_ptx

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

DEBUG_PTX = """.version 9.5
.target sm_80, debug
.address_size 64
.file 1 "/src/k.cu", 1700000000, 512
.visible .entry k(.param .u64 k_param_0)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    .loc 1 5 0
$L__func_begin0:
    .loc 1 5 0, function_name $L__info_string0, inlined_at 1 9 3
    ld.param.u64 %rd1, [k_param_0];
    mov.u32 %r1, %tid.x;
    .loc 1 6 1
    st.global.u32 [%rd1], %r1;
    ret;
$L__func_end0:
}
    .section .debug_str
    {
$L__info_string0:
.b8 95,90,49,107,0
    }
    .section .debug_abbrev
    {
@@DWARF .byte 1, 17, 1, 37, 8
@@DWARF .4byte .debug_str
    }
    .section .debug_info { .b32 763
.b8 2 }
    .section .debug_macinfo { }
"""


def test_debug_sections_and_attributes_are_skipped():
    m = parse_ptx(DEBUG_PTX, "k.ptx")
    real = [i for i in m.kernels["k"].instructions if not i.synthetic]  # (+ a ret after $L__func_end0)
    assert [i.base for i in real] == ["ld", "mov", "st", "ret"]
    assert [i.line for i in real] == [12, 13, 15, 16]  # lines survive the blanking
    assert m.target == ("sm_80", "debug") and not m.variables


def test_malformed_ptx_after_a_debug_section_is_still_reported_at_its_line():
    bad = DEBUG_PTX + ".visible .entry j()\n{\n    bogus.op %r1;\n}\n"
    with pytest.raises(PTXSyntaxError) as err:
        parse_ptx(bad, "k.ptx")
    assert str(err.value).startswith(f"k.ptx:{DEBUG_PTX.count(chr(10)) + 3}:")


def _divergence_reference(v: np.ndarray, n: int, block: int) -> np.ndarray:
    """tests/corpus/08_divergence.cu's `divergence` in NumPy (grid of blocks of `block`)."""
    total = v.size
    i = np.arange(total)
    tid = i % block
    x = np.where(i < n, v, 0)
    odd = np.where(x > 0, np.where(x > 100, x * 3, x + 7), -x)
    even = np.where(((x & 3) == 0) | (x < -50), x >> 1, np.where(((x & 2) != 0) & (tid > 16), x ^ tid, 0))
    r = np.where(tid & 1, odd, even).astype(np.int32)
    left = r.reshape(-1, block)[:, (np.arange(block) + block - 1) % block].reshape(-1)
    out = np.where(left == r, 0, np.abs(r - left)).astype(np.int32)
    return np.where(i < n, out, 0)


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_corpus_kernel_compiled_with_G_runs_and_verifies(mode):
    n, block, grid = 400, 256, 2
    v = np.random.default_rng(5).integers(-300, 300, grid * block).astype(np.int32)
    x = np.r_[np.float32([np.nan, -1.5, 0.25, 7.9]), np.linspace(-3, 5, n - 4, dtype=np.float32)]
    with tlpsim.Device(mode=mode, trace_cache=False) as dev:  # timing: gtx480, NVRTC 11.8 for sm_35 (-G too)
        mod = tlpsim.RawModule(path=str(CORPUS / "08_divergence.cu"), options=("-G",))
        src = mod.program.module.source
        assert ".section\t.debug_info" in src and f".target {dev.arch}, debug" in src  # real -G output
        assert dev.arch == {"functional": "sm_80", "timing": "sm_35"}[mode]
        out = tlpsim.zeros(grid * block, np.int32)
        rec = mod.get_function("divergence")((grid,), (block,), (tlpsim.asarray(v), out, np.int32(n)))
        np.testing.assert_array_equal(out.get(), _divergence_reference(v, n, block))
        fout = tlpsim.zeros(grid * block, np.int32)
        mod.get_function("divergence_float")((grid,), (block,), (tlpsim.asarray(x), fout, np.int32(n)))
    expect = np.zeros(grid * block, np.int32)
    c = np.where(np.isnan(x), -1, np.where(x < 0, 0, np.where(x < 1, 1, 2)))
    expect[:n] = np.where(c == 2, np.trunc(np.nan_to_num(x)).astype(np.int32), c * 10)
    expect[n: n + 32] = -2
    np.testing.assert_array_equal(fout.get(), expect)
    if mode == "timing":
        assert rec.stats.cycles > 0
