"""Device-side printf (vprintf) and assert (__assertfail) in the functional model,
and the C printf formatter they use."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import tlpsim
from tlpsim.errors import DeviceAssertError
from tlpsim.functional.printf import Conversion, format_value, layout, parse_format

SRC = r'''
#include <cassert>
#include <cstdio>
__device__ void helper(int i, const char* s) { printf("helper %d %s\n", i, s); }
extern "C" __global__ void show(int* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        printf("t%02d a=%d f=%.3f ll=%lld c=%c s=%s %5.1e|%-3u|%x|%%\n", i, a[i], a[i] * 0.5f,
               (long long)a[i] * 1000000000000LL, 'A' + i, "str", 1.0 / (i + 1), i, 255 + i);
    if (i == 1) helper(i, "deep");
    int r = printf("");
    if (i == 0) a[0] = r + 100;
}
extern "C" __global__ void check(const int* a) { assert(a[threadIdx.x] < 3); }
'''


@pytest.fixture(scope="module")
def module():
    with tlpsim.Device():
        yield tlpsim.RawModule(code=SRC)


def test_device_printf_output_in_thread_order(module, capsys):
    with tlpsim.Device():
        a = tlpsim.asarray(np.arange(4, dtype=np.int32))
        module.get_function("show")((1,), (6,), (a, np.int32(4)))
        assert a.get().tolist() == [100, 1, 2, 3]  # printf("") returns 0 arguments
    assert capsys.readouterr().out == (
        "t00 a=0 f=0.000 ll=0 c=A s=str 1.0e+00|0  |ff|%\n"
        "t01 a=1 f=0.500 ll=1000000000000 c=B s=str 5.0e-01|1  |100|%\n"
        "t02 a=2 f=1.000 ll=2000000000000 c=C s=str 3.3e-01|2  |101|%\n"
        "t03 a=3 f=1.500 ll=3000000000000 c=D s=str 2.5e-01|3  |102|%\n"
        "helper 1 deep\n")


def test_device_printf_in_timing_mode_is_never_replayed_from_the_cache(module, capsys, tmp_path):
    for _ in range(2):
        with tlpsim.Device(mode="timing", trace_cache=str(tmp_path)):
            a = tlpsim.asarray(np.arange(4, dtype=np.int32))
            rec = module.get_function("show")((1,), (4,), (a, np.int32(4)))
            assert not rec.from_cache and rec.stats.cycles > 0
    assert capsys.readouterr().out.count("t03 a=3") == 2


def test_failed_device_assert_names_the_first_failing_thread(module, capsys):
    with tlpsim.Device():
        a = tlpsim.asarray(np.array([0, 1, 7, 9], dtype=np.int32))
        with pytest.raises(DeviceAssertError) as err:
            module.get_function("check")((1,), (4,), (a,))
    assert err.value.thread == (2, 0, 0) and err.value.cta == (0, 0, 0)
    assert "Assertion `a[threadIdx.x] < 3` failed" in str(err.value)
    assert capsys.readouterr().err == ("source.cu:14: void check(const int *): block: [0,0,0], thread: [2,0,0] "
                                       "Assertion `a[threadIdx.x] < 3` failed.\n")


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def test_format_parsing_and_argument_layout():
    pieces = parse_format("a%5.2f b%lld c%c d%*d %% e%s%")
    convs = [p for p in pieces if isinstance(p, Conversion)]
    assert [c.conv for c in convs] == ["f", "d", "c", "d", "s"]
    assert pieces[-1] == "%" and "%" in pieces  # a lone trailing % is text, %% is one %
    # double at 0, long long at 8, char (int) at 16, '*' width int at 20, int at 24, pointer at 32
    assert layout(pieces) == [(0, 8), (8, 8), (16, 4), (20, 4), (24, 4), (32, 8)]


@pytest.mark.parametrize("spec, raw, kw, expected", [
    ("%d", (1 << 32) - 5, {}, "-5"),
    ("%u", (1 << 32) - 5, {}, "4294967291"),
    ("%hhd", 300, {}, "44"),
    ("%ld", (1 << 64) - 2, {}, "-2"),
    ("%#x", 255, {}, "0xff"),
    ("%#o", 8, {}, "010"),
    ("%08.3f", _bits(-3.14159), {}, "-003.142"),
    ("%g", _bits(1e-5), {}, "1e-05"),
    ("%E", _bits(12345.678), {}, "1.234568E+04"),
    ("%a", _bits(1.5), {}, "0x1.8p+0"),
    ("%p", 0x7f00, {}, "0x7f00"),
    ("%p", 0, {}, "(nil)"),
    ("%s", 1, {"text": None}, "(null)"),
    ("%.2s", 1, {"text": "abc"}, "ab"),
    ("%*d", 7, {"width": -4}, "7   "),
    ("%3c", 65, {}, "  A"),
])
def test_format_value_matches_glibc(spec, raw, kw, expected):
    (conv,) = parse_format(spec)
    assert format_value(conv, raw, **kw) == expected
