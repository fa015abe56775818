"""Warp-level instructions: shfl, vote, match, redux, activemask, elect.

`exec(st, idx)` receives the executing threads of possibly many warps at once
(sorted; already filtered by the SIMT mask and the guard predicate), so the
lanes of idx that belong to one warp ARE the executing lanes of that warp.
Each builder groups idx by warp (`_Warps`) and combines values per warp with
`ufunc.reduceat` over the contiguous runs of idx, then gathers the per-warp
results back to the lanes: no Python loop over warps or lanes.

How membermask is used (the `.sync` forms)
------------------------------------------
PTX combines values over the "non-exited threads in membermask" and leaves the
result undefined for an executing thread that is not in membermask. The
functional model executes a warp's converged lanes together, so a lane in
membermask that is not executing now (it diverged) cannot be waited for: the
participants of an operation are the *executing* lanes of the warp whose own
lane bit is set in their membermask operand, i.e. executing lanes ∩ membermask.
Lanes of one warp may name different membermasks at once: the disjoint groups of
a partitioned warp (cooperative groups' `labeled_partition`, `tiled_partition`)
each reduce, vote or match over their own members. So the lanes are grouped by
(warp, membermask value), and every executing lane receives the result computed
over the participants of its group (for an executing lane outside its membermask,
where PTX is undefined, that is the same value its group-mates get). Non-participating lanes contribute nothing
(0 to a ballot or match mask, the identity to a reduction). With no membermask
(the deprecated non-sync `vote`/`shfl`) all executing lanes participate.

shfl does not use membermask at all: each thread computes its source lane j
from b and c (clamp in c[4:0], segment mask in c[12:8]) exactly as the PTX
pseudo-code does, and reads operand a *of lane j*. PTX leaves the value
unpredictable when lane j is inactive, predicated off or not in membermask;
the model then returns the current contents of lane j's register (what the
hardware effectively does). An out-of-range j yields the thread's own a and
p = False.
"""

from __future__ import annotations

import numpy as np

from tlpsim.frontend.ir import Imm, Instruction, Reg, Sink
from tlpsim.functional.semantics import semantic

_U32 = np.uint32
_FULL = 0xFFFFFFFF
_CANONICAL_NAN = np.uint32(0x7FFFFFFF)


class _Warps:
    """idx grouped by warp: `starts` of each warp's run in idx, `gid` (the run of
    each element), `lane` (int64) and `bit` (uint32 1 << lane)."""

    __slots__ = ("bit", "gid", "lane", "n", "order", "starts")

    def __init__(self, idx: np.ndarray) -> None:
        self.n = n = idx.size
        w = idx >> 5
        if n == 0 or w[0] == w[-1]:  # the common single-warp case
            self.starts = np.zeros(1, dtype=np.int64)
            self.gid = np.zeros(n, dtype=np.int64)
        else:
            brk = np.flatnonzero(w[1:] != w[:-1]) + 1
            self.starts = np.concatenate(([0], brk))
            flag = np.zeros(n, dtype=np.int64)
            flag[brk] = 1
            self.gid = np.cumsum(flag)
        self.lane = idx & 31
        self.bit = np.left_shift(_U32(1), self.lane.astype(_U32))
        self.order: np.ndarray | None = None  # set when the groups are not contiguous runs of idx

    def split_by(self, key: np.ndarray) -> None:
        """Refine the groups so that lanes of one warp with different `key` (their
        membermask operands) form separate groups."""
        order = np.lexsort((key, self.gid))
        sg, sk = self.gid[order], key[order]
        brk = np.flatnonzero((sg[1:] != sg[:-1]) | (sk[1:] != sk[:-1])) + 1
        flag = np.zeros(self.n, dtype=np.int64)
        flag[brk] = 1
        gid = np.empty(self.n, dtype=np.int64)
        gid[order] = np.cumsum(flag)
        self.order, self.starts, self.gid = order, np.concatenate(([0], brk)), gid

    def reduce(self, ufunc: np.ufunc, values: np.ndarray, dtype=None) -> np.ndarray:
        """Per-group reduction of `values` (one per element) broadcast back to the elements."""
        if self.order is not None:
            values = values[self.order]
        return ufunc.reduceat(values, self.starts, dtype=dtype)[self.gid]

    def mask(self, sel: np.ndarray | None) -> np.ndarray:
        """Per element: the 32-bit mask of the lanes of its warp where `sel` holds."""
        bits = self.bit if sel is None else np.where(sel, self.bit, _U32(0))
        return self.reduce(np.bitwise_or, bits)


def _full(v, n: int, dtype) -> np.ndarray:
    """An operand value (array or NumPy scalar) as an array of n elements."""
    arr = np.asarray(v, dtype=dtype)
    return arr if arr.ndim else np.full(n, arr, dtype=dtype)


def _membermask(ins: Instruction, oc, op):
    """Compile the membermask operand into `part(st, idx, warps)` returning the
    participating elements (bool array) or None when every executing lane participates."""
    if op is None:
        return lambda st, idx, ws: None
    if isinstance(op, Imm):
        value = int(op.value) & _FULL
        if value == _FULL:
            return lambda st, idx, ws: None
        mm = _U32(value)
        return lambda st, idx, ws: ((mm >> ws.lane.astype(_U32)) & _U32(1)).astype(bool)
    if not isinstance(op, Reg):
        raise oc.unsupported(ins, f"membermask operand {op}")
    read = oc.reader(op, "b32")

    def part(st, idx, ws):
        mm = np.asarray(read(st, idx), dtype=_U32)
        if mm.ndim and mm.size > 1 and (mm != mm[0]).any():
            ws.split_by(mm)  # partitioned warps: each membermask is its own group
        sel = ((mm >> ws.lane.astype(_U32)) & _U32(1)).astype(bool)
        return None if sel.all() else sel
    return part


def _mode(ins: Instruction, oc, modes: tuple[str, ...]) -> str:
    found = [m for m in ins.mods if m in modes]
    if len(found) != 1:
        raise oc.unsupported(ins, f"expected exactly one of .{' .'.join(modes)}")
    return found[0]


def _check_operands(ins: Instruction, oc, n_dsts: tuple[int, ...], n_srcs: int) -> None:
    if len(ins.dsts) not in n_dsts or len(ins.srcs) != n_srcs:
        raise oc.unsupported(ins, f"operand count ({len(ins.dsts)} destinations, {len(ins.srcs)} sources)")


# ---------------------------------------------------------------- shfl


@semantic("shfl")
def build_shfl(ins: Instruction, oc):
    """shfl[.sync].{up,down,bfly,idx}.b32 d[|p], a, b, c[, membermask]."""
    mode = _mode(ins, oc, ("up", "down", "bfly", "idx"))
    if ins.types != ("b32",):
        raise oc.unsupported(ins, "shfl type other than .b32")
    sync = ins.has("sync")
    _check_operands(ins, oc, (1, 2), 4 if sync else 3)
    read_a = oc.reader(ins.srcs[0], "b32")
    read_b = oc.reader(ins.srcs[1], "u32")
    read_c = oc.reader(ins.srcs[2], "u32")
    write_d = oc.writer(ins.dsts[0], "b32")
    write_p = oc.writer(ins.dsts[1], "pred") if len(ins.dsts) == 2 else None
    # membermask (srcs[3]) does not change the data movement: see the module docstring

    def run(st, idx):
        if idx.size == 0:
            return
        lane = idx & 31
        bval = np.asarray(read_b(st, idx)).astype(np.int64) & 31
        c = np.asarray(read_c(st, idx)).astype(np.int64)
        cval = c & 31
        seg = (c >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg & 31)
        if mode == "up":
            j = lane - bval
            pval = j >= max_lane
        elif mode == "down":
            j = lane + bval
            pval = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            pval = j <= max_lane
        else:
            j = (lane & seg) | (bval & ~seg & 31)
            pval = j <= max_lane
        src = idx + np.where(pval, j - lane, 0)
        d = read_a(st, src)  # every value is read before anything is written (d may be a)
        write_d(st, idx, d)
        if write_p is not None:
            write_p(st, idx, np.broadcast_to(pval, idx.shape))
    return run


# ---------------------------------------------------------------- vote


@semantic("vote")
def build_vote(ins: Instruction, oc):
    """vote[.sync].{all,any,uni}.pred d, {!}a[, membermask]; vote[.sync].ballot.b32 d, {!}a[, membermask]."""
    mode = _mode(ins, oc, ("all", "any", "uni", "ballot"))
    want = "b32" if mode == "ballot" else "pred"
    if ins.types != (want,):
        raise oc.unsupported(ins, f"vote.{mode} needs type .{want}")
    sync = ins.has("sync")
    _check_operands(ins, oc, (1,), 2 if sync else 1)
    read_a = oc.reader(ins.srcs[0], "pred")  # honours a `!` on the source predicate
    part_of = _membermask(ins, oc, ins.srcs[1] if sync else None)
    write_d = oc.writer(ins.dsts[0], want)

    def run(st, idx):
        if idx.size == 0:
            return
        ws = _Warps(idx)
        a = _full(read_a(st, idx), idx.size, bool)
        part = part_of(st, idx, ws)
        yes = a if part is None else a & part
        if mode == "ballot":
            write_d(st, idx, ws.mask(yes))
            return
        ones = ws.mask(yes) != 0
        no = ~a if part is None else ~a & part
        zeros = ws.mask(no) != 0
        if mode == "all":
            d = ~zeros
        elif mode == "any":
            d = ones
        else:
            d = ~(ones & zeros)
        write_d(st, idx, d)
    return run


# ---------------------------------------------------------------- match


@semantic("match")
def build_match(ins: Instruction, oc):
    """match.any.sync.{b32,b64} d, a, membermask; match.all.sync.{b32,b64} d[|p], a, membermask."""
    mode = _mode(ins, oc, ("any", "all"))
    if not ins.has("sync"):
        raise oc.unsupported(ins, "match without .sync")
    if ins.types not in (("b32",), ("b64",)):
        raise oc.unsupported(ins, "match type other than .b32/.b64")
    _check_operands(ins, oc, (1, 2) if mode == "all" else (1,), 2)
    vtype = ins.types[0]
    vdt = np.dtype(np.uint32 if vtype == "b32" else np.uint64)
    vmax = np.iinfo(vdt).max
    read_a = oc.reader(ins.srcs[0], vtype)
    part_of = _membermask(ins, oc, ins.srcs[1])
    write_d = oc.writer(ins.dsts[0], "b32")
    write_p = oc.writer(ins.dsts[1], "pred") if len(ins.dsts) == 2 else None

    def run(st, idx):
        if idx.size == 0:
            return
        ws = _Warps(idx)
        a = _full(read_a(st, idx), idx.size, vdt)
        part = part_of(st, idx, ws)
        if mode == "all":
            lo = a if part is None else np.where(part, a, vdt.type(vmax))
            hi = a if part is None else np.where(part, a, vdt.type(0))
            same = ws.reduce(np.maximum, hi) <= ws.reduce(np.minimum, lo)
            write_d(st, idx, np.where(same, ws.mask(part), _U32(0)))
            if write_p is not None:
                write_p(st, idx, same)
            return
        # match.any: sort by (warp, value); OR the lane bits over each run of equal keys
        order = np.lexsort((a, ws.gid))
        sa, sg = a[order], ws.gid[order]
        brk = np.flatnonzero((sa[1:] != sa[:-1]) | (sg[1:] != sg[:-1])) + 1
        starts = np.concatenate(([0], brk))
        run_of = np.zeros(idx.size, dtype=np.int64)
        run_of[brk] = 1
        run_of = np.cumsum(run_of)
        bits = ws.bit if part is None else np.where(part, ws.bit, _U32(0))
        d = np.empty(idx.size, dtype=_U32)
        d[order] = np.bitwise_or.reduceat(bits[order], starts)[run_of]
        write_d(st, idx, d)
    return run


# ---------------------------------------------------------------- redux


_REDUX_INT = {
    # op -> (ufunc, allowed types)
    "add": (np.add, ("u32", "s32")),
    "min": (np.minimum, ("u32", "s32")),
    "max": (np.maximum, ("u32", "s32")),
    "and": (np.bitwise_and, ("b32",)),
    "or": (np.bitwise_or, ("b32",)),
    "xor": (np.bitwise_xor, ("b32",)),
}


@semantic("redux")
def build_redux(ins: Instruction, oc):
    """redux.sync.{add,min,max}.{u32,s32}, redux.sync.{and,or,xor}.b32 and
    redux.sync.{min,max}{.abs}{.NaN}.f32: d, a, membermask."""
    op = _mode(ins, oc, tuple(_REDUX_INT))
    if not ins.has("sync"):
        raise oc.unsupported(ins, "redux without .sync")
    if len(ins.types) != 1:
        raise oc.unsupported(ins, "redux needs exactly one type")
    ty = ins.type
    _check_operands(ins, oc, (1,), 2)
    if ty == "f32":
        if op not in ("min", "max"):
            raise oc.unsupported(ins, f"redux.{op}.f32")
        return _build_redux_f32(ins, oc, op)
    ufunc, types = _REDUX_INT[op]
    if ty not in types or ins.has("abs") or ins.has("NaN"):
        raise oc.unsupported(ins, f"redux.{op} form")
    vdt = np.dtype(np.int32 if ty == "s32" else np.uint32)
    info = np.iinfo(vdt)
    identity = {"add": 0, "min": info.max, "max": info.min, "and": info.max if ty != "s32" else -1,
                "or": 0, "xor": 0}[op]
    identity = vdt.type(identity)
    read_a = oc.reader(ins.srcs[0], ty)
    part_of = _membermask(ins, oc, ins.srcs[1])
    write_d = oc.writer(ins.dsts[0], ty)

    def run(st, idx):
        if idx.size == 0:
            return
        ws = _Warps(idx)
        a = _full(read_a(st, idx), idx.size, vdt)
        part = part_of(st, idx, ws)
        if part is not None:
            a = np.where(part, a, identity)
        if op == "add":  # 32-bit wrap-around: sum the raw bits in 64 bits and truncate
            d = ws.reduce(np.add, a.view(np.uint32).astype(np.uint64)).astype(np.uint32).view(vdt)
        else:
            d = ws.reduce(ufunc, a)
        write_d(st, idx, d)
    return run


def _build_redux_f32(ins: Instruction, oc, op: str):
    """min/max over f32 with -0.0 < +0.0; NaN inputs are ignored (result canonical
    NaN only if all are NaN) unless .NaN, where any NaN gives canonical NaN."""
    use_abs = ins.has("abs")
    nan_wins = ins.has("NaN")
    read_a = oc.reader(ins.srcs[0], "f32")
    part_of = _membermask(ins, oc, ins.srcs[1])
    write_d = oc.writer(ins.dsts[0], "b32")
    ufunc = np.minimum if op == "min" else np.maximum
    identity = np.int32(np.iinfo(np.int32).max if op == "min" else np.iinfo(np.int32).min)

    def run(st, idx):
        if idx.size == 0:
            return
        ws = _Warps(idx)
        bits = _full(read_a(st, idx), idx.size, np.float32).view(np.uint32)
        if use_abs:
            bits = bits & _U32(0x7FFFFFFF)
        part = part_of(st, idx, ws)
        isnan = (bits & _U32(0x7FFFFFFF)) > _U32(0x7F800000)
        # a total-order integer key of the float (monotonic, -0.0 below +0.0)
        s = bits.view(np.int32)
        key = np.where(s < 0, s ^ np.int32(0x7FFFFFFF), s)
        use = ~isnan if part is None else ~isnan & part
        best = ws.reduce(ufunc, np.where(use, key, identity))
        out = np.where(best < 0, best ^ np.int32(0x7FFFFFFF), best).view(np.uint32)
        n_real = ws.reduce(np.add, use.astype(np.int64))
        nan_in = isnan if part is None else isnan & part
        n_nan = ws.reduce(np.add, nan_in.astype(np.int64))
        canon = (n_nan > 0) if nan_wins else (n_real == 0)
        write_d(st, idx, np.where(canon, _CANONICAL_NAN, out))
    return run


# ---------------------------------------------------------------- activemask, elect


@semantic("activemask")
def build_activemask(ins: Instruction, oc):
    """activemask.b32 d: the executing (active, guard-true) lanes of the warp."""
    if ins.types != ("b32",):
        raise oc.unsupported(ins, "activemask type other than .b32")
    _check_operands(ins, oc, (1,), 0)
    write_d = oc.writer(ins.dsts[0], "b32")

    def run(st, idx):
        if idx.size:
            write_d(st, idx, _Warps(idx).mask(None))
    return run


@semantic("elect")
def build_elect(ins: Instruction, oc):
    """elect.sync d|p, membermask: the leader is the lowest participating lane
    (deterministic, as PTX requires); d = its laneid, p = (lane == leader). A warp
    with no participating lane (undefined in PTX) elects no one: d = 0, p = False."""
    if not ins.has("sync") or ins.types:
        raise oc.unsupported(ins, "elect form other than elect.sync")
    _check_operands(ins, oc, (2,), 1)
    part_of = _membermask(ins, oc, ins.srcs[0])
    write_d = oc.writer(ins.dsts[0], "u32") if not isinstance(ins.dsts[0], Sink) else None
    write_p = oc.writer(ins.dsts[1], "pred")

    def run(st, idx):
        if idx.size == 0:
            return
        ws = _Warps(idx)
        part = part_of(st, idx, ws)
        lanes = ws.lane if part is None else np.where(part, ws.lane, 32)
        leader = ws.reduce(np.minimum, lanes)
        if write_d is not None:
            write_d(st, idx, np.where(leader < 32, leader, 0).astype(np.uint32))
        write_p(st, idx, ws.lane == leader)
    return run
