"""`cupy._util`: `memoize` (per-process memo of a function's results, cleared by
`clear_memo`), which `cupy.cuda.compiler.compile_with_cache` uses for its modules."""

from __future__ import annotations

import functools

_memos: list = []


def memoize(for_each_device: bool = False):
    """Cache a function's results by its arguments (and the current device when asked)."""

    def deco(fn):
        cache: dict = {}
        _memos.append(cache)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            if for_each_device:
                from tlpsim.host import Device

                key = (id(Device.current()), key)
            if key not in cache:
                cache[key] = fn(*args, **kwargs)
            return cache[key]

        return wrapper

    return deco


def clear_memo() -> None:
    """Forget every memoized result (modules are compiled again, from the PTX cache)."""
    for cache in _memos:
        cache.clear()
