"""`cupy.random`, backed by NumPy's legacy generator on the host and copied into the
simulated device's memory (not simulated; counted as host operations). Seeded:
the state starts from `TLPSIM_CUPY_SEED` (default 0), so a script draws the same
numbers on every run; `seed(s)` reseeds it as in CuPy. CuPy's `dtype=` is honoured."""

from __future__ import annotations

import os

import numpy as np

from tlpsim.array_ops import HOST_OPS
from tlpsim.device_array import asarray


class RandomState:
    """A seeded generator whose draws are device arrays."""

    def __init__(self, seed=None) -> None:
        self._rs = np.random.RandomState(seed)

    def seed(self, seed=None) -> None:
        self._rs.seed(seed)

    def _out(self, name: str, host, dtype=None):
        HOST_OPS[f"random.{name}"] += 1
        host = np.asarray(host)
        return asarray(host.astype(dtype) if dtype is not None else host)

    def random_sample(self, size=None, dtype=float):
        return self._out("random_sample", self._rs.random_sample(size), dtype)

    random = random_sample

    def rand(self, *size, dtype=float):
        return self._out("rand", self._rs.random_sample(size or None), dtype)

    def randn(self, *size, dtype=float):
        return self._out("randn", self._rs.standard_normal(size or None), dtype)

    def standard_normal(self, size=None, dtype=float):
        return self._out("standard_normal", self._rs.standard_normal(size), dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return self._out("uniform", self._rs.uniform(low, high, size), dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return self._out("normal", self._rs.normal(loc, scale, size), dtype)

    def randint(self, low, high=None, size=None, dtype=int):
        return self._out("randint", self._rs.randint(low, high, size, dtype=dtype))

    def random_integers(self, low, high=None, size=None):
        """Integers in [low, high] (both ends included), as CuPy's."""
        if high is None:
            low, high = 1, low
        return self._out("random_integers", self._rs.randint(low, high + 1, size))

    def choice(self, a, size=None, replace=True, p=None):
        a = a.get() if hasattr(a, "get") else a
        p = p.get() if hasattr(p, "get") else p
        return self._out("choice", self._rs.choice(a, size, replace, p))

    def permutation(self, x):
        x = x.get() if hasattr(x, "get") else x
        return self._out("permutation", self._rs.permutation(x))

    def shuffle(self, a) -> None:
        HOST_OPS["random.shuffle"] += 1
        h = a.get()
        self._rs.shuffle(h)
        a.set(h)


_state = RandomState(int(os.environ.get("TLPSIM_CUPY_SEED", "0")))


def get_random_state() -> RandomState:
    return _state


def seed(seed=None) -> None:
    _state.seed(seed)


def reset_states() -> None:
    _state.seed(int(os.environ.get("TLPSIM_CUPY_SEED", "0")))


random_sample = random = _state.random_sample
rand, randn, uniform, normal = _state.rand, _state.randn, _state.uniform, _state.normal
standard_normal, randint, random_integers = _state.standard_normal, _state.randint, _state.random_integers
choice, permutation, shuffle = _state.choice, _state.permutation, _state.shuffle


def default_rng(seed=None) -> RandomState:
    return RandomState(seed)
