"""The PTX intermediate representation: Module -> Function -> BasicBlock -> Instruction.

Plain data, produced by the parser and read (never mutated) by the functional
model, the analyses and the timing model. Operands are small frozen records so
that consumers can dispatch on their class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from tlpsim.frontend import opcodes

# ---------------------------------------------------------------- operands


@dataclass(frozen=True, slots=True)
class Reg:
    """A register operand (`%r1`, `%p2`, `%rd3`); `neg` is a `!` on a predicate source."""

    name: str
    neg: bool = False

    def __str__(self) -> str:
        return ("!" if self.neg else "") + self.name


@dataclass(frozen=True, slots=True)
class Special:
    """A special register such as `%tid.x` (name='tid', component='x') or `%laneid`."""

    name: str
    component: str | None = None

    def __str__(self) -> str:
        return "%" + self.name + ("." + self.component if self.component else "")


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate. `is_float` marks `0f`/`0d`/decimal-float literals; `value` is a
    Python int or float (a `0f` literal is decoded from its IEEE bits)."""

    value: int | float
    is_float: bool = False
    text: str = ""

    def __str__(self) -> str:
        return self.text or str(self.value)


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named entity used as a value: a variable's address, a function, or a label."""

    name: str
    offset: int = 0

    def __str__(self) -> str:
        return self.name + (f"+{self.offset}" if self.offset else "")


@dataclass(frozen=True, slots=True)
class Address:
    """A memory operand `[base+offset]`; base is a Reg, a Symbol, or None for `[imm]`."""

    base: Reg | Symbol | None
    offset: int = 0

    def __str__(self) -> str:
        if self.base is None:
            return f"[{self.offset}]"
        return f"[{self.base}{'+' + str(self.offset) if self.offset else ''}]"


@dataclass(frozen=True, slots=True)
class Vec:
    """A vector operand `{%f1, %f2, _, %f4}`."""

    elems: tuple["Operand", ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elems)) + "}"


@dataclass(frozen=True, slots=True)
class Sink:
    """The bit bucket `_`."""

    def __str__(self) -> str:
        return "_"


Operand = Union[Reg, Special, Imm, Symbol, Address, Vec, Sink]


# ---------------------------------------------------------------- instructions


@dataclass(slots=True)
class Instruction:
    """One PTX instruction with its opcode split into base and modifiers.

    `dsts`/`srcs` follow PTX operand order with destinations removed from the front
    (for `setp p|q, ...` both predicates are destinations). For `call`, `dsts` are the
    return parameters, `srcs` the arguments and `callee` the function name.
    """

    opcode: str
    base: str
    mods: tuple[str, ...]
    dsts: tuple[Operand, ...]
    srcs: tuple[Operand, ...]
    guard: Reg | None = None
    line: int = 0
    index: int = -1
    block: int = -1
    callee: str | None = None
    synthetic: bool = False
    # decoded from mods once, because every consumer asks for them
    types: tuple[str, ...] = ()
    space: str | None = None
    vec: int = 1
    opclass: str = "alu"

    def __post_init__(self) -> None:
        _, _, self.types, self.space, self.vec, self.opclass = opcodes.decode(self.opcode)

    @property
    def type(self) -> str | None:
        """The last type modifier (the operation type for most opcodes)."""
        return self.types[-1] if self.types else None

    def has(self, mod: str) -> bool:
        return mod in self.mods

    @property
    def is_branch(self) -> bool:
        return self.base in ("bra", "brx")

    @property
    def is_terminator(self) -> bool:
        """Ends a basic block: branches and kernel/function exits."""
        return self.base in opcodes.TERMINATORS

    @property
    def is_unconditional_exit(self) -> bool:
        return self.base in ("ret", "exit", "trap") and self.guard is None

    @property
    def branch_target(self) -> str | None:
        if self.base == "bra" and self.srcs and isinstance(self.srcs[0], Symbol):
            return self.srcs[0].name
        return None

    def __str__(self) -> str:
        guard = f"@{self.guard} " if self.guard is not None else ""
        if self.base == "call":
            ret = f"({', '.join(map(str, self.dsts))}), " if self.dsts else ""
            args = f", ({', '.join(map(str, self.srcs))})" if self.srcs else ""
            return f"{guard}{self.opcode} {ret}{self.callee}{args};"
        ops = ", ".join(map(str, self.dsts + self.srcs))
        return f"{guard}{self.opcode}{' ' + ops if ops else ''};"


@dataclass(slots=True)
class BasicBlock:
    """A maximal straight-line run of instructions `[start, end)` in its function."""

    index: int
    start: int
    end: int
    labels: tuple[str, ...] = ()
    succs: tuple[int, ...] = ()
    preds: tuple[int, ...] = ()

    def __len__(self) -> int:
        return self.end - self.start


# ---------------------------------------------------------------- declarations


@dataclass(slots=True)
class Variable:
    """A declared variable in a state space (global, const, shared, local, param).

    `size` is in bytes (0 for `.extern .shared` arrays whose size comes at launch);
    `init` holds the initialiser bytes, `relocs` (offset, symbol) pairs for
    initialisers that are addresses of other variables.
    """

    name: str
    space: str
    type: str
    size: int
    align: int
    count: int = 1
    extern: bool = False
    init: bytes | None = None
    relocs: tuple[tuple[int, str], ...] = ()
    line: int = 0
    visible: bool = False


@dataclass(slots=True)
class Param:
    """A kernel or device-function parameter; `ptr_space`/`ptr_align` record `.ptr` attributes."""

    name: str
    type: str
    size: int
    align: int
    count: int = 1
    ptr_space: str | None = None


@dataclass(slots=True)
class RegDecl:
    """A `.reg` declaration: `%r<62>` declares prefix '%r' with 62 names `%r0..%r61`."""

    prefix: str
    type: str
    count: int | None  # None: a single register named exactly `prefix`
    vec: int = 1


@dataclass(slots=True)
class Function:
    """A kernel (`.entry`) or device function (`.func`)."""

    name: str
    is_entry: bool
    params: list[Param] = field(default_factory=list)
    ret_params: list[Param] = field(default_factory=list)
    reg_decls: list[RegDecl] = field(default_factory=list)
    variables: dict[str, Variable] = field(default_factory=dict)
    instructions: list[Instruction] = field(default_factory=list)
    blocks: list[BasicBlock] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    branch_tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)
    pragmas: list[str] = field(default_factory=list)
    visible: bool = False
    is_declaration: bool = False
    line: int = 0
    reg_types: dict[str, str] = field(default_factory=dict)
    # results of analyses over this (immutable after parsing) function, keyed by analysis name
    analyses: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return "entry" if self.is_entry else "func"

    def reg_type(self, name: str) -> str:
        return self.reg_types[name]

    def block_of(self, instr_index: int) -> BasicBlock:
        return self.blocks[self.instructions[instr_index].block]

    def label_index(self, label: str) -> int:
        return self.labels[label]

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)


@dataclass(slots=True)
class Module:
    """A parsed PTX file: header, module-scope variables and functions."""

    version: str = ""
    target: tuple[str, ...] = ()
    address_size: int = 64
    variables: dict[str, Variable] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    filename: str = "<ptx>"
    source: str = ""

    @property
    def kernels(self) -> dict[str, Function]:
        return {n: f for n, f in self.functions.items() if f.is_entry}

    @property
    def arch(self) -> str | None:
        return next((t for t in self.target if t.startswith("sm_")), None)

    def get_kernel(self, name: str) -> Function:
        """Find a kernel by mangled, plain (`vecadd`) or qualified (`ns::k`) name."""
        from tlpsim.frontend.names import find_kernel

        return self.functions[find_kernel(self.kernels.keys(), name)]

    def get_function(self, name: str) -> Function:
        return self.functions[name]
