"""atom/red semantics against a pure-Python reference executing the lanes one at a
time in lane order: every returned old value and the final memory must match."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tlpsim.errors import UnsupportedPTX
from tlpsim.frontend.ptx_parser import parse_ptx
from tlpsim.functional.layout import build_layout
from tlpsim.functional.memory import SHARED_WINDOW, DeviceMemory, MemoryFault
from tlpsim.functional.operands import OperandCompiler
from tlpsim.functional.semantics import load_all
from tlpsim.functional.state import VALUE, ChunkState, Geometry

DECLS = ".reg .b16 %rs<8>; .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<8>; .reg .f64 %fd<4>; .reg .pred %p<2>;"
# operand registers (b, c, d) by type width; the address is always %rd1
REGS = {2: ("%rs1", "%rs2", "%rs3"), 4: ("%r1", "%r2", "%r3"), 8: ("%rd2", "%rd3", "%rd4")}


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ serial reference


def step(op: str, t: str, old, b, c):
    dt = VALUE[t]
    if op == "add":
        if dt.kind == "f":
            return dt.type(old + b) if t != "f16" else np.float16(np.float32(old) + np.float32(b))
        return dt.type((int(old) + int(b)) % (1 << (8 * dt.itemsize)) if dt.kind == "u" else
                       np.array(int(old) + int(b)).astype(np.int64).astype(dt))
    if op == "min":
        return min(old, b)
    if op == "max":
        return max(old, b)
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b
    if op == "cas":
        return c if old == b else old
    if op == "inc":
        return dt.type(0) if old >= b else dt.type(int(old) + 1)
    if op == "dec":
        return b if (old == 0 or old > b) else dt.type(int(old) - 1)
    raise AssertionError(op)


def serial(op, t, memory: np.ndarray, slots, b, c):
    """Execute lanes in order on `memory` (a typed array, modified); returns old values."""
    olds = []
    for k, s in enumerate(slots):
        old = memory[s]
        olds.append(old)
        memory[s] = step(op, t, old, b[k], None if c is None else c[k])
    return np.array(olds, dtype=memory.dtype)


# ------------------------------------------------------------------ running one atomic


def atomic(run_ptx, op, t, slots, b, c=None, init=None, *, red=False, nslots=None, sink=False):
    """Run one `atom.global.op.t` (or red) with lane k on word slots[k]; returns (old, memory)."""
    dt = VALUE[t]
    size = dt.itemsize
    n = len(slots)
    nslots = nslots or (int(np.max(slots)) + 1)
    init = np.zeros(nslots, dtype=dt) if init is None else np.asarray(init, dtype=dt)
    mem = DeviceMemory()
    base = mem.alloc(nslots * size, "words")
    mem.write(base, init)
    rb, rc, rd = REGS[size]
    if red:
        body = f"red.global.{op}.{t} [%rd1], {rb};"
    else:
        dst = "_" if sink else rd
        body = f"atom.global.{op}.{t} {dst}, [%rd1], {rb}" + (f", {rc};" if op == "cas" else ";")
    regs = {"%rd1": base + size * np.asarray(slots, dtype=np.uint64), rb: np.asarray(b, dtype=dt)}
    if c is not None:
        regs[rc] = np.asarray(c, dtype=dt)
    out = run_ptx(body, regs, decls=DECLS, n_threads=n, memory=mem)
    assert np.array_equal(out.addresses[0], regs["%rd1"])
    final = mem.read(base, nslots * size).view(dt)
    return (None if red or sink else out.reg(rd, dt).copy()), final


def check(run_ptx, op, t, slots, b, c=None, init=None, **kw):
    dt = VALUE[t]
    nslots = int(np.max(slots)) + 1
    init = np.zeros(nslots, dtype=dt) if init is None else np.asarray(init, dtype=dt)
    ref_mem = init.copy()
    ref_old = serial(op, t, ref_mem, slots, np.asarray(b, dtype=dt), None if c is None else np.asarray(c, dtype=dt))
    old, final = atomic(run_ptx, op, t, slots, b, c, init, **kw)
    assert final.tobytes() == ref_mem.tobytes(), (op, t, final, ref_mem)
    if old is not None:
        assert old.tobytes() == ref_old.tobytes(), (op, t, old, ref_old)


def patterns(n: int, seed: int) -> dict[str, np.ndarray]:
    r = rng(seed)
    return {
        "one_address": np.zeros(n, dtype=np.int64),
        "duplicates": r.integers(0, 5, n),
        "skewed": np.where(r.random(n) < 0.5, 0, r.permutation(n)),
        "unique_ascending": np.arange(n),
        "unique_permuted": r.permutation(n),
    }


def operands(t: str, n: int, seed: int):
    r = rng(seed)
    dt = VALUE[t]
    if dt.kind == "f":
        return (r.standard_normal(n) * 100).astype(dt), (r.standard_normal(n) * 100).astype(dt)
    info = np.iinfo(dt)
    if dt.kind == "i":
        return r.integers(info.min, info.max, n, dtype=dt, endpoint=True), r.integers(-50, 50, n).astype(dt)
    return r.integers(0, info.max, n, dtype=dt, endpoint=True), r.integers(0, 50, n).astype(dt)


# ------------------------------------------------------------------ the reference, op by op

CASES = [("add", t) for t in ("u32", "s32", "u64", "f32", "f64")] + \
        [(op, t) for op in ("min", "max") for t in ("u32", "s32", "u64", "s64")] + \
        [(op, t) for op in ("and", "or", "xor", "exch", "cas") for t in ("b32", "b64")]


@pytest.mark.parametrize("op, t", CASES)
@pytest.mark.parametrize("pattern", ["one_address", "duplicates", "skewed", "unique_ascending", "unique_permuted"])
def test_serial_order(run_ptx, op, t, pattern):
    n = 64
    slots = patterns(n, 1)[pattern]
    b, c = operands(t, n, 2)
    init = operands(t, int(slots.max()) + 1, 3)[0]
    if op == "cas":  # make comparisons succeed often: compare against small values, memory small too
        dt = VALUE[t]
        b = rng(4).integers(0, 3, n).astype(dt)
        c = rng(5).integers(0, 3, n).astype(dt)
        init = rng(6).integers(0, 3, int(slots.max()) + 1).astype(dt)
    check(run_ptx, op, t, slots, b, c if op == "cas" else None, init)


@pytest.mark.parametrize("op", ["inc", "dec"])
@pytest.mark.parametrize("pattern", ["one_address", "duplicates", "skewed", "unique_permuted"])
@pytest.mark.parametrize("bounds", ["uniform", "mixed", "zero", "max"])
def test_inc_dec(run_ptx, op, pattern, bounds):
    n = 64
    slots = patterns(n, 7)[pattern]
    r = rng(8)
    b = {"uniform": np.full(n, 9), "mixed": r.integers(0, 12, n), "zero": np.zeros(n, np.int64),
         "max": np.full(n, 0xFFFFFFFF)}[bounds].astype(np.uint32)
    init = r.integers(0, 14, int(slots.max()) + 1).astype(np.uint32)  # some above the bound
    init[0] = 0xFFFFFFFF if bounds == "max" else init[0]
    check(run_ptx, op, "u32", slots, b, None, init)


def test_float_add_rounds_like_serial_float32(run_ptx):
    # a big value first then small ones: a tree or pairwise sum would round differently
    n = 32
    b = np.full(n, 1.0, dtype=np.float32)
    b[0] = 2.0 ** 24
    old, final = atomic(run_ptx, "add", "f32", np.zeros(n, np.int64), b)
    assert final[0] == np.float32(2.0 ** 24)  # each +1 is lost when executed serially
    assert np.all(old[1:] == np.float32(2.0 ** 24))
    check(run_ptx, "add", "f32", rng(3).integers(0, 3, 96), (rng(4).standard_normal(96) * 1e6).astype(np.float32))


def test_half_precision_adds(run_ptx):
    n = 64
    slots = patterns(n, 11)["duplicates"]
    check(run_ptx, "add", "f16", slots, (rng(1).standard_normal(n) * 10).astype(np.float16))
    # bf16 and f16x2: compare with a serial loop over the raw bits
    for t in ("bf16", "f16x2"):
        raw = rng(2).integers(0, 1 << 14, n).astype(VALUE[t]) | (0x3C00 if t == "f16x2" else 0x3F00)
        if t == "f16x2":
            raw = raw | (raw << np.uint32(16))
        old, final = atomic(run_ptx, "add", t, slots, raw)
        mem = np.zeros(int(slots.max()) + 1, dtype=VALUE[t])
        for k, s in enumerate(slots):
            assert old[k] == mem[s]
            if t == "bf16":
                f = np.float32((np.uint32(mem[s]) << 16).view(np.float32) + (np.uint32(raw[k]) << 16).view(np.float32))
                u = int(f.view(np.uint32))
                mem[s] = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
            else:
                mem[s] = (mem[s:s + 1].view(np.float16) + raw[k:k + 1].view(np.float16)).view(np.uint32)[0]
        assert np.array_equal(final, mem)


def test_cas_chains_and_spin_locks(run_ptx):
    n = 64
    # lane k swaps k -> k+1: every lane succeeds, in lane order
    old, final = atomic(run_ptx, "cas", "b32", np.zeros(n, np.int64), np.arange(n), np.arange(1, n + 1))
    assert np.array_equal(old, np.arange(n)) and final[0] == n
    # in reversed lane order only the last lane can succeed first: a chain that breaks
    check(run_ptx, "cas", "b32", np.zeros(n, np.int64), np.arange(n)[::-1], np.arange(1, n + 1)[::-1])
    # a spin lock: everyone tries 0 -> 1, exactly the first lane gets it
    old, final = atomic(run_ptx, "cas", "b32", np.zeros(n, np.int64), np.zeros(n), np.ones(n))
    assert old[0] == 0 and np.all(old[1:] == 1) and final[0] == 1
    # lanes swapping in the value already there do not change it
    check(run_ptx, "cas", "b64", np.zeros(n, np.int64), np.full(n, 5), np.full(n, 5), init=[5])


def test_cas_loop_emulating_float_add(run_ptx):
    """The atomicAdd-by-CAS idiom: retry the lanes whose swap failed until all succeed."""
    n = 64
    mem = DeviceMemory()
    base = mem.alloc(4, "x")
    vals = (rng(9).standard_normal(n)).astype(np.float32)
    pending = np.arange(n)
    rounds = 0
    while pending.size:
        cur = np.repeat(mem.read(base, 4).view(np.float32), n)  # what every lane last read
        out = run_ptx("atom.global.cas.b32 %r3, [%rd1], %r1, %r2;",
                      {"%rd1": np.uint64(base), "%r1": cur.view(np.uint32), "%r2": (cur + vals).view(np.uint32)},
                      decls=DECLS, n_threads=n, memory=mem, idx=pending)
        got = out.reg("%r3")[pending]
        pending = pending[got != cur[pending].view(np.uint32)]
        rounds += 1
    assert rounds <= n  # at least one success per round
    expect = np.float32(0)
    for v in vals:
        expect = np.float32(expect + v)
    assert mem.read(base, 4).view(np.float32)[0] == expect


@pytest.mark.parametrize("op, t", [("add", "u32"), ("add", "f32"), ("max", "s32"), ("min", "u64"),
                                   ("or", "b32"), ("inc", "u32"), ("dec", "u32")])
def test_red_and_sink_destination(run_ptx, op, t):
    n = 64
    slots = patterns(n, 12)["skewed"]
    b, _ = operands(t, n, 13)
    if op in ("inc", "dec"):
        b = np.full(n, 7, np.uint32)
    check(run_ptx, op, t, slots, b, red=True)
    check(run_ptx, op, t, slots, b, sink=True)


def test_immediate_operand_and_generic_shared_via_cvta(run_ptx):
    decls = DECLS + "\n.shared .align 8 .b8 sm[64];"
    n = 64
    slot = (np.arange(n) % 3).astype(np.uint64)
    body = "\n".join([
        "cvta.shared.u64 %rd2, sm;",
        "atom.add.u32 %r3, [%rd1], 1;",             # generic address into shared
        "atom.shared.add.u32 %r4, [%r5], 10;",
        "atom.shared.exch.b64 %rd4, [sm+32], %rd3;",
    ])
    out = run_ptx(body, {"%rd1": SHARED_WINDOW + 4 * slot, "%r5": (4 * slot).astype(np.uint32),
                         "%rd3": np.arange(n, dtype=np.uint64)}, decls=decls, n_threads=n)
    assert np.all(out.reg("%rd2") == SHARED_WINDOW)
    counts = np.zeros(3, np.int64)
    totals = np.bincount(slot.astype(np.int64))
    for k in range(n):
        s = k % 3
        assert out.reg("%r3")[k] == counts[s]
        assert out.reg("%r4")[k] == totals[s] + 10 * counts[s]
        counts[s] += 1
    assert np.array_equal(out.state.shared[:12].view(np.uint32), 11 * counts)
    assert np.array_equal(out.reg("%rd4")[1:], np.arange(n - 1)) and out.reg("%rd4")[0] == 0
    assert out.state.shared[32:40].view(np.uint64)[0] == n - 1
    assert np.array_equal(out.addresses[0], SHARED_WINDOW + 4 * slot)


def test_generic_atomics_mixing_global_and_shared(run_ptx):
    mem = DeviceMemory()
    base = mem.alloc(8, "g")
    n = 64
    tid = np.arange(n)
    addrs = np.where(tid % 2 == 0, base, SHARED_WINDOW + 4).astype(np.uint64)
    out = run_ptx("atom.add.u32 %r3, [%rd1], %r1;", {"%rd1": addrs, "%r1": tid.astype(np.uint32)},
                  decls=DECLS + "\n.shared .align 4 .b8 sm[16];", n_threads=n, memory=mem)
    for parity in (0, 1):
        lanes = tid[tid % 2 == parity]
        assert np.array_equal(out.reg("%r3")[lanes], np.concatenate([[0], np.cumsum(lanes)[:-1]]))
    assert mem.read(base, 4).view(np.uint32)[0] == tid[::2].sum()
    assert out.state.shared[4:8].view(np.uint32)[0] == tid[1::2].sum()


def test_shared_atomics_are_per_cta():
    """Two CTAs in one chunk hit the same shared offset: each has its own word."""
    text = (".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n" + DECLS +
            "\n.shared .align 4 .b8 sm[16];\natom.shared.add.u32 %r3, [sm+4], %r1;\nret;\n}\n")
    module = parse_ptx(text, "<test>")
    fn = module.kernels["k"]
    layout = build_layout(module, fn, {})
    oc = OperandCompiler(fn, layout, "<test>")
    geom = Geometry((2, 1, 1), (48, 1, 1))  # 48 threads: two warps per CTA, the second partial
    st = ChunkState(geom, 0, 2, fn.reg_types, DeviceMemory(), np.zeros(16, np.uint8), 16, 16, 16)
    st.regs["%r1"][:] = 1 + st.in_cta.astype(np.uint32)
    exe = load_all()["atom"](fn.instructions[0], oc)
    idx = np.flatnonzero(st.valid)
    rev = idx[::-1].copy()  # lane order is idx order: run them backwards
    exe(st, rev)
    words = st.shared.view(np.uint32)
    assert words[1] == words[4 + 1] == sum(range(1, 49))
    for cta in (0, 1):
        lanes = rev[st.thread_cta[rev] == cta]
        vals = 1 + st.in_cta[lanes]
        assert np.array_equal(st.regs["%r3"][lanes], np.concatenate([[0], np.cumsum(vals)[:-1]]))


def test_faults_report_the_lane(run_ptx):
    mem = DeviceMemory()
    base = mem.alloc(64, "g")
    addrs = np.full(32, base, dtype=np.uint64)
    addrs[13] = base + 64
    with pytest.raises(MemoryFault) as err:
        run_ptx("atom.global.add.u32 %r3, [%rd1], 1;", {"%rd1": addrs}, decls=DECLS, memory=mem)
    assert err.value.lane == 13
    addrs[13] = base + 2
    with pytest.raises(MemoryFault) as err:
        run_ptx("red.global.add.u32 [%rd1], 1;", {"%rd1": addrs}, decls=DECLS, memory=mem)
    assert err.value.lane == 13 and "misaligned" in err.value.reason


@pytest.mark.parametrize("body", [
    "atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4};",
    "atom.global.inc.u64 %rd2, [%rd1], %rd3;",
    "atom.global.min.f32 %f1, [%rd1], %f2;",
    "atom.global.b128.cas %rd2, [%rd1], %rd3, %rd4;",
    "atom.local.add.u32 %r1, [%rd1], %r2;",
    "red.global.cas.b32 [%rd1], %r1, %r2;",
])
def test_unsupported_forms(run_ptx, body):
    with pytest.raises(UnsupportedPTX):
        run_ptx(body, decls=DECLS)


def test_large_chunk_is_fast_and_exact(run_ptx):
    """4096 lanes, half on one hot word and the rest spread: the segmented path stays vectorised."""
    n = 4096
    r = rng(21)
    slots = np.where(r.random(n) < 0.5, 0, r.integers(1, 1500, n))
    b = r.standard_normal(n).astype(np.float32)
    t0 = time.perf_counter()
    old, final = atomic(run_ptx, "add", "f32", slots, b, nslots=1500)
    assert time.perf_counter() - t0 < 2.0
    ref_mem = np.zeros(1500, np.float32)
    ref_old = serial("add", "f32", ref_mem, slots, b, None)
    assert old.tobytes() == ref_old.tobytes() and final.tobytes() == ref_mem.tobytes()
