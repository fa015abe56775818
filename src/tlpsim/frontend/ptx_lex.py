"""Lexical pieces of PTX shared by the parser modules: regular expressions, type
sizes, special-register names, literal decoding and bracket-aware splitting."""

from __future__ import annotations

import re
import struct

from tlpsim.frontend.ir import Imm

# Directives that end at the newline rather than at ';'.
LINE_DIRECTIVE_RE = re.compile(r"(?m)^([ \t]*\.(?:version|target|address_size|file|loc)\b[^\n;]*)\n")
FUNC_HEADER_RE = re.compile(r"\.(?:entry|func)\b")
# `nvcc -G` debug data: `.section .debug_xxx { .b8 ...; labels; @@DWARF ... }` blocks
# (their bodies hold no braces), a bare `.section` line, and `@@DWARF` lines of old
# toolkits. Blanked before statements are split; nothing in them affects execution.
DEBUG_SECTION_RE = re.compile(r"(?m)^[ \t]*\.section\b[^{};\n]*(?:\s*\{[^{}]*\}|;|$)|^[ \t]*@@DWARF\b[^\n]*")
COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
STMT_RE = re.compile(r"[^;{}]*[;{}]|[^;{}]+$")
LABEL_RE = re.compile(r"\s*([A-Za-z_$%][\w$]*)\s*:(?!:)")
REG_RANGE_RE = re.compile(r"^(%?[\w$]+)<(\d+)>$")
ARRAY_RE = re.compile(r"^([\w$.%]+)((?:\[\d*\])*)$")
_INT_RE = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?$")
_DEC_FLOAT_RE = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")

SPECIAL_REGS = frozenset(
    """tid ntid ctaid nctaid laneid warpid nwarpid smid nsmid gridid clock clock64
    clock_hi lanemask_eq lanemask_le lanemask_lt lanemask_ge lanemask_gt
    dynamic_smem_size total_smem_size aggr_smem_size globaltimer globaltimer_lo
    globaltimer_hi pm0 pm1 pm2 pm3 pm4 pm5 pm6 pm7 pm0_64 pm1_64 pm2_64 pm3_64
    pm4_64 pm5_64 pm6_64 pm7_64 clusterid nclusterid cluster_ctaid cluster_nctaid
    cluster_ctarank cluster_nctarank is_explicit_cluster reserved_smem_offset_begin
    reserved_smem_offset_end reserved_smem_offset_cap reserved_smem_offset_0
    reserved_smem_offset_1 current_graph_exec""".split()
)

TYPE_SIZE = {
    "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1,
}
STRUCT_FMT = {
    "b8": "<B", "u8": "<B", "s8": "<b", "b16": "<H", "u16": "<H", "s16": "<h",
    "b32": "<I", "u32": "<I", "s32": "<i", "b64": "<Q", "u64": "<Q", "s64": "<q",
    "f32": "<f", "f64": "<d", "f16": "<e",
}
SPACES = ("global", "const", "shared", "local", "param", "tex")
LINKAGE = ("visible", "extern", "weak", "common")
IGNORED_MODULE_DIRECTIVES = ("file", "loc", "section", "pragma", "alias")
FUNCTION_DIRECTIVES = ("maxntid", "reqntid", "minnctapersm", "maxnctapersm", "maxnreg",
                        "maxclusterrank", "reqnctapercluster", "explicitcluster", "noreturn",
                        "blocksareclusters", "abi_preserve", "abi_preserve_control")



def parse_literal(tok: str) -> Imm | None:
    c = tok[0]
    if not (c.isdigit() or c in "+-."):
        return None
    if len(tok) >= 3 and c == "0" and tok[1] in "fFdD" and len(tok) in (10, 18):
        bits = tok[2:]
        try:
            raw = int(bits, 16)
        except ValueError:
            return None
        if tok[1] in "fF":
            value = struct.unpack("<f", raw.to_bytes(4, "little"))[0]
        else:
            value = struct.unpack("<d", raw.to_bytes(8, "little"))[0]
        return Imm(value, True, tok)
    if _INT_RE.match(tok):
        t = tok.rstrip("uU")
        neg = t.startswith("-")
        body = t.lstrip("+-")
        if body.startswith(("0x", "0X")):
            v = int(body, 16)
        elif body.startswith(("0b", "0B")):
            v = int(body[2:], 2)
        elif len(body) > 1 and body.startswith("0"):
            v = int(body, 8)
        else:
            v = int(body)
        return Imm(-v if neg else v, False, tok)
    if _DEC_FLOAT_RE.match(tok):
        return Imm(float(tok), True, tok)
    return None


def split_top(text: str, sep: str) -> list[str]:
    """Split at `sep` outside (), [], {}."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:k])
            start = k + 1
    out.append(text[start:])
    return out


def match_paren(text: str, open_idx: int) -> int:
    depth = 0
    for k in range(open_idx, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError("unbalanced parentheses")


