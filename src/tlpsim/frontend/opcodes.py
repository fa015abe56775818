"""What the parser knows about PTX opcodes: the names that exist, which ones have no
destination operand, which end a basic block, and the coarse class each falls in
(the class the timing model maps to a functional unit and the stats to a mix)."""

from __future__ import annotations

from functools import lru_cache

TYPE_MODS = frozenset(
    "b8 b16 b32 b64 b128 u8 u16 u32 u64 s8 s16 s32 s64 f16 f16x2 bf16 bf16x2 "
    "f32 f32x2 f64 pred tf32 e4m3 e5m2 e4m3x2 e5m2x2 e2m1x2 e2m3x2 e3m2x2 ue8m0x2 s2f6x2 u4 s4".split()
)

# Modifier spelling -> canonical state space.
SPACE_MODS = {
    "global": "global",
    "shared": "shared",
    "shared::cta": "shared",
    "shared::cluster": "shared",
    "local": "local",
    "const": "const",
    "param": "param",
    "param::entry": "param",
    "param::func": "param",
}

# Every base opcode of PTX ISA 9.x. Parsing accepts all of them; whether the
# functional model implements one is its own business (it raises UnsupportedPTX).
KNOWN_OPCODES = frozenset(
    """
    abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind
    bmsk bra brev brkpt brx call clz clusterlaunchcontrol cnot copysign cos cp cvt
    cvta discard div dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol
    isspacep istypeof ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max mbarrier
    membar min mma mov movmatrix mul mul24 multimem nanosleep neg not or pmevent popc
    prefetch prefetchu prmt rcp red redux rem ret rsqrt sad selp set setmaxnreg setp shf
    shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix sub subc suld suq
    sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff vabsdiff2
    vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote
    vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor
    """.split()
)

# Opcodes whose operands are all sources.
NO_DEST = frozenset(
    """
    st bra brx red ret exit trap membar fence prefetch prefetchu nanosleep pmevent
    brkpt sust sured cp discard applypriority griddepcontrol setmaxnreg stmatrix
    stackrestore multimem tcgen05 wgmma
    """.split()
)

TERMINATORS = frozenset({"bra", "brx", "ret", "exit", "trap"})

_SFU = frozenset({"sin", "cos", "ex2", "lg2", "rcp", "sqrt", "rsqrt", "tanh"})
_MEM = frozenset({"ld", "ldu", "st", "prefetch", "prefetchu", "cp", "ldmatrix", "stmatrix", "discard", "applypriority"})
_WARP = frozenset({"shfl", "vote", "match", "redux", "activemask", "elect"})
TEX = frozenset({"tex", "tld4", "txq", "suld", "sust", "sured", "suq", "istypeof"})  # textures and surfaces
_TENSOR = frozenset({"mma", "wmma", "wgmma", "tcgen05", "movmatrix"})

OPCLASSES = (
    "int", "fp32", "fp64", "sfu", "mem", "atomic", "branch", "barrier",
    "call", "exit", "warp", "tex", "tensor", "other",
)


def has_dest(base: str, mods: tuple[str, ...]) -> bool:
    """Whether the first operand is a destination."""
    if base in NO_DEST:
        return False
    if base in ("bar", "barrier"):
        return "red" in mods
    if base == "mbarrier":
        return not ({"init", "inval", "expect_tx", "complete_tx"} & set(mods))
    return True


def classify(base: str, mods: tuple[str, ...], types: tuple[str, ...], space: str | None) -> str:
    """Coarse instruction class (one of OPCLASSES)."""
    if base in _MEM:
        return "mem"
    if base in ("atom", "red"):
        return "atomic"
    if base in ("bra", "brx"):
        return "branch"
    if base in ("bar", "barrier", "membar", "fence", "mbarrier"):
        return "barrier"
    if base == "call":
        return "call"
    if base in ("ret", "exit", "trap"):
        return "exit"
    if base in _WARP:
        return "warp"
    if base in TEX:
        return "tex"
    if base in _TENSOR:
        return "tensor"
    if base in ("nanosleep", "pmevent", "brkpt", "griddepcontrol", "setmaxnreg"):
        return "other"
    if "f64" in types and base not in ("mov", "ld", "st", "selp", "cvta"):
        return "fp64"
    if base in _SFU or (base == "div" and "approx" in mods):
        return "sfu"
    if base == "cvt":
        return "fp32" if any(t[0] in "fb" and t not in ("b8", "b16", "b32", "b64") for t in types) else "int"
    if any(t.startswith(("f16", "f32", "bf16", "tf32")) for t in types) and base not in ("mov", "selp"):
        return "fp32"
    return "int"


@lru_cache(maxsize=None)
def decode(opcode: str) -> tuple:
    """Split and classify a full opcode string once: returns
    (base, mods, types, space, vec, opclass). Raises KeyError for an unknown base."""
    parts = opcode.split(".")
    base = parts[0]
    if base not in KNOWN_OPCODES:
        raise KeyError(base)
    mods = tuple(parts[1:])
    types = tuple(m for m in mods if m in TYPE_MODS)
    space = next((SPACE_MODS[m] for m in mods if m in SPACE_MODS), None)
    vec = 1
    for m in mods:
        if m in ("v2", "v4", "v8"):
            vec = int(m[1])
    return base, mods, types, space, vec, classify(base, mods, types, space)
