"""Source files on the command line: binary files, malformed PTX (file:line:column)
and instructions tlpsim does not implement end in one clear error."""

from __future__ import annotations

import os

import pytest
from badinput_helpers import assert_user_error, cli

OK_PTX = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 k_p0)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [k_p0];
    mov.u32 %r1, %tid.x;
    add.s32 %r2, %r1, 1;
    st.global.u32 [%rd1], %r2;
    ret;
}
"""


@pytest.mark.parametrize("command", ["analyze", "ptx", "compile"])
@pytest.mark.parametrize("name", ["random.ptx", "random.cu"])
def test_random_bytes_named_as_source(tmp_path, command, name):
    f = tmp_path / name
    f.write_bytes(bytes(range(256)) * 4)
    assert_user_error(cli(command, f), f"{f} is not a text file (a NUL byte at offset 0)", "source")


@pytest.mark.parametrize("command", ["analyze", "ptx"])
def test_an_object_file_named_ptx(tmp_path, command):
    f = tmp_path / "kernel.ptx"
    f.write_bytes(b"\x7fELF\x02\x01\x01" + os.urandom(200))
    assert_user_error(cli(command, f), f"{f} is an ELF binary (an object file or executable), not PTX source")


def test_analyze_a_dot_o_names_the_expected_kinds(tmp_path):
    f = tmp_path / "kernel.o"
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00" * 8)
    assert_user_error(cli("analyze", f), f"{f}: expected a .cu or .ptx file")


def test_ptx_that_is_not_utf8_names_the_line(tmp_path):
    f = tmp_path / "latin1.ptx"
    f.write_bytes(OK_PTX.replace("{\n", "{\n    // caf\xe9\n", 1).encode("latin-1"))
    assert_user_error(cli("ptx", f), f"{f}:7: byte 0xe9 at offset", "is not UTF-8 text")


def test_cuda_source_in_latin1_still_compiles(tmp_path):
    # nvcc passes comment bytes through: only NUL bytes mark a binary .cu
    f = tmp_path / "latin1.cu"
    f.write_bytes(b'// caf\xe9\nextern "C" __global__ void k(int* p) { p[threadIdx.x] = 1; }\n')
    res = cli("compile", f)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("old, new, needle", [
    ("add.s32 %r2, %r1, 1;", "add.s32 %r2, %r1 1;", ":11:5: undeclared register '%r1 1'"),
    ("add.s32 %r2, %r1, 1;", "add.s32 %r2, %r9, 1;", ":11:5: undeclared register '%r9'"),
    ("    ret;", "    bra NOWHERE;\n    ret;", ":13:5: branch to undefined label 'NOWHERE'"),
])
def test_malformed_ptx_names_file_line_column(tmp_path, old, new, needle):
    f = tmp_path / "bad.ptx"
    f.write_text(OK_PTX.replace(old, new))
    for command in ("ptx", "analyze"):
        out = assert_user_error(cli(command, f), f"{f}{needle}")
        assert "^" in out  # the offending line is shown with a caret


def test_unsupported_instruction_names_the_opcode(tmp_path):
    f = tmp_path / "unsupported.ptx"
    f.write_text(OK_PTX.replace("add.s32 %r2, %r1, 1;", "frobnicate.s32 %r2, %r1, 1;"))
    assert_user_error(cli("ptx", f), f"{f}:11:5: unknown opcode 'frobnicate' (in 'frobnicate.s32')")


def test_analyze_writes_fail_cleanly(tmp_path, blocker):
    f = tmp_path / "ok.ptx"
    f.write_text(OK_PTX)
    assert_user_error(cli("analyze", f, "--dot", blocker / "c.dot"), f"cannot write {blocker / 'c.dot'}")


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_unsupported_special_register_at_run_time_names_kernel_and_line(mode):
    import numpy as np

    import tlpsim
    from tlpsim.errors import UnsupportedPTX

    src = OK_PTX.replace("mov.u32 %r1, %tid.x;", "mov.u32 %r1, %pm0;")
    with tlpsim.Device(mode=mode, trace_cache=False):
        k = tlpsim.RawModule(code=src).get_function("k")
        with pytest.raises(UnsupportedPTX, match=r"<ptx>:10:1: special register %pm0 is not supported \(kernel k\)"):
            k((1,), (1,), (tlpsim.zeros(4, np.int32),))


@pytest.mark.parametrize("name", ["k.ptx", "k.cu"])
def test_raw_module_from_a_binary_file_names_it(tmp_path, name):
    import tlpsim
    from tlpsim.errors import TlpsimError

    f = tmp_path / name
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    with tlpsim.Device(trace_cache=False):
        with pytest.raises(TlpsimError, match=f"{f} is an ELF binary .an object file or executable., not"):
            tlpsim.RawModule(path=str(f))


def test_load_program_on_a_binary_ptx_names_it(tmp_path):
    from tlpsim.errors import TlpsimError
    from tlpsim.frontend.loader import load_program

    f = tmp_path / "k.ptx"
    f.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(128, 256)))
    with pytest.raises(TlpsimError, match=str(f)):
        load_program(f)
