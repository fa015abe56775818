"""Parsing of one PTX function body: declarations, labels, nested scopes and
instructions with their operands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tlpsim.errors import PTXSyntaxError, UnsupportedPTX
from tlpsim.frontend import opcodes
from tlpsim.frontend.blocks import build_blocks
from tlpsim.frontend.ir import Address, Function, Instruction, Module, Operand, Reg, RegDecl, Sink, Special, Symbol, Vec
from tlpsim.frontend.ptx_lex import LINKAGE, REG_RANGE_RE, SPECIAL_REGS, TYPE_SIZE, parse_literal, split_top

#: registers one function may declare: far above what nvcc emits for the largest kernels
#: (thousands), far below what takes the parser seconds and gigabytes (10^7)
MAX_REGISTERS = 1 << 20

if TYPE_CHECKING:
    from tlpsim.frontend.ptx_parser import PTXParser, Statement


class FunctionBodyParser:
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
        self.positions: list[int] = []  # source offset of each instruction, for errors

    def parse(self, stmts: list[Statement], i: int) -> int:
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
                try:
                    if text[0] == ".":
                        self._directive(text, st.pos)
                        continue
                    instr = self._instruction(text, st.pos, st.line)
                except PTXSyntaxError as exc:
                    raise self._missing_semicolon(text, st.pos) or exc from None
                instr.index = len(instrs)
                self.positions.append(st.pos)
                for label, lpos in self.pending_labels:
                    fn.labels[label] = instr.index
                self.pending_labels.clear()
                instrs.append(instr)
            elif term == ":":
                text = self._resolve(text)
                if i < n and stmts[i].text.startswith(".branchtargets"):
                    targets = tuple(self._resolve(t.strip()) for t in stmts[i].text[len(".branchtargets"):].split(","))
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
                self._scope_labels(stmts, i)
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
        for ins, pos in zip(instrs, self.positions):
            if ins.base in ("bra", "brx"):
                for op in ins.srcs:
                    if isinstance(op, Symbol) and op.name not in fn.labels and op.name not in fn.branch_tables:
                        raise self.p.error(f"branch to undefined label '{op.name}'", pos)
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

    def _scope_labels(self, stmts: list[Statement], i: int) -> None:
        """Labels defined directly in a nested scope (inline asm blocks, which nvcc
        may paste several times) are local to it: rename them apart up front so
        forward branches resolve."""
        depth = 0
        while i < len(stmts):
            st = stmts[i]
            if st.term == "{":
                depth += 1
            elif st.term == "}":
                if depth == 0:
                    return
                depth -= 1
            elif st.term == ":" and depth == 0:
                self._declare_scoped(st.text)
            i += 1

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
        elif d in ("local", "shared", "param", "global", "const") or (d in LINKAGE and self.p._is_variable_decl(text)):
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
                elif d in TYPE_SIZE:
                    rtype = d
                else:
                    raise self.p.error(f"unknown register type '{tok}'", pos, UnsupportedPTX)
                continue
            if rtype is None:
                raise self.p.error("register declaration without a type", pos)
            m = REG_RANGE_RE.match(tok)
            if m:
                prefix, count = m.group(1), int(m.group(2))
                if len(self.reg_names) + count > MAX_REGISTERS:  # each name costs memory: 2e9 would never finish
                    raise self.p.error(f"'{tok}' declares {count:,} registers; tlpsim accepts at most "
                                       f"{MAX_REGISTERS:,} in a function (declared before: {len(self.reg_names):,})",
                                       pos)
                self.fn.reg_decls.append(RegDecl(prefix, rtype, count, vec))
                for k in range(count):
                    self.reg_names[f"{prefix}{k}"] = rtype
            else:
                name = self._declare_scoped(tok)
                self.fn.reg_decls.append(RegDecl(name, rtype, None, vec))
                self.reg_names[name] = rtype

    def _missing_semicolon(self, text: str, pos: int) -> PTXSyntaxError | None:
        """The error to give for a statement that failed to parse because it ran on
        into the next line (a `;` left out), or None if it does not look like that."""
        head, sep, tail = text.partition("\n")
        nxt = tail.strip()
        if not sep or not nxt:
            return None
        word = nxt.split(None, 1)[0]
        if word.startswith("@") and len(nxt.split(None, 1)) > 1:  # a guard: the opcode follows it
            word = nxt.split(None, 2)[1]
        if not (word.startswith(".") or word.split(".")[0] in opcodes.KNOWN_OPCODES):
            return None
        first = nxt.splitlines()[0].strip()
        return self.p.error(f"missing ';' at the end of this line: the next line ('{first}') was read as part "
                            "of its statement", pos + len(head.rstrip()))

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
            gtype = self.reg_names.get(gname)
            if gtype is None:
                raise self.p.error(f"undeclared predicate register '{gname}'", pos)
            if gtype != "pred":
                raise self.p.error(f"guard '{gname}' is a .{gtype} register, not a predicate", pos)
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
        ops = self._tex_operands(operand_text, pos) if base in opcodes.TEX else self._operands(operand_text, pos)
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
        groups = split_top(text, ",")
        groups = [g.strip() for g in groups if g.strip()]
        rets: tuple[Operand, ...] = ()
        args: tuple[Operand, ...] = ()
        if groups and groups[0].startswith("("):
            rets = tuple(self._operand(x.strip(), pos) for x in split_top(groups[0][1:-1], ",") if x.strip())
            groups = groups[1:]
        if not groups:
            raise self.p.error("call without a target", pos)
        target = groups[0]
        if target.startswith("%"):
            raise self.p.error("indirect calls through a register are not supported", pos, UnsupportedPTX)
        if len(groups) > 1:
            if not groups[1].startswith("("):
                raise self.p.error("call arguments must be in parentheses", pos)
            args = tuple(self._operand(x.strip(), pos) for x in split_top(groups[1][1:-1], ",") if x.strip())
        return Instruction(opcode, "call", mods, rets, args, guard=guard, line=self.p.line_of(pos), callee=target)

    def _operands(self, text: str, pos: int) -> list:
        if not text:
            return []
        if "{" in text or "(" in text:
            parts = split_top(text, ",")
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

    def _tex_operands(self, text: str, pos: int) -> list:
        """Operands of texture/surface instructions: `[tex, {coords}]`,
        `[tex, sampler, {coords}]` and `[surf, {coords}]` become one Vec of the
        handle, sampler and coordinate operands, so the analyses see the registers
        read (the functional model rejects these instructions by name)."""
        out = []
        for part in split_top(text, ","):
            part = part.strip()
            if part.startswith("[") and part.endswith("]") and len(split_top(part[1:-1], ",")) > 1:
                elems: list[Operand] = []
                for piece in split_top(part[1:-1], ","):
                    op = self._operand(piece.strip(), pos)
                    elems.extend(op.elems if isinstance(op, Vec) else (op,))
                out.append(Vec(tuple(elems)))
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
        lit = parse_literal(tok)
        if lit is not None:
            return lit
        if c.isalpha() or c in "_$.":
            name = self._resolve(tok)
            if name in self.reg_names:  # registers need not start with '%'
                return Reg(name)
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
                lit = parse_literal(tok[k:] if sep == "-" else tok[k + 1:])
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
            lit = parse_literal(off_text.strip())
            if lit is None or lit.is_float:
                raise self.p.error(f"bad address offset in '[{inner}]'", pos)
            offset = int(lit.value)
            base_text = inner[:k].strip()
        if not base_text:
            raise self.p.error(f"empty address '[{inner}]'", pos)
        if base_text[0] == "%" or self._resolve(base_text) in self.reg_names:
            reg = self._register(base_text, pos) if base_text[0] == "%" else Reg(self._resolve(base_text))
            if not isinstance(reg, Reg):
                raise self.p.error(f"special register used as an address: '[{inner}]'", pos)
            return Address(reg, offset)
        lit = parse_literal(base_text)
        if lit is not None:
            return Address(None, int(lit.value) + offset)
        return Address(Symbol(self._resolve(base_text)), offset)
