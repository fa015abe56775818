"""The inputs of the GPGPU-Sim reference programs: every program draws them from
the same fixed-seed 32-bit LCG (`g = g * 1664525u + 1013904223u`), replicated
here bit-exactly in NumPy, with the programs' float helpers."""

from __future__ import annotations

import numpy as np

__all__ = ["LCG", "lcg_range"]

_A, _C, _M = 1664525, 1013904223, 0xFFFFFFFF


class LCG:
    """`g = g * 1664525u + 1013904223u` (32-bit), as in every reference program.
    `next()` is one draw; `draws(n)` the next n draws at once (jump-ahead doubling)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _M

    def next(self) -> int:
        self.state = (self.state * _A + _C) & _M
        return self.state

    def draws(self, n: int) -> np.ndarray:
        out = np.empty(n, dtype=np.uint64)
        if n == 0:
            return out.astype(np.uint32)
        out[0] = (self.state * _A + _C) & _M
        a, c, filled = _A, _C, 1  # (a, c) maps x_k to x_{k+filled}
        mask = np.uint64(_M)
        while filled < n:
            m = min(filled, n - filled)
            out[filled: filled + m] = (np.uint64(a) * out[:m] + np.uint64(c)) & mask
            a, c = (a * a) & _M, (a * c + c) & _M
            filled += m
        self.state = int(out[-1])
        return out.astype(np.uint32)

    # the programs' float helpers, bit-exact in float32 (x86-64 SSE, no FMA contraction)
    def unit(self, n: int) -> np.ndarray:          # lcg_unit(): [0, 1)
        return (self.draws(n) >> 8).astype(np.float32) * np.float32(1.0 / 16777216.0)

    def sym(self, n: int) -> np.ndarray:           # lcg_sym(): [-1, 1)
        return (self.draws(n) >> 8).astype(np.float32) * np.float32(2.0 / 16777216.0) - np.float32(1.0)


def lcg_range(u24: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """lcg_range(lo, hi) = lo + (hi - lo) * ((float)(r >> 8) * (1.0f / 16777216.0f))."""
    lo32, span = np.float32(lo), np.float32(hi) - np.float32(lo)
    return lo32 + span * (u24.astype(np.float32) * np.float32(1.0 / 16777216.0))
