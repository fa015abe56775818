"""Independent reference implementations of cuRAND's three pseudo-random generators,
written from the algorithms' definitions and cuRAND's documented seeding, for
comparing what tlpsim runs (the device API's own code, and tlpsim's host library)
with cuRAND's sequences:

* XORWOW (Marsaglia 2003, "Xorshift RNGs": xorshift on five 32-bit words plus a
  Weyl counter d += 362437); cuRAND salts the seed into the five words and d;
  subsequence k starts 2^67 * k draws in, reached here by powering the 160 x 160
  GF(2) transition matrix (d is unchanged: 362437 * 2^67 is 0 mod 2^32);
* Philox4x32-10 (Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2,
  3"): ten rounds of two 32x32 multiplies, key = seed, counter (0, 0, k) for
  subsequence k, four outputs per counter; checked against Random123's
  known-answer vector for counter 0, key 0;
* MRG32k3a (L'Ecuyer 1999): two order-3 recurrences mod m1, m2; cuRAND starts from
  12345s multiplied by the salted seed words; subsequence k starts 2^76 * k draws
  in, reached by powering the 3 x 3 transition matrices mod m.
"""

from __future__ import annotations

import numpy as np

M32 = 0xFFFFFFFF


def f32(x) -> float:
    return float(np.float32(x))


def uniform_from_bits(x: int) -> float:
    """curand_uniform of a 32-bit draw: x * 2^-32 + 2^-33 in float32 (never 0)."""
    return f32(np.float32(x) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33))


# ------------------------------------------------------------------ XORWOW


def _xorwow_linear(v: list[int]) -> list[int]:
    t = v[0] ^ (v[0] >> 2)
    new4 = (v[4] ^ (v[4] << 4) ^ t ^ (t << 1)) & M32
    return [v[1], v[2], v[3], v[4], new4]


def _pack(v: list[int]) -> int:
    return sum(w << (32 * k) for k, w in enumerate(v))


def _unpack(x: int) -> list[int]:
    return [(x >> (32 * k)) & M32 for k in range(5)]


def _apply(cols: list[int], x: int) -> int:
    out = 0
    k = 0
    while x:
        if x & 1:
            out ^= cols[k]
        x >>= 1
        k += 1
    return out


def _matmul(a: list[int], b: list[int]) -> list[int]:
    return [_apply(a, col) for col in b]


_JUMP_CACHE: dict[int, list[int]] = {}


def _xorwow_jump(log2_steps: int) -> list[int]:
    """Columns of T^(2^log2_steps), T the linear XORWOW step on the 160-bit state."""
    if log2_steps not in _JUMP_CACHE:
        m = [_pack(_xorwow_linear(_unpack(1 << j))) for j in range(160)]
        for _ in range(log2_steps):
            m = _matmul(m, m)
        _JUMP_CACHE[log2_steps] = m
    return _JUMP_CACHE[log2_steps]


class Xorwow:
    def __init__(self, seed: int, subsequence: int = 0) -> None:
        s0 = (seed & M32) ^ 0xAAD26B49
        s1 = ((seed >> 32) & M32) ^ 0xF7DCEFDD
        t0 = (1099087573 * s0) & M32
        t1 = (2591861531 * s1) & M32
        self.d = (6615241 + t1 + t0) & M32
        self.v = [(123456789 + t0) & M32, 362436069 ^ t0, (521288629 + t1) & M32, 88675123 ^ t1,
                  (5783321 + t0) & M32]
        if subsequence:
            jump = _xorwow_jump(67)
            x = _pack(self.v)
            for _ in range(subsequence):
                x = _apply(jump, x)
            self.v = _unpack(x)
        self.extra = None

    def next(self) -> int:
        self.v = _xorwow_linear(self.v)
        self.d = (self.d + 362437) & M32
        return (self.v[4] + self.d) & M32

    def uniform(self) -> float:
        return uniform_from_bits(self.next())

    def normal(self) -> float:
        return _box_muller_bits(self)


def _box_muller_bits(gen) -> float:
    """curand_normal for XORWOW/Philox: Box-Muller on two draws, the second value kept."""
    if gen.extra is not None:
        out, gen.extra = gen.extra, None
        return out
    x, y = gen.next(), gen.next()
    u = f32(np.float32(x) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33))
    two_pi = np.float32(2.3283064e-10) * np.float32(6.2831855)
    v = f32(np.float32(y) * two_pi + two_pi / np.float32(2))
    s = np.sqrt(np.float32(-2.0) * np.log(np.float32(u)))
    gen.extra = f32(np.cos(np.float32(v)) * s)
    return f32(np.sin(np.float32(v)) * s)


# ------------------------------------------------------------------ Philox4x32-10


def philox4x32_10(ctr: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, int, int, int]:
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0 = (k0 + 0x9E3779B9) & M32
            k1 = (k1 + 0xBB67AE85) & M32
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
    return c0, c1, c2, c3


# Random123's known-answer test: counter 0, key 0
assert philox4x32_10((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)


class Philox:
    def __init__(self, seed: int, subsequence: int = 0) -> None:
        self.key = (seed & M32, (seed >> 32) & M32)
        self.ctr = (subsequence << 64)  # the counter as one 128-bit integer: words x, y, z, w
        self.out: list[int] = []
        self.extra = None

    def next(self) -> int:
        if not self.out:
            words = tuple((self.ctr >> (32 * k)) & M32 for k in range(4))
            self.out = list(philox4x32_10(words, self.key))
            self.ctr = (self.ctr + 1) % (1 << 128)
        return self.out.pop(0)

    def uniform(self) -> float:
        return uniform_from_bits(self.next())

    def normal(self) -> float:
        return _box_muller_bits(self)


# ------------------------------------------------------------------ MRG32k3a

M1, M2 = 4294967087, 4294944443
A1 = [[0, 1, 0], [0, 0, 1], [M1 - 810728, 1403580, 0]]
A2 = [[0, 1, 0], [0, 0, 1], [M2 - 1370589, 0, 527612]]


def _mat3(a, b, m):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) % m for j in range(3)] for i in range(3)]


def _pow3(a, e, m):
    out = [[int(i == j) for j in range(3)] for i in range(3)]
    while e:
        if e & 1:
            out = _mat3(out, a, m)
        a = _mat3(a, a, m)
        e >>= 1
    return out


class Mrg32k3a:
    def __init__(self, seed: int, subsequence: int = 0) -> None:
        s1, s2 = [12345] * 3, [12345] * 3
        if seed:
            x1 = (seed & M32) ^ 0x55555555
            x2 = ((seed >> 32) & M32) ^ 0xAAAAAAAA
            s1 = [x1 * 12345 % M1, x2 * 12345 % M1, x1 * 12345 % M1]
            s2 = [x2 * 12345 % M2, x1 * 12345 % M2, x2 * 12345 % M2]
        if subsequence:
            j1, j2 = _pow3(A1, subsequence << 76, M1), _pow3(A2, subsequence << 76, M2)
            s1 = [sum(j1[i][k] * s1[k] for k in range(3)) % M1 for i in range(3)]
            s2 = [sum(j2[i][k] * s2[k] for k in range(3)) % M2 for i in range(3)]
        self.s1, self.s2 = s1, s2
        self.extra = None

    def raw(self) -> int:
        p1 = (1403580 * self.s1[1] - 810728 * self.s1[0]) % M1
        self.s1 = [self.s1[1], self.s1[2], p1]
        p2 = (527612 * self.s2[2] - 1370589 * self.s2[0]) % M2
        self.s2 = [self.s2[1], self.s2[2], p2]
        return p1 - p2 if p1 > p2 else p1 - p2 + M1

    def next(self) -> int:
        return int(self.raw() * 1.000000048662) & M32

    def uniform(self) -> float:
        return f32(self.raw() * 2.3283065498378288e-10)

    def normal(self) -> float:
        if self.extra is not None:
            out, self.extra = self.extra, None
            return out
        x = self.uniform()
        y = f32(np.float32(self.uniform()) * np.float32(6.2831855))
        s = np.sqrt(np.float32(-2.0) * np.log(np.float32(x)))
        self.extra = f32(np.cos(np.float32(y)) * s)
        return f32(np.sin(np.float32(y)) * s)


GENERATORS = {"xorwow": Xorwow, "philox": Philox, "mrg32k3a": Mrg32k3a}


# ------------------------------------------------------------------ the host API's output order

# generator threads of NVIDIA's host library (docs/exec.md, "cuRAND"): XORWOW's is documented;
# MRG32k3a's and Philox's are the counts tlpsim's libcurand uses, bounded below by the H200's output
HOST_THREADS = {"xorwow": 4096, "mrg32k3a": 16384, "philox": 4096}


def host_draw(name: str, seed: int, position: int):
    """The generator positioned so that its next draw (next() for XORWOW and Philox, raw()
    for MRG32k3a) is output position `position` of a host-API generator."""
    threads = HOST_THREADS[name]
    if name == "philox":
        block = position // 4
        gen = Philox(seed, block % threads)
        for _ in range(4 * (block // threads) + position % 4):
            gen.next()
        return gen
    gen = GENERATORS[name](seed, position % threads)
    for _ in range(position // threads):
        gen.next() if name != "mrg32k3a" else gen.raw()
    return gen


def host_normals(name: str, seed: int, offset: int, count: int) -> list[float]:
    """curandGenerateNormal(mean 0, stddev 1) of `count` values at generator offset `offset`:
    XORWOW and MRG32k3a thread t makes pairs t, t + threads, ... from subsequence
    (offset + t) mod threads, from draw (offset + t) // threads on, two draws per pair;
    Philox pairs two consecutive positions."""
    threads = HOST_THREADS[name]
    out: list[float] = []
    for pair in range(count // 2):
        if name == "philox":
            x = host_draw(name, seed, offset + 2 * pair).next()
            y = host_draw(name, seed, offset + 2 * pair + 1).next()
            out += _box_muller_of(x, y)
            continue
        t = pair % threads
        start = (offset + t) // threads + 2 * (pair // threads)
        gen = GENERATORS[name](seed, (offset + t) % threads)
        for _ in range(start):
            gen.next() if name != "mrg32k3a" else gen.raw()
        out += [gen.normal(), gen.normal()]
    return out


def _box_muller_of(x: int, y: int) -> list[float]:
    class _Two:
        extra = None

        def __init__(self) -> None:
            self.values = [x, y]

        def next(self) -> int:
            return self.values.pop(0)
    two = _Two()
    return [_box_muller_bits(two), _box_muller_bits(two)]
