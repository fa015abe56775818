"""`tlpsim ptx` refuses what a launch refuses: PTX that ptxas rejects is an error
quoting ptxas (not a summary and exit 0), an absurd register declaration is refused
with the limit named (it hung, then ran out of memory), and a left-out `;` is
named as such rather than as an operand that runs on into the next line."""

from __future__ import annotations

import pytest
from badinput_helpers import assert_user_error, cli

from tlpsim.errors import PTXSyntaxError
from tlpsim.frontend.ptx_body import MAX_REGISTERS
from tlpsim.frontend.ptx_parser import parse_ptx

GOOD = """.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 k_param_0)
{
\t.reg .b32 %r<4>;
\t.reg .pred %p<2>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [k_param_0];
\tmov.u32 %r1, 5;
\tadd.s32 %r2, %r1, 1;
\tst.global.u32 [%rd1], %r2;
\tret;
}
"""
ADD = "add.s32 %r2, %r1, 1;"


def _ptx(tmp_path, text: str):
    f = tmp_path / "k.ptx"
    f.write_text(text)
    return f


def test_well_formed_ptx_is_summarised_as_checked(tmp_path):
    res = cli("ptx", _ptx(tmp_path, GOOD))
    assert res.exit_code == 0, res.output
    assert "1 kernel(s), 1 function(s) shown; assembled by ptxas without errors" in res.output


@pytest.mark.parametrize("old, new, ptxas_says", [
    (".version 8.0\n", "", "Missing .version directive"),
    (ADD, "add.s32 %r2, %r1;", "Arguments mismatch for instruction 'add'"),
    (".address_size 64", ".address_size 48", "Illegal value for .address_size directive"),
    (".target sm_80", ".target sm_9999", "Value 'sm_9999' is not defined"),
    ("[k_param_0]", "[k_param_9]", "Unknown symbol 'k_param_9'"),
    ("\tret;", "\tst.param.u64 [k_param_0], %rd1;\n\tret;", "Illegal to write to function input parameter"),
    (ADD, "add.s32 %p1, %r1, 1;", "Arguments mismatch for instruction 'add'"),
    (ADD, "add.s32 7, %r1, 1;", "Result register required for instruction 'add'"),
])
def test_ptx_that_ptxas_rejects_is_an_error(tmp_path, old, new, ptxas_says):
    f = _ptx(tmp_path, GOOD.replace(old, new))
    assert_user_error(cli("ptx", f), f"ptxas failed to assemble {f}", ptxas_says)
    res = cli("ptx", f, "--no-check")  # parsing alone still summarises, and says it did not check
    assert res.exit_code == 0 and "not checked by ptxas (--no-check)" in res.output, res.output


@pytest.mark.parametrize("count", [2_000_000_000, MAX_REGISTERS + 1])
def test_an_absurd_register_declaration_is_refused_with_the_limit(tmp_path, count):
    f = _ptx(tmp_path, GOOD.replace("%r<4>", f"%r<{count}>"))
    assert_user_error(cli("ptx", f, "--no-check"), f"{f}:7:", f"'%r<{count}>' declares {count:,} registers; "
                                                              f"tlpsim accepts at most {MAX_REGISTERS:,} in a function")


def test_registers_up_to_the_limit_are_accepted():
    fn = parse_ptx(GOOD.replace("%r<4>", f"%r<{MAX_REGISTERS - 5}>")).functions["k"]
    assert len(fn.reg_types) == MAX_REGISTERS


@pytest.mark.parametrize("old, new, where, nxt", [
    ("mov.u32 %r1, 5;", "mov.u32 %r1, 5", "k.ptx:11:16: ", "add.s32 %r2, %r1, 1"),
    ("mov.u32 %r1, 5;", "mov.u32 %r1, %r3", "k.ptx:11:18: ", "add.s32 %r2, %r1, 1"),
    (ADD, "add.s32 %r2, %r1, 1", "k.ptx:12:21: ", "st.global.u32 [%rd1], %r2"),
    (".reg .b32 %r<4>;", ".reg .b32 %r<4>", "k.ptx:7:17: ", ".reg .pred %p<2>"),
    ("st.global.u32 [%rd1], %r2;", "st.global.u32 [%rd1], %r2\n\t@%p1 bra $L;\n$L:", "k.ptx:13:27: ", "@%p1 bra $L"),
])
def test_a_missing_semicolon_is_named(old, new, where, nxt):
    with pytest.raises(PTXSyntaxError) as exc:
        parse_ptx(GOOD.replace(old, new), "k.ptx")
    assert str(exc.value).startswith(f"{where}missing ';' at the end of this line: the next line ('{nxt}') was "
                                     "read as part of its statement"), str(exc.value)
