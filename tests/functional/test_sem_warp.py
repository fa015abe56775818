"""Warp-level instruction semantics (shfl, vote, match, redux, activemask, elect)
against pure-Python per-warp references, on 3 warps with partially active lanes."""

from __future__ import annotations

import numpy as np
import pytest

from tlpsim.errors import UnsupportedPTX

N = 96  # three warps
DECLS = ".reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<8>; .reg .f32 %f<8>;"
FULL = 0xFFFFFFFF


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def partial_idx(seed: int = 0) -> np.ndarray:
    """Warp 0 fully active, warp 1 about half active, warp 2 a few lanes only."""
    r = rng(seed)
    w1 = np.flatnonzero(r.random(32) < 0.5) + 32
    w2 = np.array([64 + 1, 64 + 2, 64 + 7, 64 + 8, 64 + 30])
    return np.concatenate([np.arange(32), w1, w2]).astype(np.int64)


def executing_by_warp(idx) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for t in idx:
        out.setdefault(int(t) // 32, set()).add(int(t) % 32)
    return out


def participants(idx, mm) -> dict[int, list[int]]:
    """Reference participation: executing lanes of each warp ∩ membermask."""
    return {w: sorted(l for l in lanes if (mm >> l) & 1) for w, lanes in executing_by_warp(idx).items()}


def mask_of(lanes) -> int:
    m = 0
    for l in lanes:
        m |= 1 << l
    return m


# ---------------------------------------------------------------- shfl reference


def ref_shfl(mode: str, a: np.ndarray, b, c, idx) -> tuple[dict[int, int], dict[int, bool]]:
    """PTX pseudo-code, one thread at a time; sources read the register as it is."""
    d, p = {}, {}
    for t in idx:
        t = int(t)
        lane = t % 32
        bv = int(b[t] if np.ndim(b) else b) & 31
        cv = int(c[t] if np.ndim(c) else c)
        cval, seg = cv & 31, (cv >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg & 31)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bv
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bv
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bv
            ok = j <= max_lane
        else:
            j = min_lane | (bv & ~seg & 31)
            ok = j <= max_lane
        if not ok:
            j = lane
        d[t] = int(a[(t // 32) * 32 + j])
        p[t] = bool(ok)
    return d, p


def check_written(res: np.ndarray, before: np.ndarray, expect: dict[int, int | bool], idx) -> None:
    want = before.copy()
    for t, v in expect.items():
        want[t] = v
    np.testing.assert_array_equal(res, want)
    inactive = np.setdiff1d(np.arange(N), idx)
    np.testing.assert_array_equal(res[inactive], before[inactive])


# ---------------------------------------------------------------- shfl


MODES = ("up", "down", "bfly", "idx")
# c as nvcc emits it: width 32 (0x1f / 0), width 16 (0x101f / 0x1000), width 8 (0x181f / 0x1800),
# plus an irregular segment mask and a clamp below 31
C_VALUES = (0x1F, 0x0, 0x101F, 0x1000, 0x181F, 0x1800, 0x0C1F, 0x0807)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("c", C_VALUES)
def test_shfl_immediates_partial(run_ptx, mode, c):
    idx = partial_idx(1)
    a = rng(2).integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    p_before = np.zeros(N, dtype=bool)
    for b in (0, 1, 3, 5, 17, 36):
        res = run_ptx(f"shfl.sync.{mode}.b32 %r1|%p1, %r2, {b}, {c:#x}, 0xffffffff;",
                       {"%r2": a, "%r1": 7, "%p1": False}, decls=DECLS, n_threads=N, idx=idx)
        d, p = ref_shfl(mode, a, b, c, idx)
        check_written(res.reg("%r1"), np.full(N, 7, np.uint32), d, idx)
        check_written(res.reg("%p1"), p_before, p, idx)


@pytest.mark.parametrize("mode", MODES)
def test_shfl_register_operands_vary_per_thread(run_ptx, mode):
    idx = partial_idx(3)
    r = rng(4)
    a = r.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    b = r.integers(0, 64, N).astype(np.uint32)  # bits above 4 are ignored
    c = r.choice(np.array([0x1F, 0x101F, 0x181F, 0x0C1F, 0x1000, 0x0], dtype=np.uint32), N)
    res = run_ptx(f"shfl.sync.{mode}.b32 %r1|%p1, %r2, %r3, %r4, %r5;",
                   {"%r2": a, "%r3": b, "%r4": c, "%r5": FULL}, decls=DECLS, n_threads=N, idx=idx)
    d, p = ref_shfl(mode, a, b, c, idx)
    check_written(res.reg("%r1"), np.zeros(N, np.uint32), d, idx)
    check_written(res.reg("%p1"), np.zeros(N, bool), p, idx)


def test_shfl_bfly_reads_inactive_lanes_register_contents(run_ptx):
    # only even lanes execute; xor 1 sources odd lanes, which are inactive: the model
    # returns their current register contents (PTX: unpredictable)
    idx = np.arange(0, N, 2, dtype=np.int64)
    a = np.arange(N, dtype=np.uint32) * 10 + 1
    res = run_ptx("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 0x1f, 0x55555555;", {"%r2": a},
                   decls=DECLS, n_threads=N, idx=idx)
    np.testing.assert_array_equal(res.reg("%r1")[idx], a[idx + 1])
    assert res.reg("%p1")[idx].all()
    assert (res.reg("%r1")[idx + 1] == 0).all()


def test_shfl_without_predicate_and_aliasing_and_float(run_ptx):
    idx = partial_idx(5)
    f = rng(6).standard_normal(N).astype(np.float32)
    bits = f.view(np.uint32)
    res = run_ptx("shfl.sync.down.b32 %f1, %f1, 2, 0x181f, -1;", {"%f1": f}, decls=DECLS, n_threads=N, idx=idx)
    d, _ = ref_shfl("down", bits, 2, 0x181F, idx)
    check_written(res.reg("%f1"), bits, d, idx)


def test_shfl_idx_broadcast_width16_and_nonsync(run_ptx):
    a = np.arange(N, dtype=np.uint32) + 100
    for body in ("shfl.sync.idx.b32 %r1, %r2, 5, 0x101f, -1;", "shfl.idx.b32 %r1, %r2, 5, 0x101f;"):
        res = run_ptx(body, {"%r2": a}, decls=DECLS, n_threads=N)
        t = np.arange(N)
        np.testing.assert_array_equal(res.reg("%r1"), a[(t // 16) * 16 + 5])


@pytest.mark.parametrize("width", (8, 16, 32))
def test_shfl_cuda_width_semantics(run_ptx, width):
    """Independent of the PTX pseudo-code: the CUDA __shfl_*_sync(width) definitions,
    with c encoded as nvcc does ((32 - width) << 8, | 0x1f except for up)."""
    a = np.arange(N, dtype=np.uint32) * 3 + 1
    seg = (32 - width) << 8
    t = np.arange(N)
    lane, base = t % 32, t - t % width
    body = (f"shfl.sync.down.b32 %r1, %r2, 3, {seg | 0x1f}, -1;\n"
            f"shfl.sync.up.b32 %r3, %r2, 3, {seg}, -1;\n"
            f"shfl.sync.bfly.b32 %r4, %r2, 4, {seg | 0x1f}, -1;\n"
            f"shfl.sync.idx.b32 %r5, %r2, {width + 6}, {seg | 0x1f}, -1;")
    res = run_ptx(body, {"%r2": a}, decls=DECLS, n_threads=N)
    np.testing.assert_array_equal(res.reg("%r1"), a[np.where(lane % width + 3 < width, t + 3, t)])
    np.testing.assert_array_equal(res.reg("%r3"), a[np.where(lane % width >= 3, t - 3, t)])
    np.testing.assert_array_equal(res.reg("%r4"), a[t ^ 4])
    np.testing.assert_array_equal(res.reg("%r5"), a[base + (width + 6) % width])


def test_shfl_up_predicate_marks_lanes_with_a_source(run_ptx):
    # the PTX-manual scan step: up with c = 0 (lower bound of the segment is lane 0)
    a = np.arange(N, dtype=np.uint32)
    res = run_ptx("shfl.sync.up.b32 %r3|%p1, %r2, 4, 0x0, -1;", {"%r2": a}, decls=DECLS, n_threads=N)
    lane = np.arange(N) % 32
    np.testing.assert_array_equal(res.reg("%p1"), lane >= 4)
    np.testing.assert_array_equal(res.reg("%r3"), np.where(lane >= 4, a - 4, a))


# ---------------------------------------------------------------- vote


def ref_vote(mode, pred, idx, mm):
    parts = participants(idx, mm)
    out = {}
    for t in idx:
        t = int(t)
        vals = [bool(pred[(t // 32) * 32 + l]) for l in parts[t // 32]]
        if mode == "ballot":
            out[t] = mask_of(l for l, v in zip(parts[t // 32], vals) if v)
        elif mode == "all":
            out[t] = all(vals)
        elif mode == "any":
            out[t] = any(vals)
        else:
            out[t] = all(vals) or not any(vals)
    return out


@pytest.mark.parametrize("mode", ("ballot", "all", "any", "uni"))
@pytest.mark.parametrize("neg", (False, True))
@pytest.mark.parametrize("mm", (FULL, 0x0000FFFF, 0xA5A5A5A5))
def test_vote_sync(run_ptx, mode, neg, mm):
    idx = partial_idx(7)
    r = rng(8)
    pred = r.random(N) < 0.7
    pred[64:96] = True  # a warp where `all` may hold
    pred[32:64] = r.random(32) < 0.05
    ty, dst = ("b32", "%r1") if mode == "ballot" else ("pred", "%p1")
    src = "!%p2" if neg else "%p2"
    for mmop, regs in ((f"{mm:#x}", {}), ("%r5", {"%r5": mm})):
        res = run_ptx(f"vote.sync.{mode}.{ty} {dst}, {src}, {mmop};", {"%p2": pred, **regs},
                       decls=DECLS, n_threads=N, idx=idx)
        want = ref_vote(mode, ~pred if neg else pred, idx, mm)
        before = np.zeros(N, np.uint32 if mode == "ballot" else bool)
        check_written(res.reg(dst), before, want, idx)


def test_vote_nonsync_and_ballot_excludes_inactive(run_ptx):
    idx = partial_idx(9)
    pred = np.ones(N, dtype=bool)
    res = run_ptx("vote.ballot.b32 %r1, %p2;\nvote.all.pred %p1, !%p2;", {"%p2": pred},
                   decls=DECLS, n_threads=N, idx=idx)
    ex = executing_by_warp(idx)
    for t in idx:
        assert res.reg("%r1")[t] == mask_of(ex[t // 32])
        assert not res.reg("%p1")[t]


# ---------------------------------------------------------------- match


def ref_match(mode, a, idx, mm):
    parts = participants(idx, mm)
    d, p = {}, {}
    for t in idx:
        t = int(t)
        w = t // 32
        lanes = parts[w]
        if mode == "any":
            d[t] = mask_of(l for l in lanes if a[w * 32 + l] == a[t])
        else:
            same = len({int(a[w * 32 + l]) for l in lanes}) <= 1
            d[t] = mask_of(lanes) if same else 0
            p[t] = same
    return d, p


@pytest.mark.parametrize("ty", ("b32", "b64"))
@pytest.mark.parametrize("mm", (FULL, 0x00FF00FF))
def test_match_any(run_ptx, ty, mm):
    idx = partial_idx(10)
    r = rng(11)
    a = r.choice(np.array([3, 2**31 + 5, 2**33 + 3 if ty == "b64" else 9, 0]), N).astype(np.uint64)
    reg, dt = ("%r2", np.uint32) if ty == "b32" else ("%rd2", np.uint64)
    a = a.astype(dt)
    res = run_ptx(f"match.any.sync.{ty} %r1, {reg}, {mm:#x};", {reg: a}, decls=DECLS, n_threads=N, idx=idx)
    d, _ = ref_match("any", a, idx, mm)
    check_written(res.reg("%r1"), np.zeros(N, np.uint32), d, idx)


@pytest.mark.parametrize("ty", ("b32", "b64"))
def test_match_all(run_ptx, ty):
    idx = partial_idx(12)
    reg, dt = ("%r2", np.uint32) if ty == "b32" else ("%rd2", np.uint64)
    a = np.full(N, 42, dtype=dt)
    a[40] = 41  # warp 1 differs (if lane 8 executes) ...
    a[34] = 2**32 - 1 if ty == "b32" else 2**40  # ... and lane 2 too
    a[65] = 1  # warp 2 differs at an executing lane
    a[69] = 5  # ... and at an inactive one (no effect on the full-mask result)
    for mm in (FULL, 0xFFFFFFFC):
        res = run_ptx(f"match.all.sync.{ty} %r1|%p1, {reg}, %r5;", {reg: a, "%r5": mm},
                       decls=DECLS, n_threads=N, idx=idx)
        d, p = ref_match("all", a, idx, mm)
        check_written(res.reg("%r1"), np.zeros(N, np.uint32), d, idx)
        check_written(res.reg("%p1"), np.zeros(N, bool), p, idx)
    res = run_ptx(f"match.all.sync.{ty} %r1, {reg}, -1;", {reg: a}, decls=DECLS, n_threads=N, idx=idx)
    assert res.reg("%r1")[0] == FULL


# ---------------------------------------------------------------- redux


def ref_redux(op, ty, a, idx, mm):
    parts = participants(idx, mm)
    out = {}
    for t in idx:
        t = int(t)
        w = t // 32
        vals = [int(a[w * 32 + l]) for l in parts[w]]
        if op == "add":
            v = sum(vals) & FULL
        elif op == "min":
            v = min(vals)
        elif op == "max":
            v = max(vals)
        else:
            v = {"and": FULL, "or": 0, "xor": 0}[op]
            for x in vals:
                v = {"and": v & x, "or": v | x, "xor": v ^ x}[op]
        out[t] = v & FULL
    return out


@pytest.mark.parametrize("op,ty", [("add", "s32"), ("add", "u32"), ("min", "s32"), ("max", "s32"),
                                   ("min", "u32"), ("max", "u32"), ("and", "b32"), ("or", "b32"),
                                   ("xor", "b32")])
@pytest.mark.parametrize("mm", (FULL, 0x0F0F0FF0))
def test_redux_int(run_ptx, op, ty, mm):
    idx = partial_idx(13)
    r = rng(14)
    if ty == "s32":
        a = r.integers(-(2**31), 2**31, N).astype(np.int32)
        a[:8] = -5  # negatives on purpose
    else:
        a = r.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    res = run_ptx(f"redux.sync.{op}.{ty} %r1, %r2, {mm:#x};", {"%r2": a}, decls=DECLS, n_threads=N, idx=idx)
    want = ref_redux(op, ty, a, idx, mm)
    check_written(res.reg("%r1"), np.zeros(N, np.uint32), want, idx)


def test_redux_negative_s32_exact(run_ptx):
    a = np.zeros(N, dtype=np.int32)
    a[:32] = np.arange(32) - 40  # -40 .. -9
    a[32:64] = [7, -3] * 16
    res = run_ptx("redux.sync.min.s32 %r1, %r2, -1;\nredux.sync.max.s32 %r3, %r2, -1;\n"
                   "redux.sync.add.s32 %r4, %r2, -1;", {"%r2": a}, decls=DECLS, n_threads=N)
    assert list(res.reg("%r1", np.int32)[[0, 40]]) == [-40, -3]
    assert list(res.reg("%r3", np.int32)[[0, 40]]) == [-9, 7]
    assert list(res.reg("%r4", np.int32)[[0, 40]]) == [sum(range(-40, -8)), 64]


def test_redux_f32_min_max(run_ptx):
    f = np.zeros(N, dtype=np.float32)
    f[:32] = np.linspace(-3, 3, 32, dtype=np.float32)
    f[5] = np.nan
    f[32:64] = 0.0
    f[40] = -0.0
    f[64:96] = np.nan
    res = run_ptx("redux.sync.min.f32 %f1, %f2, -1;\nredux.sync.max.f32 %f3, %f2, -1;\n"
                   "redux.sync.max.abs.NaN.f32 %f4, %f2, -1;", {"%f2": f}, decls=DECLS, n_threads=N)
    lo, hi, ab = (res.reg(r, np.float32) for r in ("%f1", "%f3", "%f4"))
    assert lo[0] == -3 and hi[0] == 3
    assert np.signbit(lo[33]) and not np.signbit(hi[33])  # -0.0 < +0.0
    assert res.reg("%f1")[70] == 0x7FFFFFFF and res.reg("%f3")[70] == 0x7FFFFFFF  # all NaN
    assert res.reg("%f4")[0] == 0x7FFFFFFF  # .NaN: one NaN poisons the warp
    assert ab[33] == 0.0 and not np.signbit(ab[33])


# ---------------------------------------------------------------- activemask, elect


def test_activemask_and_guard(run_ptx):
    idx = partial_idx(15)
    p = np.zeros(N, dtype=bool)
    p[::3] = True
    res = run_ptx("activemask.b32 %r1;\n@%p2 activemask.b32 %r2;", {"%p2": p}, decls=DECLS, n_threads=N, idx=idx)
    ex = executing_by_warp(idx)
    for t in idx:
        w = int(t) // 32
        assert res.reg("%r1")[t] == mask_of(ex[w])
        if p[t]:
            assert res.reg("%r2")[t] == mask_of(l for l in ex[w] if p[w * 32 + l])
        else:
            assert res.reg("%r2")[t] == 0


def test_elect_sync(run_ptx):
    idx = partial_idx(16)
    res = run_ptx("elect.sync %r1|%p1, 0xfffffff0;\nelect.sync _|%p2, -1;", decls=DECLS, n_threads=N, idx=idx)
    parts = participants(idx, 0xFFFFFFF0)
    ex = executing_by_warp(idx)
    for t in idx:
        w, lane = int(t) // 32, int(t) % 32
        assert res.reg("%r1")[t] == parts[w][0]
        assert res.reg("%p1")[t] == (lane == parts[w][0])
        assert res.reg("%p2")[t] == (lane == min(ex[w]))


# ---------------------------------------------------------------- unsupported forms


@pytest.mark.parametrize("body", [
    "match.any.sync.b32 %r1|%p1, %r2, -1;",
    "redux.sync.add.f32 %f1, %f2, -1;",
    "redux.sync.and.s32 %r1, %r2, -1;",
    "vote.sync.ballot.pred %p1, %p2, -1;",
    "match.any.b32 %r1, %r2;",
    "shfl.sync.bfly.b32 %r1, %r2, 1, 0x1f;",
])
def test_unsupported(run_ptx, body):
    with pytest.raises(UnsupportedPTX):
        run_ptx(body, decls=DECLS, n_threads=32)


def test_partitioned_warp_reduces_votes_and_matches_per_membermask(run_ptx):
    """cooperative_groups::labeled_partition (NVIDIA's warpAggregatedAtomicsCG): the lanes of
    one warp run redux/vote/match at once with different membermasks, one per group; each
    group combines only its own members (the model used to combine the whole warp)."""
    lanes = np.arange(N)
    group = lanes % 3
    masks = np.zeros(N, dtype=np.uint32)
    for w in range(N // 32):
        for g in range(3):
            masks[w * 32:(w + 1) * 32][group[w * 32:(w + 1) * 32] == g] = mask_of(
                [lane for lane in range(32) if (w * 32 + lane) % 3 == g])
    a = (lanes * 10).astype(np.uint32)
    pred = (lanes % 2).astype(np.uint32)
    res = run_ptx("redux.sync.max.u32 %r1, %r2, %r3;\nredux.sync.add.u32 %r4, %r2, %r3;\n"
                  "setp.ne.u32 %p1, %r5, 0;\nvote.sync.ballot.b32 %r6, %p1, %r3;\n"
                  "match.any.sync.b32 %r7, %r5, %r3;",
                  {"%r2": a, "%r3": masks, "%r5": pred}, decls=DECLS, n_threads=N)
    for t in range(N):
        members = [u for u in range(N) if u // 32 == t // 32 and group[u] == group[t]]
        assert res.reg("%r1")[t] == max(a[members]), t
        assert res.reg("%r4")[t] == sum(a[members]), t
        assert res.reg("%r6")[t] == mask_of([u % 32 for u in members if pred[u]]), t
        assert res.reg("%r7")[t] == mask_of([u % 32 for u in members if pred[u] == pred[t]]), t
