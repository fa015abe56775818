"""Integer arithmetic (PTX ISA "Integer Arithmetic" and "Extended-Precision
Integer Arithmetic") and `mov`, plus the helpers the rest of the family shares.

Everything works on the raw bits of the PTX type with NumPy's wrap-around integer
arithmetic; signed/unsigned only matters where PTX says so (comparisons, high
halves of products, division, right shifts, saturation). Choices where PTX leaves
the result unspecified:

* integer division by zero gives all ones (-1) for `div` and the dividend for
  `rem` (i.e. rem = a - q*b with that q), for signed and unsigned types;
  `div.s*` of INT_MIN by -1 gives INT_MIN (and `rem` 0) without trapping.
* `add.cc`/`sub.cc` and friends keep CC.CF per thread in `st.carry` (0/1);
  `sub.cc`/`subc` store the *borrow* as PTX defines it (`subc: d = a - (b + CF)`).

Opcodes shared with floating-point forms (add sub mul mad div abs neg min max) are
dispatched on the instruction type: float types go to the builder the floating
family registered for the same opcode (or to `FLOAT_BUILDERS[base]`).
Logic, shift and bit-manipulation instructions live in `integer_bits`, compare and
select instructions in `integer_cmp`; this module imports both, so importing
`integer` registers the whole family.
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Imm, Reg, Sink, Symbol, Vec
from tlpsim.functional.operands import immediate
from tlpsim.functional.semantics import SEMANTICS, semantic
from tlpsim.functional.state import VALUE

# The floating family registers its own builders for add/sub/mul/...; import it first
# (when present) so that the float forms can be chained below whatever the import order.
try:
    import tlpsim.functional.semantics.floating  # noqa: F401
except ModuleNotFoundError as exc:  # pragma: no cover - only while the family is missing
    if exc.name != "tlpsim.functional.semantics.floating":
        raise

FLOAT_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2", "f32", "f32x2", "f64", "tf32"})
INT_TYPES = frozenset({"b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"})
X2_TYPES = frozenset({"u16x2", "s16x2"})
U64 = np.uint64
FLOAT_BUILDERS: dict = {}  # base -> builder for float forms of shared opcodes (optional hook)

# ---------------------------------------------------------------- helpers shared with integer_bits and integer_cmp


def width(t: str) -> int:
    return 32 if t in X2_TYPES else VALUE[t].itemsize * 8


def utype(t: str) -> str:
    return f"u{width(t)}"


def btype(t: str) -> str:
    return f"b{width(t)}"


def is_signed(t: str) -> bool:
    return t[0] == "s"


def all_ones(bits: int) -> int:
    return (1 << bits) - 1


def quiet(run, ins, risky: bool = False):
    """Silence NumPy warnings around `run` when it may do arithmetic on NumPy scalars
    (immediates, uniform special registers): always when no source is a register,
    and for `risky` closures (intermediate scalar arithmetic) when any source isn't."""
    regs = [isinstance(s, Reg) for s in ins.srcs]
    if all(regs) or (not risky and any(regs)):
        return run

    def run_quiet(st, idx):
        with np.errstate(all="ignore"):
            return run(st, idx)
    return run_quiet


def need(ins, oc, n_dst: int, n_src: int) -> None:
    if len(ins.dsts) != n_dst or len(ins.srcs) != n_src:
        raise oc.unsupported(ins, f"operand count (expected {n_dst} destination(s) and {n_src} source(s))")


def need_type(ins, oc, allowed) -> str:
    t = ins.type or next((m for m in ins.mods if m in X2_TYPES), None)  # u16x2/s16x2 aren't TYPE_MODS
    if t not in allowed:
        raise oc.unsupported(ins, f"type .{t}")
    return t


def bits_reader(oc, op, t: str):
    """Read `op` as the raw bits of type `t` (float immediates are encoded at build time)."""
    b = btype(t)
    if isinstance(op, Imm) and VALUE[t].kind == "f":
        val = np.asarray(immediate(op.value, op.is_float, t)).view(VALUE[b])[()]
        return lambda st, idx: val
    return oc.reader(op, b)


def full_reader(oc, op, t: str):
    """A reader that always yields a contiguous array of len(idx) (for byte/half views)."""
    r = oc.reader(op, t)
    if isinstance(op, Reg):
        return r
    dt = VALUE[t]
    return lambda st, idx: np.full(idx.shape, r(st, idx), dtype=dt)


def mul_hi_u64(a, b):
    """High 64 bits of the 128-bit product of uint64 values (32-bit limbs)."""
    m, s = U64(0xFFFFFFFF), U64(32)
    a0, a1, b0, b1 = a & m, a >> s, b & m, b >> s
    p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
    mid = (p00 >> s) + (p01 & m) + (p10 & m)
    return a1 * b1 + (p01 >> s) + (p10 >> s) + (mid >> s)


def mul_hi_s64(a, b):
    """High 64 bits of the signed 128-bit product of int64 values."""
    ua, ub = a.astype(U64), b.astype(U64)
    hi = mul_hi_u64(ua, ub)
    hi = hi - np.where(a < 0, ub, U64(0)) - np.where(b < 0, ua, U64(0))
    return hi.astype(np.int64)


def add_carry(a, b, cin, bits: int):
    """(a + b + cin mod 2^bits, carry-out) for unsigned a, b; cin uint64 or None."""
    if bits == 32:
        s = a.astype(U64) + b
        if cin is not None:
            s = s + cin
        return s.astype(np.uint32), s >> U64(32)
    s = a + b
    c = s < a
    if cin is not None:
        s2 = s + cin
        c = c | (s2 < s)
        s = s2
    return s, c.astype(U64)


def sub_borrow(a, b, cin, bits: int):
    """(a - (b + cin) mod 2^bits, borrow-out) for unsigned a, b; cin uint64 or None."""
    if bits == 32:
        s = a.astype(U64) - b
        if cin is not None:
            s = s - cin
        return s.astype(np.uint32), s >> U64(63)
    d = a - b
    brw = a < b
    if cin is not None:
        brw = brw | (d < cin)
        d = d - cin
    return d, brw.astype(U64)


def shared(*bases: str):
    """Register an integer builder for opcodes that also have floating-point forms."""

    def register(builder):
        for base in bases:
            other = SEMANTICS.get(base)

            def build(ins, oc, _builder=builder, _other=other, _base=base):
                if ins.type in FLOAT_TYPES:
                    fb = FLOAT_BUILDERS.get(_base) or _other
                    if fb is None:
                        raise oc.unsupported(ins, "floating-point form (no floating-point semantics registered)")
                    return fb(ins, oc)
                return _builder(ins, oc)
            build.__name__ = f"build_{base}"
            SEMANTICS[base] = build
        return builder
    return register


# ---------------------------------------------------------------- add / sub (and carry chains)

_ADD_TYPES = INT_TYPES | X2_TYPES


@shared("add", "sub")
def build_add_sub(ins, oc):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, _ADD_TYPES)
    sub = ins.base == "sub"
    ufunc = np.subtract if sub else np.add
    if t in X2_TYPES:
        if ins.has("cc") or ins.has("sat"):
            raise oc.unsupported(ins, "modifier")
        return _halves(ins, oc, ufunc, t)
    if ins.has("cc"):
        return _carry_op(ins, oc, sub=sub, cin=False, cout=True)
    ra, rb = oc.reader(ins.srcs[0], t), oc.reader(ins.srcs[1], t)
    if ins.has("sat"):
        if t != "s32":
            raise oc.unsupported(ins, ".sat (only .s32 saturates)")
        wr = oc.writer(ins.dsts[0], t)

        def run_sat(st, idx):
            r = ufunc(ra(st, idx).astype(np.int64), rb(st, idx))
            wr(st, idx, np.clip(r, -2**31, 2**31 - 1).astype(np.int32))
        return quiet(run_sat, ins)
    wr = oc.writer(ins.dsts[0], t)

    def run(st, idx):
        wr(st, idx, ufunc(ra(st, idx), rb(st, idx)))
    return quiet(run, ins)


@semantic("addc", "subc")
def build_addc_subc(ins, oc):
    need(ins, oc, 1, 2)
    return _carry_op(ins, oc, sub=ins.base == "subc", cin=True, cout=ins.has("cc"))


def _carry_op(ins, oc, *, sub: bool, cin: bool, cout: bool):
    t = need_type(ins, oc, ("u32", "s32", "u64", "s64"))
    u, bits = utype(t), width(t)
    ra, rb = oc.reader(ins.srcs[0], u), oc.reader(ins.srcs[1], u)
    wr = oc.writer(ins.dsts[0], t)
    op = sub_borrow if sub else add_carry

    def run(st, idx):
        d, c = op(ra(st, idx), rb(st, idx), st.carry[idx] if cin else None, bits)
        wr(st, idx, d)
        if cout:
            st.carry[idx] = c
    return quiet(run, ins)


def _halves(ins, oc, ufunc, t, relu: bool = False):
    """u16x2/s16x2: operate on both 16-bit halves of b32 operands at once."""
    hd = np.dtype(np.int16 if t == "s16x2" else np.uint16)
    ra, rb = full_reader(oc, ins.srcs[0], "b32"), full_reader(oc, ins.srcs[1], "b32")
    wr = oc.writer(ins.dsts[0], "b32")
    zero = hd.type(0)

    def run(st, idx):
        r = ufunc(ra(st, idx).view(hd), rb(st, idx).view(hd))
        if relu:
            r = np.maximum(r, zero)
        wr(st, idx, r.view(np.uint32))
    return quiet(run, ins)


# ---------------------------------------------------------------- multiply

_WIDE = {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}
_MUL_TYPES = ("u16", "u32", "u64", "s16", "s32", "s64")


def product(t: str, mode: str):
    """(fn(a, b), result type) computing the .lo/.hi/.wide product of two `t` values."""
    if mode == "lo":
        return np.multiply, t
    if mode == "wide":
        wt = _WIDE[t]
        wd = VALUE[wt]
        return (lambda a, b: a.astype(wd) * b.astype(wd)), wt
    bits = width(t)
    if bits == 64:
        return (mul_hi_s64 if is_signed(t) else mul_hi_u64), t
    wd = VALUE[_WIDE[t]]
    dt = VALUE[t]
    sh = wd.type(bits)
    return (lambda a, b: ((a.astype(wd) * b.astype(wd)) >> sh).astype(dt)), t


def _mode(ins, oc, modes=("lo", "hi", "wide")) -> str:
    found = [m for m in modes if ins.has(m)]
    if len(found) != 1:
        raise oc.unsupported(ins, "missing or conflicting .lo/.hi/.wide")
    return found[0]


@shared("mul")
def build_mul(ins, oc):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, _MUL_TYPES)
    mode = _mode(ins, oc)
    if mode == "wide" and width(t) == 64:
        raise oc.unsupported(ins, ".wide of a 64-bit type")
    fn, rt = product(t, mode)
    ra, rb = oc.reader(ins.srcs[0], t), oc.reader(ins.srcs[1], t)
    wr = oc.writer(ins.dsts[0], rt)

    def run(st, idx):
        wr(st, idx, fn(ra(st, idx), rb(st, idx)))
    return quiet(run, ins)


@shared("mad")
def build_mad(ins, oc):
    need(ins, oc, 1, 3)
    t = need_type(ins, oc, _MUL_TYPES)
    mode = _mode(ins, oc)
    if mode == "wide" and width(t) == 64:
        raise oc.unsupported(ins, ".wide of a 64-bit type")
    return _mad(ins, oc, t, mode, cin=False)


@semantic("madc")
def build_madc(ins, oc):
    need(ins, oc, 1, 3)
    t = need_type(ins, oc, ("u32", "s32", "u64", "s64"))
    return _mad(ins, oc, t, _mode(ins, oc, ("lo", "hi")), cin=True)


def _mad(ins, oc, t, mode, cin):
    fn, rt = product(t, mode)
    ra, rb, rc = oc.reader(ins.srcs[0], t), oc.reader(ins.srcs[1], t), oc.reader(ins.srcs[2], rt)
    wr = oc.writer(ins.dsts[0], rt)
    cc = ins.has("cc")
    risky = not any(isinstance(s, Reg) for s in ins.srcs[:2])  # a*b of two scalars
    if cc or cin:
        if t not in ("u32", "s32", "u64", "s64") or mode == "wide":
            raise oc.unsupported(ins, ".cc / carry-in form")
        u, bits = utype(t), width(t)
        udt = VALUE[u]
        rcu = oc.reader(ins.srcs[2], u)

        def run_cc(st, idx):
            p = fn(ra(st, idx), rb(st, idx)).astype(udt)
            d, c = add_carry(p, rcu(st, idx), st.carry[idx] if cin else None, bits)
            wr(st, idx, d)
            if cc:
                st.carry[idx] = c
        return quiet(run_cc, ins, risky=risky)
    if ins.has("sat"):
        if t != "s32" or mode != "hi":
            raise oc.unsupported(ins, ".sat (only mad.hi.sat.s32)")

        def run_sat(st, idx):
            r = fn(ra(st, idx), rb(st, idx)).astype(np.int64) + rc(st, idx)
            wr(st, idx, np.clip(r, -2**31, 2**31 - 1).astype(np.int32))
        return quiet(run_sat, ins, risky=risky)

    def run(st, idx):
        wr(st, idx, fn(ra(st, idx), rb(st, idx)) + rc(st, idx))
    return quiet(run, ins, risky=risky)


@semantic("mul24", "mad24")
def build_mul24(ins, oc):
    mad = ins.base == "mad24"
    need(ins, oc, 1, 3 if mad else 2)
    t = need_type(ins, oc, ("u32", "s32"))
    mode = _mode(ins, oc, ("lo", "hi"))
    sat = ins.has("sat")
    if sat and (not mad or t != "s32" or mode != "hi"):
        raise oc.unsupported(ins, ".sat (only mad24.hi.sat.s32)")
    ra, rb = oc.reader(ins.srcs[0], t), oc.reader(ins.srcs[1], t)
    rc = oc.reader(ins.srcs[2], t) if mad else None
    wr = oc.writer(ins.dsts[0], t)
    dt = VALUE[t]
    if t == "s32":
        eight = np.int32(8)

        def ext(x):  # sign-extend the low 24 bits into int64
            return ((x << eight) >> eight).astype(np.int64)
    else:
        m24 = np.uint32(0xFFFFFF)

        def ext(x):
            return (x & m24).astype(np.uint64)
    shift = 16 if mode == "hi" else 0

    def run(st, idx):
        p = ext(ra(st, idx)) * ext(rb(st, idx))
        if shift:
            p = p >> p.dtype.type(shift)
        if sat:
            r = p.astype(np.int32).astype(np.int64) + rc(st, idx)
            wr(st, idx, np.clip(r, -2**31, 2**31 - 1).astype(np.int32))
            return
        r = p.astype(dt)
        wr(st, idx, r + rc(st, idx) if mad else r)
    return quiet(run, ins, risky=True)


# ---------------------------------------------------------------- sad, div, rem, abs, neg, min, max


@semantic("sad")
def build_sad(ins, oc):
    need(ins, oc, 1, 3)
    t = need_type(ins, oc, _MUL_TYPES)
    u = utype(t)
    ra, rb = oc.reader(ins.srcs[0], t), oc.reader(ins.srcs[1], t)
    rc = oc.reader(ins.srcs[2], u)
    wr = oc.writer(ins.dsts[0], t)
    udt = VALUE[u]

    def run(st, idx):
        a, b = ra(st, idx), rb(st, idx)
        ua, ub = a.astype(udt), b.astype(udt)
        wr(st, idx, (rc(st, idx) + np.where(a < b, ub - ua, ua - ub)).astype(VALUE[t]))
    return quiet(run, ins, risky=True)


@shared("div")
def build_div(ins, oc):
    return _divrem(ins, oc, rem=False)


@semantic("rem")
def build_rem(ins, oc):
    return _divrem(ins, oc, rem=True)


def _divrem(ins, oc, rem: bool):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, _MUL_TYPES)
    u = utype(t)
    udt, dt = VALUE[u], VALUE[t]
    ra, rb = oc.reader(ins.srcs[0], t), oc.reader(ins.srcs[1], t)
    wr = oc.writer(ins.dsts[0], t)
    one, zero, ones = udt.type(1), udt.type(0), udt.type(all_ones(width(t)))
    signed = is_signed(t)

    def run(st, idx):
        a, b = ra(st, idx), rb(st, idx)
        ua, ub = a.astype(udt), b.astype(udt)
        if signed:  # work on magnitudes (truncating division, remainder takes a's sign)
            an, bn = a < 0, b < 0
            ua = np.where(an, zero - ua, ua)
            ub = np.where(bn, zero - ub, ub)
        bz = ub == zero
        ubs = np.where(bz, one, ub)
        if rem:
            r = ua % ubs
            if signed:
                r = np.where(an, zero - r, r)
            r = np.where(bz, a.astype(udt), r)
        else:
            r = ua // ubs
            if signed:
                r = np.where(an ^ bn, zero - r, r)
            r = np.where(bz, ones, r)
        wr(st, idx, r.astype(dt))
    return quiet(run, ins, risky=True)


@shared("abs", "neg")
def build_abs_neg(ins, oc):
    need(ins, oc, 1, 1)
    t = need_type(ins, oc, ("s16", "s32", "s64"))
    fn = np.abs if ins.base == "abs" else np.negative
    ra = oc.reader(ins.srcs[0], t)
    wr = oc.writer(ins.dsts[0], t)

    def run(st, idx):
        wr(st, idx, fn(ra(st, idx)))
    return quiet(run, ins)


@shared("min", "max")
def build_min_max(ins, oc):
    need(ins, oc, 1, 2)
    t = need_type(ins, oc, ("u16", "u32", "u64", "s16", "s32", "s64", "u16x2", "s16x2"))
    ufunc = np.minimum if ins.base == "min" else np.maximum
    relu = ins.has("relu")
    if relu and t not in ("s32", "s16x2"):
        raise oc.unsupported(ins, ".relu (only .s32 and .s16x2)")
    if t in X2_TYPES:
        return _halves(ins, oc, ufunc, t, relu=relu)
    ra, rb = oc.reader(ins.srcs[0], t), oc.reader(ins.srcs[1], t)
    wr = oc.writer(ins.dsts[0], t)
    if relu:
        zero = np.int32(0)

        def run_relu(st, idx):
            wr(st, idx, np.maximum(ufunc(ra(st, idx), rb(st, idx)), zero))
        return quiet(run_relu, ins)

    def run(st, idx):
        wr(st, idx, ufunc(ra(st, idx), rb(st, idx)))
    return quiet(run, ins)


# ---------------------------------------------------------------- mov


@semantic("mov")
def build_mov(ins, oc):
    need(ins, oc, 1, 1)
    dst, src = ins.dsts[0], ins.srcs[0]
    t = ins.type
    if t is None or t not in VALUE:
        raise oc.unsupported(ins, f"type .{t}")
    if isinstance(dst, Vec) or isinstance(src, Vec):
        return _mov_vector(ins, oc, t, dst, src)
    if isinstance(src, Symbol) and src.name == "WARP_SZ":  # PTX's predefined warp-size constant
        src = Imm(32 + src.offset)
    if t in FLOAT_TYPES:  # move bits, never values (keeps NaN payloads, -0)
        r = bits_reader(oc, src, t)
        wr = oc.writer(dst, btype(t))
    else:
        r = oc.reader(src, t)
        wr = oc.writer(dst, t)

    def run(st, idx):
        wr(st, idx, r(st, idx))
    return run


def _mov_vector(ins, oc, t, dst, src):
    if isinstance(dst, Vec) and isinstance(src, Vec):
        raise oc.unsupported(ins, "vector-to-vector move")
    bits = width(t)
    n = len(dst.elems if isinstance(dst, Vec) else src.elems)
    if bits % n or bits // n not in (8, 16, 32):
        raise oc.unsupported(ins, f"{n}-element vector of .{t}")
    eb = bits // n
    wdt, edt = VALUE[f"u{bits}"], VALUE[f"u{eb}"]
    if isinstance(src, Vec):  # pack: element 0 is the least significant (little-endian host)
        if any(isinstance(e, (Sink, Vec)) for e in src.elems):
            raise oc.unsupported(ins, "sink or nested vector in a packed source")
        readers = [bits_reader(oc, e, f"b{eb}") for e in src.elems]
        wr = oc.writer(dst, f"b{bits}")

        def run_pack(st, idx):
            v = np.empty((len(idx), n), dtype=edt)
            for k, r in enumerate(readers):
                v[:, k] = r(st, idx)
            wr(st, idx, v.view(wdt).reshape(-1))
        return run_pack
    r = full_reader(oc, src, f"b{bits}")
    writers = [(oc.writer(e, f"b{eb}"), k) for k, e in enumerate(dst.elems) if not isinstance(e, Sink)]

    def run_unpack(st, idx):
        v = r(st, idx).view(edt).reshape(-1, n)
        for w, k in writers:
            w(st, idx, v[:, k])
    return run_unpack


# the rest of the family registers itself on import
from tlpsim.functional.semantics import integer_bits, integer_cmp  # noqa: F401
