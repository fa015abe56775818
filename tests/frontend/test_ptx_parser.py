"""Golden tests of the PTX parser on hand-written PTX with known structure."""

from pathlib import Path

import pytest

from tlpsim.errors import PTXSyntaxError, UnsupportedPTX
from tlpsim.frontend.ir import Address, Imm, Reg, Sink, Special, Symbol, Vec
from tlpsim.frontend.ptx_parser import parse_ptx, parse_ptx_file

DATA = Path(__file__).resolve().parent.parent / "data"
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "kernels"

HEADER = ".version 9.5\n.target sm_80\n.address_size 64\n"


@pytest.fixture(scope="module")
def golden():
    return parse_ptx_file(DATA / "golden_branches.ptx")


def test_module_header_and_variables(golden):
    assert golden.version == "9.5"
    assert golden.target == ("sm_80",)
    assert golden.address_size == 64
    coeffs = golden.variables["coeffs"]
    assert (coeffs.space, coeffs.type, coeffs.count, coeffs.size, coeffs.align) == ("const", "f32", 4, 16, 4)
    import struct

    assert struct.unpack("<4f", coeffs.init) == (1.0, 2.0, 3.0, 4.0)
    assert golden.variables["counter"].init == (7).to_bytes(4, "little")
    ptrs = golden.variables["ptrs"]
    assert ptrs.relocs == ((0, "counter"),) and ptrs.size == 16
    dyn = golden.variables["dyn_smem"]
    assert dyn.extern and dyn.size == 0 and dyn.align == 16 and dyn.space == "shared"


def test_functions_and_params(golden):
    assert list(golden.kernels) == ["golden"]
    twice = golden.functions["twice"]
    assert not twice.is_entry
    assert [(p.name, p.type, p.size) for p in twice.ret_params] == [("func_retval0", "b32", 4)]
    k = golden.get_kernel("golden")
    assert [(p.name, p.type, p.size) for p in k.params] == [("golden_param_0", "u64", 8), ("golden_param_1", "u32", 4)]
    assert k.directives == {"maxntid": (256, 1, 1)}
    assert k.reg_type("%rd4") == "b64" and k.reg_type("%p3") == "pred"


def test_blocks_successors(golden):
    k = golden.kernels["golden"]
    spans = [(b.start, b.end, b.succs) for b in k.blocks]
    assert spans == [
        (0, 5, (8, 1)),
        (5, 8, (3, 2)),
        (8, 10, (4,)),
        (10, 11, (4,)),
        (11, 12, (5,)),
        (12, 18, (5, 6)),
        (18, 27, (7,)),
        (27, 28, (8,)),
        (28, 29, ()),
    ]
    assert k.blocks[4].preds == (2, 3)
    assert k.blocks[3].labels == ("$L__BB1_3",)
    assert k.labels["$L__BB1_6"] == 28


def test_instruction_operands(golden):
    k = golden.kernels["golden"]
    ins = k.instructions
    assert ins[2].srcs == (Special("tid", "x"),) and ins[2].dsts == (Reg("%r2"),)
    assert ins[4].guard == Reg("%p1") and ins[4].branch_target == "$L__BB1_6"
    assert ins[8].srcs == (Reg("%r2"), Imm(-1, False, "-1"))
    assert ins[10].srcs[0].value == 16
    call = ins[14]
    assert call.base == "call" and call.callee == "twice" and call.mods == ("uni",)
    # call-sequence .params live in a nested scope and are renamed apart
    assert call.dsts == (Symbol("retval0@3"),) and call.srcs == (Symbol("param0@2"),)
    assert ins[13].dsts == () and ins[13].srcs[0] == Address(Symbol("param0@2"), 0)
    assert ins[21].srcs == (Address(Symbol("coeffs"), 4),)
    st = ins[23]
    assert st.vec == 2 and st.space == "global" and st.type == "f32"
    assert st.srcs == (Address(Reg("%rd4"), -8), Vec((Reg("%f1"), Reg("%f2"))))
    assert ins[24].opclass == "atomic" and ins[24].dsts == (Reg("%r7"),)
    shfl = ins[25]
    assert shfl.dsts == (Reg("%r8"), Reg("%p3")) and shfl.srcs[-1].value == -1
    assert ins[26].guard == Reg("%p3", neg=True) and ins[26].base == "ret"
    setp = ins[27]
    assert setp.mods == ("lt", "and", "f32") and setp.dsts == (Reg("%p1"), Reg("%p2"))
    assert ins[22].types == ("f32", "u32") and ins[22].mods == ("rn", "f32", "u32")


def test_source_lines_kept(golden):
    k = golden.kernels["golden"]
    text = (DATA / "golden_branches.ptx").read_text().splitlines()
    for ins in k.instructions:
        assert ins.base.split(".")[0] in text[ins.line - 1] or ins.base == "call"


def test_immediates():
    m = parse_ptx(HEADER + """
.visible .entry k(.param .u64 p)
{
    .reg .f32 %f<4>; .reg .f64 %fd<2>; .reg .b32 %r<5>;
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0fBF000000;
    mov.f64 %fd1, 0d4000000000000000;
    mov.b32 %r1, 0xFFFFFFFF;
    mov.b32 %r2, -2147483648;
    mov.b32 %r3, 017;
    mov.f32 %f3, 1.5;
    mov.b32 %r4, 0b101;
    ret;
}
""")
    vals = [i.srcs[0] for i in m.kernels["k"].instructions[:-1]]
    assert [(v.value, v.is_float) for v in vals] == [
        (1.0, True), (-0.5, True), (2.0, True), (0xFFFFFFFF, False), (-2147483648, False),
        (15, False), (1.5, True), (5, False)]


def test_vector_sink_and_inline_braces():
    m = parse_ptx(HEADER + """
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<5>; .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    ld.global.nc.v4.u32 {%r1, _, %r3, %r4}, [%rd1+16];
    { .reg .pred %tp; setp.eq.u32 %tp, %r1, 0; @%tp mov.u32 %r2, 1; }
    ret;
}
""")
    ins = m.kernels["k"].instructions
    assert ins[1].dsts == (Vec((Reg("%r1"), Sink(), Reg("%r3"), Reg("%r4"))),)
    assert ins[1].mods == ("global", "nc", "v4", "u32") and ins[1].vec == 4
    assert ins[2].dsts[0].name.startswith("%tp@") and ins[3].guard.name == ins[2].dsts[0].name


def test_line_directives_and_pragmas():
    m = parse_ptx(HEADER + """.file 1 "k.cu"
.visible .entry k()
{
    .reg .b32 %r<2>;
    .loc 1 3 5
    mov.u32 %r1, %laneid;
    .pragma "nounroll";
    ret;
}
""")
    k = m.kernels["k"]
    assert k.pragmas == ["nounroll"] and len(k.instructions) == 2


def test_implicit_return_appended():
    m = parse_ptx(HEADER + ".visible .entry k()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, 1;\n}\n")
    ins = m.kernels["k"].instructions
    assert ins[-1].base == "ret" and ins[-1].synthetic


def test_brx_branch_table():
    m = parse_ptx(HEADER + """
.visible .entry k(.param .u32 p)
{
    .reg .b32 %r<2>;
    ld.param.u32 %r1, [p];
    $L_brx_0: .branchtargets $L__A, $L__B;
    brx.idx %r1, $L_brx_0;
$L__A:
    ret;
$L__B:
    ret;
}
""")
    k = m.kernels["k"]
    assert k.branch_tables == {"$L_brx_0": ("$L__A", "$L__B")}
    assert k.blocks[0].succs == (1, 2)


@pytest.mark.parametrize(
    "body, message, line, exc",
    [
        ("    frobnicate.u32 %r1, %r1;\n", "unknown opcode 'frobnicate'", 7, UnsupportedPTX),
        ("    add.u32 %r1, %r9x, 1;\n", "undeclared register '%r9x'", 7, PTXSyntaxError),
        ("    bra $L__nowhere;\n", "undefined label '$L__nowhere'", 7, PTXSyntaxError),
        ("    .frob 3;\n", "unknown or unsupported directive '.frob'", 7, UnsupportedPTX),
        ("    add.u32 %r1, %r1, [;\n", "malformed address", 7, PTXSyntaxError),
        ("    @%q1 ret;\n", "undeclared predicate register '%q1'", 7, PTXSyntaxError),
        ("    @%r1 ret;\n", "guard '%r1' is a .b32 register, not a predicate", 7, PTXSyntaxError),
    ],
)
def test_errors_name_file_line_column(body, message, line, exc):
    text = HEADER + ".visible .entry k()\n{\n    .reg .b32 %r<2>;\n" + body + "    ret;\n}\n"
    with pytest.raises(exc) as info:
        parse_ptx(text, "bad.ptx")
    err = info.value
    assert message in str(err)
    assert err.filename == "bad.ptx" and err.line == line
    assert str(err).startswith(f"bad.ptx:{line}:")
    assert body.strip() in str(err)  # the offending line is shown


def test_error_column_points_at_statement():
    text = HEADER + ".visible .entry k()\n{\n    .reg .b32 %r<2>;\n    add.u32 %r1, %r1, 1;  bogus.u32 %r1;\n}\n"
    with pytest.raises(UnsupportedPTX) as info:
        parse_ptx(text, "x.ptx")
    assert info.value.line == 7 and info.value.column == 27


def test_unterminated_function_and_missing_semicolon():
    with pytest.raises(PTXSyntaxError, match="no closing"):
        parse_ptx(HEADER + ".visible .entry k()\n{\n ret;\n")
    with pytest.raises(PTXSyntaxError, match="terminating ';'"):
        parse_ptx(HEADER + ".visible .entry k()\n{\n ret\n}\n")


def test_unknown_module_directive():
    with pytest.raises(UnsupportedPTX, match=r"x.ptx:4:1: .*'\.frob'"):
        parse_ptx(HEADER + ".frob 1;\n", "x.ptx")


@pytest.mark.skipif(not REFERENCE.exists(), reason="../shared/reference not present")
def test_reference_ptx_isa_78_parses():
    files = sorted(REFERENCE.glob("*.sm35.ptx"))
    assert len(files) >= 6
    for f in files:
        m = parse_ptx_file(f)
        assert m.version == "7.8" and m.target == ("sm_35",)
        (k,) = m.kernels.values()
        assert k.instructions[-1].base == "ret" and len(k.blocks) >= 2
