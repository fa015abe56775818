"""A hand-written PTX parser producing the IR of `tlpsim.frontend.ir`.

The text is split into statements at `;`, `{` and `}` (after comments are blanked
out), so the common case — one instruction per line — costs a few string
operations. Errors name file:line:column and show the line.
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_right
from pathlib import Path

from tlpsim.errors import PTXSyntaxError, UnsupportedPTX
from tlpsim.frontend import opcodes
from tlpsim.frontend.blocks import build_blocks
from tlpsim.frontend.ir import (
    Address,
    Function,
    Imm,
    Instruction,
    Module,
    Operand,
    Param,
    Reg,
    RegDecl,
    Sink,
    Special,
    Symbol,
    Variable,
    Vec,
)

# Directives that end at the newline rather than at ';'.
_LINE_DIRECTIVE_RE = re.compile(r"(?m)^([ \t]*\.(?:version|target|address_size|file|loc)\b[^\n;]*)\n")
_FUNC_HEADER_RE = re.compile(r"\.(?:entry|func)\b")
_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_STMT_RE = re.compile(r"[^;{}]*[;{}]|[^;{}]+$")
_LABEL_RE = re.compile(r"\s*([A-Za-z_$%][\w$]*)\s*:(?!:)")
_REG_RANGE_RE = re.compile(r"^(%?[\w$]+)<(\d+)>$")
_ARRAY_RE = re.compile(r"^([\w$.%]+)((?:\[\d*\])*)$")
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

_TYPE_SIZE = {
    "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1,
}
_STRUCT_FMT = {
    "b8": "<B", "u8": "<B", "s8": "<b", "b16": "<H", "u16": "<H", "s16": "<h",
    "b32": "<I", "u32": "<I", "s32": "<i", "b64": "<Q", "u64": "<Q", "s64": "<q",
    "f32": "<f", "f64": "<d", "f16": "<e",
}
_SPACES = ("global", "const", "shared", "local", "param", "tex")
_LINKAGE = ("visible", "extern", "weak", "common")
_IGNORED_MODULE_DIRECTIVES = ("file", "loc", "section", "pragma", "alias")
_FUNCTION_DIRECTIVES = ("maxntid", "reqntid", "minnctapersm", "maxnctapersm", "maxnreg",
                        "maxclusterrank", "reqnctapercluster", "explicitcluster", "noreturn",
                        "blocksareclusters", "abi_preserve", "abi_preserve_control")


class _Statement:
    __slots__ = ("text", "term", "pos", "line")

    def __init__(self, text: str, term: str, pos: int, line: int = 0) -> None:
        self.text = text
        self.term = term
        self.pos = pos
        self.line = line


class PTXParser:
    """Parses one PTX text. Use `parse_ptx()` rather than this class directly."""

    def __init__(self, text: str, filename: str = "<ptx>") -> None:
        self.source = text
        self.filename = filename
        self._line_starts: list[int] | None = None
        self.op_cache: dict[str, Operand] = {}

    # ------------------------------------------------------------ errors

    def _locate(self, pos: int) -> tuple[int, int, str]:
        if self._line_starts is None:
            starts = [0]
            find = self.source.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        line_idx = bisect_right(self._line_starts, pos) - 1
        start = self._line_starts[line_idx]
        end = self.source.find("\n", start)
        line_text = self.source[start: end if end >= 0 else len(self.source)]
        return line_idx + 1, pos - start + 1, line_text

    def error(self, msg: str, pos: int, cls: type[PTXSyntaxError] = PTXSyntaxError) -> PTXSyntaxError:
        line, col, text = self._locate(pos)
        return cls(msg, self.filename, line, col, text)

    def line_of(self, pos: int) -> int:
        return self._locate(pos)[0]

    # ------------------------------------------------------------ statements

    def _statements(self) -> list[_Statement]:
        """Split the comment-free text into statements with their absolute offsets.

        Labels are emitted as their own statements (term ':')."""

        def blank(m: re.Match) -> str:
            s = m.group()
            if s[0] == '"':
                return s
            return re.sub(r"[^\n]", " ", s)

        text = _COMMENT_RE.sub(blank, self.source)
        # same length, so offsets still index self.source
        text = _LINE_DIRECTIVE_RE.sub(lambda m: m.group(1) + ";", text)
        self._text = text
        out: list[_Statement] = []
        append = out.append
        count = text.count
        find = text.find
        match = _STMT_RE.match
        line, line_pos = 1, 0
        pos, n = 0, len(text)
        while pos < n:
            m = match(text, pos)
            piece = m.group()
            start, pos = pos, m.end()
            term = piece[-1]
            if term in ";{}":
                body = piece[:-1]
            else:
                body, term = piece, ""
            offset = 0
            if ":" in body:
                # peel leading labels ("$L__BB0_3:") and `name : .callprototype`
                while True:
                    lm = _LABEL_RE.match(body, offset)
                    if lm is None:
                        break
                    at = start + lm.start(1)
                    line += count("\n", line_pos, at)
                    line_pos = at
                    append(_Statement(lm.group(1), ":", at, line))
                    offset = lm.end()
            rest = body[offset:] if offset else body
            stripped = rest.strip()
            if term == "{" and stripped and not _FUNC_HEADER_RE.search(stripped):
                # braces inside a statement (vector operand, initializer): extend to ';'
                depth, k = 1, pos
                while depth and k < n:
                    c = text[k]
                    if c == "{":
                        depth += 1
                    elif c == "}":
                        depth -= 1
                    k += 1
                semi = find(";", k)
                end = semi if semi >= 0 else n
                rest = text[start + offset: end]
                stripped = rest.strip()
                term = ";" if semi >= 0 else ""
                pos = end + 1
            if not stripped and term in ";":
                continue  # empty statement or trailing whitespace
            at = start + offset + len(rest) - len(rest.lstrip())
            line += count("\n", line_pos, at)
            line_pos = at
            append(_Statement(stripped, term, at, line))
        return out

    # ------------------------------------------------------------ module

    def parse(self) -> Module:
        module = Module(filename=self.filename, source=self.source)
        stmts = self._statements()
        i, n = 0, len(stmts)
        while i < n:
            st = stmts[i]
            if st.term == "" and not st.text.startswith((".version", ".target", ".address_size", ".file")):
                raise self.error("statement is missing its terminating ';'", st.pos)
            if st.term == ":":
                raise self.error(f"label '{st.text}' outside a function body", st.pos)
            if st.term == "}":
                raise self.error("unbalanced '}'", st.pos)
            text = st.text
            first = text.split(None, 1)[0] if text else ""
            if st.term == "{" or _FUNC_HEADER_RE.search(text):
                i = self._parse_function(stmts, i, module)
                continue
            if first == ".version":
                module.version = text.split()[1]
            elif first == ".target":
                module.target = tuple(t.strip() for t in text[len(".target"):].split(","))
            elif first == ".address_size":
                module.address_size = int(text.split()[1])
            elif first.lstrip(".") in _IGNORED_MODULE_DIRECTIVES:
                pass
            elif self._is_variable_decl(text):
                var = self._parse_variable(text, st.pos)
                if var.name in module.variables and not var.extern:
                    prev = module.variables[var.name]
                    if not prev.extern:
                        raise self.error(f"duplicate definition of '{var.name}'", st.pos)
                module.variables[var.name] = var
            else:
                raise self.error(f"unknown or unsupported module-level directive '{first}'", st.pos, UnsupportedPTX)
            i += 1
        return module

    @staticmethod
    def _is_variable_decl(text: str) -> bool:
        for tok in text.split():
            d = tok.lstrip(".")
            if d in _LINKAGE:
                continue
            return d in _SPACES
        return False

    # ------------------------------------------------------------ variables

    def _parse_variable(self, text: str, pos: int) -> Variable:
        """`.visible .global .align 4 .b8 name[12] = {1, 2, ...}` and friends."""
        init_text = None
        if "=" in text:
            text, init_text = text.split("=", 1)
        toks = text.replace(",", " ").split()
        space = vtype = None
        align = 0
        extern = visible = False
        vec = 1
        name_tok = None
        j = 0
        while j < len(toks):
            tok = toks[j]
            d = tok[1:] if tok.startswith(".") else None
            if d is None:
                name_tok = tok
            elif d == "extern":
                extern = True
            elif d in ("visible", "weak", "common"):
                visible = True
            elif d in _SPACES:
                space = d
            elif d == "align":
                j += 1
                align = int(toks[j])
            elif d in ("v2", "v4", "v8"):
                vec = int(d[1])
            elif d in _TYPE_SIZE or d in ("texref", "samplerref", "surfref"):
                vtype = d
            elif d == "ptr" or d == "attribute" or d.startswith("managed"):
                pass
            else:
                raise self.error(f"unknown variable attribute '{tok}'", pos, UnsupportedPTX)
            j += 1
        if space is None or vtype is None or name_tok is None:
            raise self.error("malformed variable declaration", pos)
        m = _ARRAY_RE.match(name_tok)
        if m is None:
            raise self.error(f"malformed variable name '{name_tok}'", pos)
        name, dims = m.group(1), m.group(2)
        elem_size = _TYPE_SIZE.get(vtype, 8) * vec
        count = 1
        unsized = False
        for d in re.findall(r"\[(\d*)\]", dims):
            if d == "":
                unsized = True
            else:
                count *= int(d)
        init = None
        relocs: tuple[tuple[int, str], ...] = ()
        if init_text is not None:
            values = self._flatten_initializer(init_text, pos)
            if unsized:
                count = len(values) // vec if vec > 1 else len(values)
                unsized = False
            init, relocs = self._encode_initializer(values, vtype, count * vec, pos)
        size = 0 if unsized else elem_size * count
        return Variable(name=name, space=space, type=vtype, size=size, align=align or _TYPE_SIZE.get(vtype, 1) * vec,
                        count=count, extern=extern or unsized, init=init, relocs=relocs, line=self.line_of(pos),
                        visible=visible)

    def _flatten_initializer(self, text: str, pos: int) -> list[str]:
        flat = text.replace("{", " ").replace("}", " ")
        return [v.strip() for v in flat.split(",") if v.strip()]

    def _encode_initializer(self, values: list[str], vtype: str, count: int, pos: int):
        out = bytearray()
        relocs = []
        size = _TYPE_SIZE[vtype]
        fmt = _STRUCT_FMT.get(vtype)
        for v in values[:count]:
            lit = _parse_literal(v)
            if lit is None:
                # an address of another symbol: generic(sym), sym, sym+4
                sym = v
                if sym.startswith("generic(") and sym.endswith(")"):
                    sym = sym[8:-1]
                relocs.append((len(out), sym))
                out += bytes(size)
                continue
            val = lit.value
            if fmt is None:
                out += int(val).to_bytes(size, "little", signed=False)
            elif vtype in ("f32", "f64", "f16"):
                if lit.is_float and isinstance(lit.text, str) and lit.text[:2].lower() in ("0f", "0d"):
                    raw = int(lit.text[2:], 16)
                    out += raw.to_bytes(size, "little")
                else:
                    out += struct.pack(fmt, float(val))
            else:
                if lit.is_float:
                    val = int(val)
                out += (int(val) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        if len(values) > count:
            raise self.error(f"initializer has {len(values)} values for {count} elements", pos)
        out += bytes(size * count - len(out))
        return bytes(out), tuple(relocs)

    # ------------------------------------------------------------ functions

    def _parse_params(self, text: str, pos: int) -> list[Param]:
        params = []
        for part in _split_top(text, ","):
            part = part.strip()
            if not part:
                continue
            toks = part.split()
            ptype = None
            align = 0
            ptr_space = None
            name_tok = None
            j = 0
            while j < len(toks):
                tok = toks[j]
                if tok == ".param" or tok == ".reg":
                    pass
                elif tok == ".align":
                    j += 1
                    align = int(toks[j])
                elif tok == ".ptr":
                    pass
                elif tok.lstrip(".") in ("global", "shared", "const", "local") and ptype is not None:
                    ptr_space = tok.lstrip(".")
                elif tok.startswith(".") and tok[1:] in _TYPE_SIZE:
                    ptype = tok[1:]
                elif not tok.startswith("."):
                    name_tok = tok
                else:
                    raise self.error(f"unknown parameter attribute '{tok}'", pos, UnsupportedPTX)
                j += 1
            if ptype is None or name_tok is None:
                raise self.error(f"malformed parameter '{part}'", pos)
            m = _ARRAY_RE.match(name_tok)
            if m is None:
                raise self.error(f"malformed parameter name '{name_tok}'", pos)
            count = 1
            for d in re.findall(r"\[(\d*)\]", m.group(2)):
                count *= int(d or 1)
            esize = _TYPE_SIZE[ptype]
            params.append(Param(name=m.group(1), type=ptype, size=esize * count, align=align or esize,
                                count=count, ptr_space=ptr_space))
        return params

    def _parse_function(self, stmts: list[_Statement], i: int, module: Module) -> int:
        st = stmts[i]
        header = st.text
        pos = st.pos
        # A header may span statements only through '{' ; the signature itself is one statement.
        m = re.match(r"^((?:\.\w+\s+)*)\.(entry|func)\s*(.*)$", header, re.S)
        if m is None:
            raise self.error("malformed function header", pos)
        attrs, kind, rest = m.group(1).split(), m.group(2), m.group(3).strip()
        ret_params: list[Param] = []
        if kind == "func" and rest.startswith("("):
            close = self._close_paren(rest, pos)
            ret_params = self._parse_params(rest[1:close], pos)
            rest = rest[close + 1:].strip()
        nm = re.match(r"^([\w$]+)\s*(.*)$", rest, re.S)
        if nm is None:
            raise self.error("function header without a name", pos)
        name, rest = nm.group(1), nm.group(2).strip()
        params: list[Param] = []
        if rest.startswith("("):
            close = self._close_paren(rest, pos)
            params = self._parse_params(rest[1:close], pos)
            rest = rest[close + 1:].strip()
        fn = Function(name=name, is_entry=(kind == "entry"), params=params, ret_params=ret_params,
                      visible=".visible" in attrs or ".weak" in attrs, line=self.line_of(pos))
        self._parse_function_directives(fn, rest, pos)
        if st.term == ";":
            fn.is_declaration = True
            if name not in module.functions:
                module.functions[name] = fn
            return i + 1
        if st.term != "{":
            raise self.error("expected '{' or ';' after function header", pos)
        end = _FunctionBodyParser(self, fn, module).parse(stmts, i + 1)
        existing = module.functions.get(name)
        if existing is not None and not existing.is_declaration:
            raise self.error(f"duplicate definition of function '{name}'", pos)
        module.functions[name] = fn
        return end

    def _close_paren(self, text: str, pos: int) -> int:
        try:
            return _match_paren(text, 0)
        except ValueError:
            raise self.error("unbalanced parentheses in function header", pos) from None

    def _parse_function_directives(self, fn: Function, text: str, pos: int) -> None:
        toks = re.findall(r"\.\w+|[^\s,.]+", text)
        key = None
        for tok in toks:
            if tok.startswith("."):
                key = tok[1:]
                if key not in _FUNCTION_DIRECTIVES:
                    raise self.error(f"unknown function directive '{tok}'", pos, UnsupportedPTX)
                fn.directives[key] = ()
            elif key is not None:
                fn.directives[key] = fn.directives[key] + (int(tok, 0),)


class _FunctionBodyParser:
    """Parses the statements of one function body into instructions and declarations."""

    def __init__(self, parser: PTXParser, fn: Function, module: Module) -> None:
        self.p = parser
        self.fn = fn
        self.module = module
        self.scopes: list[dict[str, str]] = [{}]
        self.scope_counter = 0
        self.pending_labels: list[tuple[str, int]] = []
        self.reg_names: dict[str, str] = {}
        self.op_cache = parser.op_cache

    def parse(self, stmts: list[_Statement], i: int) -> int:
        fn = self.fn
        instrs = fn.instructions
        depth = 1
        n = len(stmts)
        last_pos = stmts[i - 1].pos
        while i < n:
            st = stmts[i]
            i += 1
            term = st.term
            text = st.text
            last_pos = st.pos
            if term == ";":
                if text[0] == ".":
                    self._directive(text, st.pos)
                else:
                    instr = self._instruction(text, st.pos, st.line)
                    instr.index = len(instrs)
                    for label, lpos in self.pending_labels:
                        fn.labels[label] = instr.index
                    self.pending_labels.clear()
                    instrs.append(instr)
            elif term == ":":
                if i < n and stmts[i].text.startswith(".branchtargets"):
                    targets = tuple(t.strip() for t in stmts[i].text[len(".branchtargets"):].split(","))
                    fn.branch_tables[text] = targets
                    i += 1
                    continue
                if i < n and stmts[i].text.startswith(".callprototype"):
                    i += 1
                    continue
                if text in fn.labels or any(text == lbl for lbl, _ in self.pending_labels):
                    raise self.p.error(f"duplicate label '{text}'", st.pos)
                self.pending_labels.append((text, st.pos))
            elif term == "{":
                if text:
                    raise self.p.error(f"unexpected '{{' after '{text}'", st.pos)
                depth += 1
                self.scopes.append({})
            elif term == "}":
                if text:
                    raise self.p.error("statement is missing its terminating ';'", st.pos)
                depth -= 1
                if depth == 0:
                    self._finish(st.pos)
                    return i
                self.scopes.pop()
            else:
                raise self.p.error("statement is missing its terminating ';'", st.pos)
        raise self.p.error(f"function '{fn.name}' has no closing '}}'", last_pos)

    def _finish(self, pos: int) -> None:
        fn = self.fn
        instrs = fn.instructions
        if self.pending_labels or not instrs or not instrs[-1].is_unconditional_exit and not (
            instrs[-1].base == "bra" and instrs[-1].guard is None
        ):
            # falling off the end of a body is an implicit return
            ret = Instruction("ret", "ret", (), (), (), line=self.p.line_of(pos), index=len(instrs), synthetic=True)
            for label, _ in self.pending_labels:
                fn.labels[label] = ret.index
            self.pending_labels.clear()
            instrs.append(ret)
        fn.reg_types = self.reg_names
        for ins in instrs:
            for op in ins.srcs:
                if isinstance(op, Symbol) and ins.base in ("bra", "brx") and op.name not in fn.labels \
                        and op.name not in fn.branch_tables:
                    raise PTXSyntaxError(f"branch to undefined label '{op.name}'", self.p.filename, ins.line)
        build_blocks(fn)

    # ------------------------------------------------------------ declarations

    def _declare_scoped(self, name: str) -> str:
        """Names declared in a nested `{ }` scope (call-sequence `.param`s) get a
        unique suffix so every scope's `param0` is a distinct variable."""
        if len(self.scopes) == 1:
            return name
        self.scope_counter += 1
        unique = f"{name}@{self.scope_counter}"
        self.scopes[-1][name] = unique
        return unique

    def _resolve(self, name: str) -> str:
        if len(self.scopes) == 1:
            return name
        for scope in reversed(self.scopes):
            hit = scope.get(name)
            if hit is not None:
                return hit
        return name

    def _directive(self, text: str, pos: int) -> None:
        first = text.split(None, 1)[0]
        d = first[1:]
        if d == "reg":
            self._reg_decl(text, pos)
        elif d in ("local", "shared", "param", "global", "const") or (d in _LINKAGE and PTXParser._is_variable_decl(text)):
            var = self.p._parse_variable(text, pos)
            var.name = self._declare_scoped(var.name)
            self.fn.variables[var.name] = var
        elif d == "pragma":
            self.fn.pragmas.append(text[len(".pragma"):].strip().strip('"'))
        elif d in ("loc", "file", "section", "maxnreg"):
            pass
        else:
            raise self.p.error(f"unknown or unsupported directive '{first}' in function body", pos, UnsupportedPTX)

    def _reg_decl(self, text: str, pos: int) -> None:
        toks = text.replace(",", " , ").split()
        rtype = None
        vec = 1
        for tok in toks[1:]:
            if tok == ",":
                continue
            if tok.startswith("."):
                d = tok[1:]
                if d in ("v2", "v4", "v8"):
                    vec = int(d[1])
                elif d in _TYPE_SIZE:
                    rtype = d
                else:
                    raise self.p.error(f"unknown register type '{tok}'", pos, UnsupportedPTX)
                continue
            if rtype is None:
                raise self.p.error("register declaration without a type", pos)
            m = _REG_RANGE_RE.match(tok)
            if m:
                prefix, count = m.group(1), int(m.group(2))
                self.fn.reg_decls.append(RegDecl(prefix, rtype, count, vec))
                for k in range(count):
                    self.reg_names[f"{prefix}{k}"] = rtype
            else:
                name = self._declare_scoped(tok)
                self.fn.reg_decls.append(RegDecl(name, rtype, None, vec))
                self.reg_names[name] = rtype

    # ------------------------------------------------------------ instructions

    def _instruction(self, text: str, pos: int, line: int) -> Instruction:
        guard = None
        if text[0] == "@":
            gparts = text.split(None, 1)
            if len(gparts) < 2:
                raise self.p.error("predicate guard without an instruction", pos)
            g = gparts[0][1:]
            neg = g.startswith("!")
            gname = self._resolve(g[1:] if neg else g)
            if gname not in self.reg_names:
                raise self.p.error(f"undeclared predicate register '{gname}'", pos)
            guard = Reg(gname, neg)
            text = gparts[1]
        parts = text.split(None, 1)
        opcode = parts[0]
        operand_text = parts[1] if len(parts) > 1 else ""
        try:
            base, mods = opcodes.decode(opcode)[:2]
        except KeyError:
            raise self.p.error(f"unknown opcode '{opcode.split('.')[0]}' (in '{opcode}')", pos,
                               UnsupportedPTX) from None
        if base == "call":
            return self._call(opcode, mods, operand_text, guard, pos)
        ops = self._operands(operand_text, pos)
        if opcodes.has_dest(base, mods) and ops:
            first = ops[0]
            if isinstance(first, tuple):
                dsts = first
            else:
                dsts = (first,)
            srcs = tuple(ops[1:])
        else:
            dsts = ()
            srcs = tuple(ops)
        for s in srcs:
            if isinstance(s, tuple):
                raise self.p.error("'|' operand pair is only allowed as a destination", pos)
        return Instruction(opcode, base, mods, dsts, srcs, guard=guard, line=line)

    def _call(self, opcode, mods, text, guard, pos) -> Instruction:
        """`call.uni (retval0), func, (param0, param1);` — also without returns or args,
        and indirect `call %rd1, (args), prototype;`."""
        groups = _split_top(text, ",")
        groups = [g.strip() for g in groups if g.strip()]
        rets: tuple[Operand, ...] = ()
        args: tuple[Operand, ...] = ()
        if groups and groups[0].startswith("("):
            rets = tuple(self._operand(x.strip(), pos) for x in _split_top(groups[0][1:-1], ",") if x.strip())
            groups = groups[1:]
        if not groups:
            raise self.p.error("call without a target", pos)
        target = groups[0]
        if target.startswith("%"):
            raise self.p.error("indirect calls through a register are not supported", pos, UnsupportedPTX)
        if len(groups) > 1:
            if not groups[1].startswith("("):
                raise self.p.error("call arguments must be in parentheses", pos)
            args = tuple(self._operand(x.strip(), pos) for x in _split_top(groups[1][1:-1], ",") if x.strip())
        return Instruction(opcode, "call", mods, rets, args, guard=guard, line=self.p.line_of(pos), callee=target)

    def _operands(self, text: str, pos: int) -> list:
        if not text:
            return []
        if "{" in text or "(" in text:
            parts = _split_top(text, ",")
        else:
            parts = text.split(",")
        out = []
        for part in parts:
            part = part.strip()
            if "|" in part and not part.startswith("["):
                a, b = part.split("|", 1)
                out.append((self._operand(a.strip(), pos), self._operand(b.strip(), pos)))
            else:
                out.append(self._operand(part, pos))
        return out

    def _operand(self, tok: str, pos: int) -> Operand:
        # Operands repeat a lot, within and across functions. The cache is shared by
        # the module's functions, so a cached register must be declared in this one;
        # inside nested scopes names may be renamed, so no caching there.
        if len(self.scopes) == 1:
            hit = self.op_cache.get(tok)
            if hit is None or not self._declared(hit):
                hit = self.op_cache[tok] = self._operand_uncached(tok, pos)
            return hit
        return self._operand_uncached(tok, pos)

    def _declared(self, op: Operand) -> bool:
        cls = op.__class__
        if cls is Reg:
            return op.name in self.reg_names
        if cls is Address:
            return op.base.__class__ is not Reg or op.base.name in self.reg_names
        if cls is Vec:
            return all(self._declared(e) for e in op.elems)
        return True

    def _operand_uncached(self, tok: str, pos: int) -> Operand:
        if not tok:
            raise self.p.error("empty operand", pos)
        c = tok[0]
        if c == "%":
            return self._register(tok, pos)
        if c == "[":
            if tok[-1] != "]":
                raise self.p.error(f"malformed address '{tok}'", pos)
            return self._address(tok[1:-1].strip(), pos)
        if c == "!":
            r = self._operand(tok[1:], pos)
            if not isinstance(r, Reg):
                raise self.p.error(f"'!' applies only to predicates: '{tok}'", pos)
            return Reg(r.name, True)
        if c == "{":
            if tok[-1] != "}":
                raise self.p.error(f"malformed vector operand '{tok}'", pos)
            return Vec(tuple(self._operand(e.strip(), pos) for e in tok[1:-1].split(",")))
        if tok == "_":
            return Sink()
        lit = _parse_literal(tok)
        if lit is not None:
            return lit
        if c.isalpha() or c in "_$.":
            return self._symbol(tok, pos)
        raise self.p.error(f"cannot parse operand '{tok}'", pos)

    def _register(self, tok: str, pos: int) -> Operand:
        name = self._resolve(tok)
        if name in self.reg_names:
            return Reg(name)
        body = tok[1:]
        base, _, comp = body.partition(".")
        if base in SPECIAL_REGS or base.startswith("envreg"):
            return Special(base, comp or None)
        if self._resolve(tok.split(".")[0]) in self.reg_names and comp in ("x", "y", "z", "w"):
            raise self.p.error(f"vector register components are not supported: '{tok}'", pos, UnsupportedPTX)
        raise self.p.error(f"undeclared register '{tok}'", pos)

    def _symbol(self, tok: str, pos: int) -> Symbol:
        offset = 0
        for sep in ("+", "-"):
            k = tok.find(sep)
            if k > 0:
                lit = _parse_literal(tok[k:] if sep == "-" else tok[k + 1:])
                if lit is None or lit.is_float:
                    raise self.p.error(f"bad symbol offset in '{tok}'", pos)
                offset = int(lit.value)
                tok = tok[:k].strip()
                break
        return Symbol(self._resolve(tok), offset)

    def _address(self, inner: str, pos: int) -> Address:
        offset = 0
        base_text = inner
        k = inner.find("+")
        if k < 0:
            k = inner.rfind("-")
            if k <= 0:
                k = -1
        if k > 0:
            off_text = inner[k + 1:] if inner[k] == "+" else inner[k:]
            lit = _parse_literal(off_text.strip())
            if lit is None or lit.is_float:
                raise self.p.error(f"bad address offset in '[{inner}]'", pos)
            offset = int(lit.value)
            base_text = inner[:k].strip()
        if not base_text:
            raise self.p.error(f"empty address '[{inner}]'", pos)
        if base_text[0] == "%":
            reg = self._register(base_text, pos)
            if not isinstance(reg, Reg):
                raise self.p.error(f"special register used as an address: '[{inner}]'", pos)
            return Address(reg, offset)
        lit = _parse_literal(base_text)
        if lit is not None:
            return Address(None, int(lit.value) + offset)
        return Address(Symbol(self._resolve(base_text)), offset)


# ---------------------------------------------------------------- helpers


def _parse_literal(tok: str) -> Imm | None:
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


def _split_top(text: str, sep: str) -> list[str]:
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


def _match_paren(text: str, open_idx: int) -> int:
    depth = 0
    for k in range(open_idx, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError("unbalanced parentheses")


def parse_ptx(text: str, filename: str = "<ptx>") -> Module:
    """Parse PTX source text into a Module."""
    return PTXParser(text, filename).parse()


def parse_ptx_file(path: str | Path) -> Module:
    p = Path(path)
    return parse_ptx(p.read_text(), str(p))
