"""Soundness of the register analyses by execution: with every register poisoned
where the analyses say it is dead (RFV release flags, per-branch releases, RegLess
region boundaries), control-flow-heavy kernels must still compute the reference
result. Each kernel maps a thread index to an integer; the reference is the same
function in Python."""

import numpy as np
import pytest

import tlpsim


def _ref_loops(i):
    acc = 0
    for j in range(i % 9):
        if j % 3 == 2:
            continue
        acc += j * i
        if acc > 500:
            break
    return acc


def _ref_switch(i):
    k = i % 5
    return [i * 3, i ^ 0x55, -i, (i << 2) + 1, 7][k]


def _ref_nested(i):
    r = 0
    if i & 1:
        if i & 2:
            r = i * 7
        else:
            for t in range(i % 4):
                r += t + 1
    else:
        r = i // 3
        if r > 10:
            r -= 10
    return r


def _ref_while(i):
    x, steps = i + 1, 0
    while x != 1 and steps < 200:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


def _ref_early(i):
    if i % 7 == 0:
        return -1
    v = i
    for _ in range(3):
        v = v * 5 % 101
        if v < 10:
            return v
    return v + 1000


def _ref_carried(i):
    a, b = 1, i
    for k in range(i % 11):
        a, b = b, (a + b + k) % 1000
    return a * 1000 + b


def _ref_divloop(i):
    s = 0
    n = (i * 37) % 13
    k = 0
    while k < n:
        s += (k * k) ^ i
        k += 1 + (i & 1)
    return s


def _ref_select(i):
    v = 0
    for k in range(6):
        v = v + k if (i >> k) & 1 else v - 2 * k
    return v


def _ref_two_exits(i):
    for k in range(20):
        if (i + k) % 17 == 0:
            return k
        if (i * k) % 23 == 5:
            return 100 + k
    return -5


def _ref_deep(i):
    r = i
    for a in range(3):
        for b in range(3):
            if (a + b + i) % 4 == 0:
                r += a * b
            elif (a * b) % 3 == 1:
                r -= 1
            else:
                continue
    return r


def _ref_dev(i):
    def f(x):
        return x * x - 3 * x if x & 1 else x + 11

    return f(i) + f(i >> 1) + f(i % 7)


def _ref_sum_tail(i):
    # loop whose induction variable is dead after it, value carried into a tail
    t = 0
    for k in range(i % 6 + 1):
        t = t * 3 + k
    return t if i % 2 else -t


KERNELS = {
    "loops": ("""int acc = 0; for (int j = 0; j < i % 9; ++j) { if (j % 3 == 2) continue; acc += j * i;
                 if (acc > 500) break; } out[i] = acc;""", _ref_loops),
    "switch": ("""int k = i % 5, r; switch (k) { case 0: r = i * 3; break; case 1: r = i ^ 0x55; break;
                  case 2: r = -i; break; case 3: r = (i << 2) + 1; break; default: r = 7; } out[i] = r;""",
               _ref_switch),
    "nested": ("""int r = 0; if (i & 1) { if (i & 2) r = i * 7; else for (int t = 0; t < i % 4; ++t) r += t + 1; }
                  else { r = i / 3; if (r > 10) r -= 10; } out[i] = r;""", _ref_nested),
    "while": ("""int x = i + 1, steps = 0; while (x != 1 && steps < 200) { x = (x % 2 == 0) ? x / 2 : 3 * x + 1;
                 steps++; } out[i] = steps;""", _ref_while),
    "early": ("""if (i % 7 == 0) { out[i] = -1; return; } int v = i;
                 for (int t = 0; t < 3; ++t) { v = v * 5 % 101; if (v < 10) { out[i] = v; return; } }
                 out[i] = v + 1000;""", _ref_early),
    "carried": ("""int a = 1, b = i; for (int k = 0; k < i % 11; ++k) { int t = (a + b + k) % 1000; a = b; b = t; }
                   out[i] = a * 1000 + b;""", _ref_carried),
    "divloop": ("""int s = 0, m = (i * 37) % 13; for (int k = 0; k < m; k += 1 + (i & 1)) s += (k * k) ^ i;
                   out[i] = s;""", _ref_divloop),
    "select": ("""int v = 0; for (int k = 0; k < 6; ++k) v = ((i >> k) & 1) ? v + k : v - 2 * k; out[i] = v;""",
               _ref_select),
    "two_exits": ("""int r = -5; for (int k = 0; k < 20; ++k) { if ((i + k) % 17 == 0) { r = k; break; }
                     if ((i * k) % 23 == 5) { r = 100 + k; break; } } out[i] = r;""", _ref_two_exits),
    "deep": ("""int r = i; for (int a = 0; a < 3; ++a) for (int b = 0; b < 3; ++b) {
                if ((a + b + i) % 4 == 0) r += a * b; else if ((a * b) % 3 == 1) r -= 1; else continue; }
                out[i] = r;""", _ref_deep),
    "devfunc": ("""out[i] = f(i) + f(i >> 1) + f(i % 7);""", _ref_dev),
    "sum_tail": ("""int t = 0; for (int k = 0; k < i % 6 + 1; ++k) t = t * 3 + k; out[i] = (i % 2) ? t : -t;""",
                 _ref_sum_tail),
}

PRELUDE = """
__device__ __noinline__ int f(int x) { return (x & 1) ? x * x - 3 * x : x + 11; }
extern "C" __global__ void k(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    BODY
}
"""


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_poisoned_kernel_matches_reference(name):
    body, ref = KERNELS[name]
    n = 300
    with tlpsim.Device(poison_dead_registers=True, trace=False):
        k = tlpsim.RawKernel(PRELUDE.replace("BODY", body), "k")
        out = tlpsim.zeros(n, np.int32)
        k((3,), (128,), (out, np.int32(n)))
        got = out.get()
    np.testing.assert_array_equal(got, np.array([ref(i) for i in range(n)], dtype=np.int32))


def test_poisoning_really_overwrites_dead_registers():
    """A plan with work in it, and garbage actually reaching a dead register."""
    from tlpsim.frontend.loader import load_program
    from tlpsim.functional.poison import PoisonPlan

    prog = load_program(PRELUDE.replace("BODY", KERNELS["carried"][0]))
    plan = PoisonPlan(prog.module, prog.kernel("k"))
    assert plan.post and plan.pre
    assert any(len(v) > 0 for v in plan.post.values())
