"""Kernel names: decode the name part of Itanium C++ mangled names and
resolve user queries (``vecadd``, ``ns::kernel`` or a mangled name) to the
mangled name of a kernel.

Only the function *name* is decoded -- parameter types and template arguments
are skipped, not printed::

    _Z6vecaddPKfS0_Pfi          -> vecadd
    _ZN2ns6kernelEPf            -> kernel      (qualified: ns::kernel)
    _Z6kernelIfEvPT_i           -> kernel      (template instance)
    _ZN1a1b4deepILi3EfEEvPT0_   -> deep        (qualified: a::b::deep)
    _ZNK2ns2Op3runEf            -> run         (qualified: ns::Op::run)
    cfunc                       -> cfunc       (extern "C": unchanged)

Names nvcc gives to kernels in an anonymous namespace
(``_ZN36_GLOBAL__N__..._4anonEPf``) qualify as ``(anonymous namespace)::anon``.
If a name cannot be parsed it is returned unchanged.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from tlpsim.errors import KernelNotFound

__all__ = ["demangle_name", "find_kernel", "qualified_name"]

_OPERATORS = {
    "nw": "new", "na": "new[]", "dl": "delete", "da": "delete[]", "ps": "+", "ng": "-", "ad": "&",
    "de": "*", "co": "~", "pl": "+", "mi": "-", "ml": "*", "dv": "/", "rm": "%", "an": "&",
    "or": "|", "eo": "^", "aS": "=", "pL": "+=", "mI": "-=", "mL": "*=", "dV": "/=", "rM": "%=",
    "aN": "&=", "oR": "|=", "eO": "^=", "ls": "<<", "rs": ">>", "lS": "<<=", "rS": ">>=",
    "eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">=", "ss": "<=>", "nt": "!",
    "aa": "&&", "oo": "||", "pp": "++", "mm": "--", "cm": ",", "pm": "->*", "pt": "->", "cl": "()",
    "ix": "[]", "qu": "?", "aw": "co_await",
}
_STD_ABBREV = {
    "t": ["std"], "a": ["std", "allocator"], "b": ["std", "basic_string"], "s": ["std", "string"],
    "i": ["std", "istream"], "o": ["std", "ostream"], "d": ["std", "iostream"],
}
_BUILTIN_TYPES = set("vwbcahstijlmxynofdegz")
_BUILTIN_D_TYPES = set("dfehisuanc")  # Dd De Df Dh Di Ds Du Da Dn Dc


class _Fail(Exception):
    pass


class _Parser:
    """Recursive-descent reader of the parts of the Itanium grammar that can
    occur in a function's name (types are skipped, not decoded)."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    # -- low level
    def peek(self, n: int = 0) -> str:
        j = self.i + n
        return self.s[j] if j < len(self.s) else ""

    def take(self, n: int = 1) -> str:
        if self.i + n > len(self.s):
            raise _Fail("unexpected end")
        out = self.s[self.i : self.i + n]
        self.i += n
        return out

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise _Fail(f"expected {ch!r} at {self.i}")
        self.i += 1

    def number(self) -> int:
        start = self.i
        if self.peek() == "n":
            self.i += 1
        while self.peek().isdigit():
            self.i += 1
        if self.i == start:
            raise _Fail("expected a number")
        return int(self.s[start : self.i].replace("n", "-"))

    def seq_id_until(self, end: str = "_") -> None:
        while self.peek() and self.peek() != end:
            if not (self.peek().isdigit() or self.peek().isupper()):
                raise _Fail("bad seq-id")
            self.i += 1
        self.expect(end)

    # -- names
    def source_name(self) -> str:
        n = self.number()
        if n <= 0:
            raise _Fail("bad source-name length")
        ident = self.take(n)
        if ident.startswith("_GLOBAL__N"):
            return "(anonymous namespace)"
        return ident

    def unqualified_name(self, previous: str | None) -> str:
        c = self.peek()
        if c == "L":  # internal linkage marker (static function)
            self.i += 1
            return self.unqualified_name(previous)
        if c.isdigit():
            name = self.source_name()
        elif c == "C" and self.peek(1) in "12345I":
            self.i += 2
            if self.s[self.i - 1] == "I":
                self.take(1)
                self.skip_type()
            name = previous or "?"
        elif c == "D" and self.peek(1) in "012345":
            self.i += 2
            name = "~" + (previous or "?")
        elif c == "U" and self.peek(1) == "l":  # lambda: Ul <types> E [n] _
            self.i += 2
            while self.peek() != "E":
                self.skip_type()
            self.i += 1
            num = self.number() + 2 if self.peek().isdigit() else 1
            self.expect("_")
            name = f"{{lambda#{num}}}"
        elif c == "U" and self.peek(1) == "t":  # unnamed type: Ut [n] _
            self.i += 2
            num = self.number() + 2 if self.peek().isdigit() else 1
            self.expect("_")
            name = f"{{unnamed type#{num}}}"
        elif c == "D" and self.peek(1) == "C":  # structured binding
            self.i += 2
            parts = []
            while self.peek() != "E":
                parts.append(self.source_name())
            self.i += 1
            name = "[" + ", ".join(parts) + "]"
        elif c.islower() and self.peek(1):
            code = self.take(2)
            if code == "cv":
                self.skip_type()
                name = "operator (conversion)"
            elif code == "li":
                name = 'operator"" ' + self.source_name()
            elif code[0] == "v" and code[1].isdigit():
                name = "operator " + self.source_name()
            elif code in _OPERATORS:
                op = _OPERATORS[code]
                name = "operator" + (" " + op if op[0].isalpha() else op)
            else:
                raise _Fail(f"unknown operator {code!r}")
        else:
            raise _Fail(f"unexpected {c!r} in name")
        while self.peek() == "B":  # ABI tags: not part of the name
            self.i += 1
            self.source_name()
        return name

    def substitution(self) -> list[str]:
        """``S...``: standard abbreviation or back-reference (unresolved -> '?')."""
        self.expect("S")
        c = self.peek()
        if c in _STD_ABBREV:
            self.i += 1
            parts = list(_STD_ABBREV[c])
            if c == "t":
                parts.append(self.unqualified_name(None))
            return parts
        self.seq_id_until("_")
        return ["?"]

    def nested_name(self) -> list[str]:
        self.expect("N")
        while self.peek() in ("r", "V", "K", "R", "O"):  # cv- and ref-qualifiers of methods
            self.i += 1
        parts: list[str] = []
        while True:
            c = self.peek()
            if c == "E":
                self.i += 1
                break
            if c == "":
                raise _Fail("unterminated nested name")
            if c == "I":
                self.template_args()
            elif c == "S" and not parts:
                parts.extend(self.substitution())
            elif c == "T":
                self.template_param()
                parts.append("?")
            elif c == "D" and self.peek(1) in ("t", "T"):
                self.i += 2
                self.skip_expression_until_e()
                parts.append("decltype(...)")
            elif c == "M":  # data-member-prefix (closure in a member initializer)
                self.i += 1
            else:
                parts.append(self.unqualified_name(parts[-1] if parts else None))
        if not parts:
            raise _Fail("empty nested name")
        return parts

    def local_name(self) -> list[str]:
        self.expect("Z")
        outer = self.encoding()
        self.expect("E")
        if self.peek() == "s":  # string literal
            self.i += 1
            entity = ["string literal"]
        elif self.peek() == "d":  # default argument scope: d [n] _ <name>
            self.i += 1
            if self.peek().isdigit():
                self.number()
            self.expect("_")
            entity = self.name()
        else:
            entity = self.name()
        if self.peek() == "_":  # discriminator
            self.i += 1
            if self.peek() == "_":
                self.i += 1
                self.number()
                self.expect("_")
            else:
                self.number()
        return outer + entity

    def name(self) -> list[str]:
        c = self.peek()
        if c == "N":
            parts = self.nested_name()
        elif c == "Z":
            parts = self.local_name()
        elif c == "S":
            parts = self.substitution()
        else:
            parts = [self.unqualified_name(None)]
        if self.peek() == "I":
            self.template_args()
        return parts

    def encoding(self) -> list[str]:
        """<name> <bare-function-type>: returns the name, skips the types
        (up to the end of input or an ``E`` closing an enclosing construct)."""
        parts = self.name()
        while self.peek() and self.peek() not in ("E", "."):
            self.skip_type()
        return parts

    # -- skipping types and template arguments
    def template_param(self) -> None:
        self.expect("T")
        self.seq_id_until("_")

    def template_args(self) -> None:
        self.expect("I")
        while self.peek() != "E":
            if not self.peek():
                raise _Fail("unterminated template args")
            self.template_arg()
        self.i += 1

    def template_arg(self) -> None:
        c = self.peek()
        if c == "L":
            self.literal()
        elif c == "X":
            self.i += 1
            self.skip_expression_until_e()
        elif c == "J":  # argument pack
            self.i += 1
            while self.peek() != "E":
                if not self.peek():
                    raise _Fail("unterminated pack")
                self.template_arg()
            self.i += 1
        else:
            self.skip_type()

    def literal(self) -> None:
        self.expect("L")
        if self.peek() == "_" and self.peek(1) == "Z":
            self.i += 2
            self.encoding()
            self.expect("E")
            return
        if self.peek() == "Z":  # some compilers omit the underscore
            self.i += 1
            self.encoding()
            self.expect("E")
            return
        self.skip_type()
        while self.peek() and self.peek() != "E":
            self.i += 1
        self.expect("E")

    def skip_expression_until_e(self) -> None:
        """Skip an expression up to and including its closing ``E`` (heuristic:
        tracks nested ``E``-terminated constructs and skips source names)."""
        depth = 1
        while depth:
            c = self.peek()
            if not c:
                raise _Fail("unterminated expression")
            if c == "E":
                depth -= 1
                self.i += 1
            elif c == "L":
                self.literal()
            elif c.isdigit():
                self.source_name()
            elif c == "T" and (self.peek(1) == "_" or self.peek(1).isdigit()):
                self.template_param()
            elif c == "S" and (self.peek(1) == "_" or self.peek(1).isdigit() or self.peek(1).isupper()):
                self.i += 1
                self.seq_id_until("_")
            elif c in "XNIJZ":
                depth += 1
                self.i += 1
            elif c == "f" and self.peek(1) == "p":
                self.i += 2
                while self.peek() in ("r", "V", "K"):
                    self.i += 1
                if self.peek().isdigit():
                    self.number()
                self.expect("_")
            else:
                self.i += 1

    def skip_type(self) -> None:
        c = self.peek()
        if not c:
            raise _Fail("expected a type")
        if c in _BUILTIN_TYPES:
            self.i += 1
        elif c == "u":  # vendor extended type
            self.i += 1
            self.source_name()
            if self.peek() == "I":
                self.template_args()
        elif c in "rVK" or c in "PROCG":  # cv-qualifiers, pointer/reference/complex
            self.i += 1
            self.skip_type()
        elif c == "U":  # vendor qualifier
            self.i += 1
            self.source_name()
            if self.peek() == "I":
                self.template_args()
            self.skip_type()
        elif c == "F":  # function type
            self.i += 1
            if self.peek() == "Y":
                self.i += 1
            while self.peek() != "E":
                if self.peek() in ("R", "O") and self.peek(1) == "E":
                    self.i += 1
                    continue
                self.skip_type()
            self.i += 1
        elif c == "A":  # array
            self.i += 1
            if self.peek() == "_":
                pass
            elif self.peek().isdigit():
                self.number()
            else:
                self.skip_expression_token()
            self.expect("_")
            self.skip_type()
        elif c == "M":  # pointer to member
            self.i += 1
            self.skip_type()
            self.skip_type()
        elif c == "T":
            self.template_param()
            if self.peek() == "I":
                self.template_args()
        elif c == "S":
            if self.peek(1) == "t":
                self.name()
            else:
                self.substitution()
                if self.peek() == "I":
                    self.template_args()
        elif c in "NZ" or c.isdigit():
            self.name()
        elif c == "D":
            d = self.peek(1)
            if d in _BUILTIN_D_TYPES:
                self.i += 2
            elif d == "p":  # pack expansion
                self.i += 2
                self.skip_type()
            elif d in ("t", "T"):
                self.i += 2
                self.skip_expression_until_e()
            elif d == "v":  # vector type
                self.i += 2
                if self.peek().isdigit():
                    self.number()
                else:
                    self.skip_expression_token()
                self.expect("_")
                self.skip_type()
            elif d == "F":  # DF<N>_ / DF16b
                self.i += 2
                self.number()
                if self.peek() in ("b", "_", "x"):
                    self.i += 1
            elif d in ("B", "U"):  # _BitInt
                self.i += 2
                self.number()
                self.expect("_")
            elif d == "o":
                self.i += 2
                self.skip_type()
            elif d in ("O", "w"):  # exception specs
                self.i += 2
                self.skip_expression_until_e()
                self.skip_type()
            elif d == "x":
                self.i += 2
                self.skip_type()
            else:
                raise _Fail(f"unknown type D{d}")
        else:
            raise _Fail(f"unexpected {c!r} in type")

    def skip_expression_token(self) -> None:
        # Only used for dependent array bounds / vector sizes: skip to the '_'.
        while self.peek() and self.peek() != "_":
            self.i += 1


def _parse(mangled: str) -> list[str] | None:
    """Name components of a mangled name, or None if it is not a mangled
    C++ name (extern "C") or cannot be parsed."""
    if not isinstance(mangled, str):
        raise TypeError(f"expected a str, got {type(mangled).__name__}")
    text = mangled
    if text.startswith("__Z"):  # some platforms add an underscore
        text = text[1:]
    if not text.startswith("_Z"):
        return None
    p = _Parser(text)
    p.i = 2
    try:
        parts = p.name()
    except (_Fail, ValueError):
        return _fallback(text)
    return parts


def _fallback(text: str) -> list[str] | None:
    """Best effort when the full grammar walk fails: read the leading
    nested/unscoped source names and stop at the first construct we cannot
    read (the kernel name normally precedes template arguments)."""
    p = _Parser(text)
    p.i = 2
    parts: list[str] = []
    try:
        if p.peek() == "N":
            p.i += 1
            while p.peek() in ("r", "V", "K", "R", "O"):
                p.i += 1
            while p.peek() == "L" or p.peek().isdigit():
                if p.peek() == "L":
                    p.i += 1
                    continue
                parts.append(p.source_name())
        else:
            while p.peek() == "L":
                p.i += 1
            parts.append(p.source_name())
    except (_Fail, ValueError):
        pass
    return parts or None


def qualified_name(mangled: str) -> str:
    """Qualified function name: ``_ZN2ns6kernelEPf`` -> ``ns::kernel``.

    Non-mangled (``extern "C"``) names and names that cannot be decoded are
    returned unchanged.
    """
    parts = _parse(mangled)
    if not parts:
        return mangled
    return "::".join(parts)


def demangle_name(mangled: str, *, qualified: bool = False) -> str:
    """Plain (unqualified) function name: ``_Z6vecaddPKfS0_Pfi`` -> ``vecadd``,
    ``_ZN2ns6kernelEPf`` -> ``kernel`` (``ns::kernel`` with ``qualified=True``),
    ``_Z6kernelIfEvPT_i`` -> ``kernel``.  ``extern "C"`` names and names that
    cannot be decoded are returned unchanged."""
    parts = _parse(mangled)
    if not parts:
        return mangled
    return "::".join(parts) if qualified else parts[-1]


def find_kernel(names: Iterable[str], query: str) -> str:
    """Resolve ``query`` to one of ``names`` (mangled function names).

    ``query`` may be a mangled name from ``names`` (returned as is), a plain
    name (``vecadd``) or a qualified name (``ns::kernel``) that matches the
    demangled name of exactly one entry.  Raises :class:`KernelNotFound`
    when nothing matches (listing the available kernels) or when several do
    (listing the candidates' mangled names).
    """
    pool = list(dict.fromkeys(names))
    if query in pool:
        return query
    query_s = query.strip()
    if query_s in pool:
        return query_s
    plain = {n: demangle_name(n) for n in pool}
    qual = {n: qualified_name(n) for n in pool}
    q_norm = query_s.removeprefix("::")
    matches = [n for n in pool if plain[n] == q_norm or qual[n] == q_norm]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        listing = "\n".join(f"  {n}  ({qual[n]})" for n in matches)
        raise KernelNotFound(
            f"kernel name {query!r} is ambiguous: it matches {len(matches)} kernels; "
            f"pass one of these mangled names instead:\n{listing}"
        )
    if not pool:
        raise KernelNotFound(f"no kernel named {query!r}: the module contains no kernels")
    available = sorted(dict.fromkeys(plain[n] for n in pool))
    message = f"no kernel named {query!r}; available kernels: {', '.join(available)}"
    close = difflib.get_close_matches(q_norm, available, n=3)
    if close:
        message += f" (did you mean {' or '.join(repr(c) for c in close)}?)"
    raise KernelNotFound(message)
