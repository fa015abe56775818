"""`cupyx` for the simulated GPU: pinned host buffers (plain NumPy arrays: the
simulator copies from any host memory) and `scatter_add`, executed on the host.
Other cupyx modules (cupyx.scipy, cupyx.jit, ...) are not provided."""

from __future__ import annotations

import numpy as np

from tlpsim.array_ops import HOST_OPS, host_value


def empty_pinned(shape, dtype=float, order="C") -> np.ndarray:
    return np.empty(shape, dtype, order)


def zeros_pinned(shape, dtype=float, order="C") -> np.ndarray:
    return np.zeros(shape, dtype, order)


def empty_like_pinned(a, dtype=None) -> np.ndarray:
    return np.empty(a.shape, dtype or a.dtype)


def zeros_like_pinned(a, dtype=None) -> np.ndarray:
    return np.zeros(a.shape, dtype or a.dtype)


def scatter_add(a, slices, value) -> None:
    """a[slices] += value, accumulating repeated indices (np.add.at), on the host."""
    HOST_OPS["scatter_add"] += 1
    h = a.get()
    idx = tuple(host_value(s) for s in slices) if isinstance(slices, tuple) else host_value(slices)
    np.add.at(h, idx, host_value(value))
    a.set(h)
