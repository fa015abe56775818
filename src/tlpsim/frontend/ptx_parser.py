"""A hand-written PTX parser producing the IR of `tlpsim.frontend.ir`.

The text is split into statements at `;`, `{` and `}` (after comments are blanked
out), so the common case — one instruction per line — costs a few string
operations. Module-level declarations and function headers are parsed here;
function bodies in `ptx_body`. Errors name file:line:column and show the line.
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_right
from pathlib import Path

from tlpsim.errors import PTXSyntaxError, UnsupportedPTX
from tlpsim.frontend.ir import Function, Module, Operand, Param, Variable
from tlpsim.frontend.ptx_body import FunctionBodyParser
from tlpsim.frontend.ptx_lex import (
    ARRAY_RE,
    COMMENT_RE,
    DEBUG_SECTION_RE,
    FUNC_HEADER_RE,
    FUNCTION_DIRECTIVES,
    IGNORED_MODULE_DIRECTIVES,
    LABEL_RE,
    LINE_DIRECTIVE_RE,
    LINKAGE,
    SPACES,
    STMT_RE,
    STRUCT_FMT,
    TYPE_SIZE,
    match_paren,
    parse_literal,
    split_top,
)


class Statement:
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

    def _statements(self) -> list[Statement]:
        """Split the comment-free text into statements with their absolute offsets.

        Labels are emitted as their own statements (term ':')."""

        def blank(m: re.Match) -> str:
            s = m.group()
            if s[0] == '"':
                return s
            return re.sub(r"[^\n]", " ", s)

        text = COMMENT_RE.sub(blank, self.source)
        if ".section" in text or "@@DWARF" in text:
            text = DEBUG_SECTION_RE.sub(blank, text)
        # same length, so offsets still index self.source
        text = LINE_DIRECTIVE_RE.sub(lambda m: m.group(1) + ";", text)
        self._text = text
        out: list[Statement] = []
        append = out.append
        count = self.source.count  # `text` had some newlines turned into ';'
        find = text.find
        match = STMT_RE.match
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
                    lm = LABEL_RE.match(body, offset)
                    if lm is None:
                        break
                    at = start + lm.start(1)
                    line += count("\n", line_pos, at)
                    line_pos = at
                    append(Statement(lm.group(1), ":", at, line))
                    offset = lm.end()
            rest = body[offset:] if offset else body
            stripped = rest.strip()
            if term == "{" and stripped and not FUNC_HEADER_RE.search(stripped):
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
            append(Statement(stripped, term, at, line))
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
            if st.term == "{" or FUNC_HEADER_RE.search(text):
                i = self._parse_function(stmts, i, module)
                continue
            if first == ".version":
                module.version = text.split()[1]
            elif first == ".target":
                module.target = tuple(t.strip() for t in text[len(".target"):].split(","))
            elif first == ".address_size":
                module.address_size = int(text.split()[1])
            elif first.lstrip(".") in IGNORED_MODULE_DIRECTIVES:
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
            if d in LINKAGE:
                continue
            return d in SPACES
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
            elif d in SPACES:
                space = d
            elif d == "align":
                j += 1
                align = int(toks[j])
            elif d in ("v2", "v4", "v8"):
                vec = int(d[1])
            elif d in TYPE_SIZE or d in ("texref", "samplerref", "surfref"):
                vtype = d
            elif d == "ptr" or d.startswith(("attribute", "managed")):  # .attribute(.managed) is one token
                pass
            else:
                raise self.error(f"unknown variable attribute '{tok}'", pos, UnsupportedPTX)
            j += 1
        if space is None or vtype is None or name_tok is None:
            raise self.error("malformed variable declaration", pos)
        m = ARRAY_RE.match(name_tok)
        if m is None:
            raise self.error(f"malformed variable name '{name_tok}'", pos)
        name, dims = m.group(1), m.group(2)
        elem_size = TYPE_SIZE.get(vtype, 8) * vec
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
        return Variable(name=name, space=space, type=vtype, size=size, align=align or TYPE_SIZE.get(vtype, 1) * vec,
                        count=count, extern=extern or unsized, init=init, relocs=relocs, line=self.line_of(pos),
                        visible=visible)

    def _flatten_initializer(self, text: str, pos: int) -> list[str]:
        flat = text.replace("{", " ").replace("}", " ")
        return [v.strip() for v in flat.split(",") if v.strip()]

    def _encode_initializer(self, values: list[str], vtype: str, count: int, pos: int):
        out = bytearray()
        relocs = []
        size = TYPE_SIZE[vtype]
        fmt = STRUCT_FMT.get(vtype)
        for v in values[:count]:
            lit = parse_literal(v)
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
        for part in split_top(text, ","):
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
                elif tok.startswith(".") and tok[1:] in TYPE_SIZE:
                    ptype = tok[1:]
                elif not tok.startswith("."):
                    name_tok = tok
                else:
                    raise self.error(f"unknown parameter attribute '{tok}'", pos, UnsupportedPTX)
                j += 1
            if ptype is None or name_tok is None:
                raise self.error(f"malformed parameter '{part}'", pos)
            m = ARRAY_RE.match(name_tok)
            if m is None:
                raise self.error(f"malformed parameter name '{name_tok}'", pos)
            count = 1
            for d in re.findall(r"\[(\d*)\]", m.group(2)):
                count *= int(d or 1)
            esize = TYPE_SIZE[ptype]
            params.append(Param(name=m.group(1), type=ptype, size=esize * count, align=align or esize,
                                count=count, ptr_space=ptr_space))
        return params

    def _parse_function(self, stmts: list[Statement], i: int, module: Module) -> int:
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
        end = FunctionBodyParser(self, fn, module).parse(stmts, i + 1)
        existing = module.functions.get(name)
        if existing is not None and not existing.is_declaration:
            raise self.error(f"duplicate definition of function '{name}'", pos)
        module.functions[name] = fn
        return end

    def _close_paren(self, text: str, pos: int) -> int:
        try:
            return match_paren(text, 0)
        except ValueError:
            raise self.error("unbalanced parentheses in function header", pos) from None

    def _parse_function_directives(self, fn: Function, text: str, pos: int) -> None:
        toks = re.findall(r"\.\w+|[^\s,.]+", text)
        key = None
        for tok in toks:
            if tok.startswith("."):
                key = tok[1:]
                if key not in FUNCTION_DIRECTIVES:
                    raise self.error(f"unknown function directive '{tok}'", pos, UnsupportedPTX)
                fn.directives[key] = ()
            elif key is not None:
                fn.directives[key] = fn.directives[key] + (int(tok, 0),)


def parse_ptx(text: str, filename: str = "<ptx>") -> Module:
    """Parse PTX source text into a Module."""
    return PTXParser(text, filename).parse()


def parse_ptx_file(path: str | Path) -> Module:
    p = Path(path)
    return parse_ptx(p.read_text(), str(p))
